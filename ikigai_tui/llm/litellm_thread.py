"""litellm's own thread: everything litellm and the provider SDKs do runs there, never on
the caller's event loop.

litellm's first request does seconds of synchronous work wherever it runs: importing
litellm (3-4 s), the OpenAI SDK's lazy import of its resources (~0.4 s), its default
tokenizer (built on first use now: lazy_encoding.py); and every request turns the
messages into the SDK's types. On the app's loop all
of that freezes the screen. So one daemon thread runs an event loop of its own, litellm's
requests run on it, and their events are relayed to the caller's loop (`relay`).
`preload(model)` warms it all up in that thread, ahead of the first request (and loads
the tokenizer the session counts the model's tokens with).

Work off the loop still freezes it when it holds the GIL for long: a thread is not
switched out inside one C call, nor during a garbage collection. The loads here run with
the collector paused (heap.collector_paused: full collections over litellm's growing
heap took 20-175 ms each).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from ikigai_tui.support.heap import collector_paused, freeze_imported

T = TypeVar("T")
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_preloaded: set[str] = set()
_rehearsed: set[str] = set()
_ready: set[str] = set()
_END = object()


def loop() -> asyncio.AbstractEventLoop:
    """litellm's event loop, running in its own daemon thread (started on first use)."""
    global _loop, _thread
    with _lock:
        if _loop is None:
            new = asyncio.new_event_loop()
            _thread = threading.Thread(target=new.run_forever, name="ikigai-litellm",
                                       daemon=True)
            _thread.start()
            _loop = new
        return _loop


def thread() -> threading.Thread | None:
    return _thread


def preload(model: str) -> concurrent.futures.Future:
    """Import litellm and what its first request to `model` would load (the SDK's
    resources, the session's tokenizer for the model), in litellm's thread. Returns at once."""
    return asyncio.run_coroutine_threadsafe(_preload(model), loop())


async def _preload(model: str) -> None:
    with collector_paused():  # no collection walks the growing heap meanwhile: see support/heap.py
        await _rehearse(model)
    freeze_imported()  # litellm's ~300,000 objects: out of the collector's walks
    _ready.add(model)


async def _rehearse(model: str) -> None:
    warm(model)
    if model not in _rehearsed:
        _rehearsed.add(model)
        try:  # a request answered by litellm itself: its first-call imports and set-up
            from ikigai_tui.llm.litellm_import import import_litellm

            response = await import_litellm().acompletion(
                model=model, messages=[{"role": "user", "content": "warm"}], stream=True,
                mock_response="ok", stream_options={"include_usage": True})
            # Its first chunk, then closed: at the end of a stream without usage (a mock
            # reports none) litellm counts the reply's tokens, which would build a
            # tokenizer (lazy_encoding.py) that a real reply, with usage, never needs.
            async for _chunk in response:
                break
            await response.aclose()
        except Exception:  # noqa: BLE001  (a warm-up: the real request reports what fails)
            pass


def warm(model: str) -> None:
    """Everything a first request to `model` loads; in litellm's thread (it blocks)."""
    from ikigai_tui.llm.litellm_import import import_litellm

    import_litellm()
    if model in _preloaded:
        return
    try:
        from ikigai_tui.core.tokens import encoders
        from ikigai_tui.core.tokens.counter import encoding_name

        with collector_paused():
            # The session's own counter of the model's tokens (a new message is counted
            # at the send): its encoder now (in the app, a worker process: encoders.py).
            name = encoding_name(model)
            if name is not None:
                encoders.encoder(name)
            import anyio._backends._asyncio  # noqa: F401  (litellm runs sync callbacks by anyio)
            import openai.resources  # noqa: F401  (the client's lazy `chat` resource imports it)
            from litellm.llms.custom_httpx.http_handler import get_ssl_configuration

            get_ssl_configuration()  # the TLS context its HTTP clients share (~25 ms; cached)
    except Exception:  # noqa: BLE001  (a warm-up: the real request reports what fails)
        pass
    _preloaded.add(model)


def preloaded(model: str) -> bool:
    """Whether a preload for `model` is done."""
    return model in _ready


async def relay(make: Callable[[], AsyncIterator[T]]) -> AsyncIterator[T]:
    """The items of the async iterator `make()`, run on litellm's loop, handed over to the
    caller's loop as they come; its exception is raised here. Closing or cancelling this
    iterator cancels the one in litellm's thread."""
    here = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[Any, BaseException | None]] = asyncio.Queue()

    def hand(item: Any, exc: BaseException | None = None) -> None:
        try:
            here.call_soon_threadsafe(queue.put_nowait, (item, exc))
        except RuntimeError:  # the caller's loop is closed: nobody is listening
            pass

    async def pump() -> None:
        try:
            async for item in make():
                hand(item)
        except asyncio.CancelledError:
            hand(_END, asyncio.CancelledError())
            raise
        except BaseException as exc:  # noqa: BLE001  (handed over, raised by the caller)
            hand(_END, exc)
        else:
            hand(_END)

    future = asyncio.run_coroutine_threadsafe(pump(), loop())
    try:
        while True:
            item, exc = await queue.get()
            if item is _END:
                if exc is not None:
                    raise exc
                return
            yield item
    finally:
        if not future.done():
            future.cancel()
