"""Warming up what drawing needs, in threads, so the event loop never waits for it.

The first Markdown drawn imports rich's Markdown, markdown-it and linkify (~30-90 ms),
and the first code block of a language compiles its pygments lexer (~25-50 ms): done
on the event loop, each is a stall of the screen. `start_markdown` runs the imports and
one small drawing in a thread as the app starts (while the log opens); the app awaits
`markdown_ready` before its first frame, which is then drawn without them.
`preload_lexers`, after the first frame, compiles the lexers of the languages of the
code blocks in the loaded page the same way (a thread competing with the first frame's
drawing would slow it down; compiling lexers never used would hold the GIL for nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Iterable
from concurrent.futures import Future

from ikigai_tui.support.heap import freeze_imported

FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})[ \t]*([\w+#.-]+)", re.MULTILINE)
_markdown: Future | None = None
_lexers: set[str] = set()
_lexer_thread: threading.Thread | None = None


def start_markdown() -> Future:
    """The Markdown warm-up, started once (in a thread); its future."""
    global _markdown
    if _markdown is None:
        done: Future = Future()
        _markdown = done

        def run() -> None:
            try:
                _warm_markdown()
            except BaseException as exc:  # noqa: BLE001 - drawn on the loop then, as before
                done.set_exception(exc)
            else:
                done.set_result(None)

        threading.Thread(target=run, name="ikigai-preload-markdown", daemon=True).start()
    return _markdown


async def markdown_ready(timeout: float = 2.0) -> None:
    """Wait (without holding the loop) for the Markdown warm-up; never raises."""
    future = start_markdown()
    if future.done():
        return
    with contextlib.suppress(Exception, asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.wrap_future(future), timeout)


def _warm_markdown() -> None:
    import io

    from rich.console import Console

    from ikigai_tui.tui.links import markdown

    console = Console(file=io.StringIO(), width=60, color_system=None)
    sample = "Some *text* and a [link](https://example.com).\n\n- item\n"  # no code: lexers later
    console.render_lines(markdown(sample), console.options)
    freeze_imported()


def languages(texts: Iterable[str]) -> list[str]:
    """The languages named by the code fences of `texts`, in order of first appearance."""
    seen: dict[str, None] = {}
    for text in texts:
        if "```" in text or "~~~" in text:
            seen.update((m.group(1).lower(), None) for m in FENCE.finditer(text))
    return list(seen)


def lexers_busy() -> bool:
    """Whether lexers are being compiled (drawing code meanwhile would compile them again
    on the event loop, and share the GIL with the thread: a long stall)."""
    return _lexer_thread is not None and _lexer_thread.is_alive()


def preload_lexers(names: Iterable[str]) -> None:
    """Compile the lexers of `names` in a thread (pygments keeps them per class), each once."""
    global _lexer_thread
    wanted = [n for n in names if n not in _lexers]
    if not wanted:
        return
    _lexers.update(wanted)

    def run() -> None:
        from pygments.lexers import get_lexer_by_name

        for name in wanted:
            with contextlib.suppress(Exception):  # an unknown name: drawn as plain text
                get_lexer_by_name(name)

    _lexer_thread = threading.Thread(target=run, name="ikigai-preload-lexers", daemon=True)
    _lexer_thread.start()
