"""Diagnostics: the log file under the user log folder (`ikigai paths` names it).

Always: an unexpected exception is written there with its traceback (the full screen
says where). With `--debug`: what the program did too, each provider request's size
and timings (time to the first piece, to the end), retries, usage, turns, commits by
kind and size, errors. Never an API key (anything that looks like one, and the values
of the environment's key variables, are replaced before a line is written) and never
message text, unless `--debug-content` asks for it.

The file is opened on its first line (no error, no `--debug`: no file), created 0600 in
a 0700 folder, and rotated at 5 MB (two old files kept).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ikigai_tui.support.folders import make_private_folders
from ikigai_tui.support.secrets import mask, secret_values

LOG_NAME = "ikigai.log"
MAX_BYTES = 5 * 1024 * 1024
log = logging.getLogger("ikigai")
_state: dict[str, Any] = {"debug": False, "content": False, "path": None}
REDACTED = "[redacted]"


def default_log_dir() -> Path:
    """Where `--debug` writes its logs (on Linux ~/.local/state/ikigai/log)."""
    import platformdirs

    return Path(platformdirs.user_log_dir("ikigai"))


def log_path() -> Path:
    return default_log_dir() / LOG_NAME


def redact(text: str, secrets: list[str] | None = None) -> str:
    """`text` with the environment's secrets and key-shaped strings "[redacted]"."""
    return mask(text, secrets, REDACTED)


class _Redacting(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
        self.secrets = secret_values()

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self.secrets)


class _PrivateFile(logging.Handler):
    """Rotating file handler opened on its first record, 0600 in a 0700 folder."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.inner: logging.Handler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.inner is None:
            import logging.handlers

            try:
                make_private_folders(self.path.parent)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                os.close(fd)
                self.inner = logging.handlers.RotatingFileHandler(
                    self.path, maxBytes=MAX_BYTES, backupCount=2, encoding="utf-8")
            except OSError:
                self.inner = logging.NullHandler()  # a log that cannot be written is no error
            self.inner.setFormatter(self.formatter)
        self.inner.emit(record)

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
        super().close()


def start(*, debug: bool = False, content: bool = False, command: str | None = None) -> None:
    """Set up the log for this process (errors always, the rest with debug)."""
    if log.handlers:
        return
    path = log_path()
    handler = _PrivateFile(path)
    handler.setFormatter(_Redacting())
    log.addHandler(handler)
    log.propagate = False
    log.disabled = False  # a library's logging.config.dictConfig may have disabled it
    log.setLevel(logging.DEBUG if debug else logging.ERROR)
    _state.update(debug=debug, content=debug and content, path=path)
    if debug:
        from ikigai_tui import __version__

        log.debug("start: ikigai %s, Python %s on %s, command %s, message text %s",
                  __version__, sys.version.split()[0], sys.platform, command or "(full screen)",
                  "logged" if content else "not logged")


def stop() -> None:
    for handler in list(log.handlers):
        handler.close()
        log.removeHandler(handler)
    _state.update(debug=False, content=False, path=None)


def debugging() -> bool:
    return bool(_state["debug"])


def exception(where: str, error: BaseException) -> Path:
    """Write an unexpected exception with its traceback; returns the log's path."""
    if not log.handlers:
        start()
    log.error("unexpected error in %s: %s", where, type(error).__name__,
              exc_info=(type(error), error, error.__traceback__))
    return _state["path"] or log_path()


# -- what the program does, with --debug ---------------------------------------------


def _size(messages: list[dict]) -> int:
    return sum(len(str(m.get("content") or "")) for m in messages)


class WatchedProvider:
    """A provider whose requests are logged: sizes, timings, failures."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        started = time.monotonic()
        first: float | None = None
        chars = calls = 0
        log.debug("request %s: %d messages, %d characters, system %d characters, %d tools, "
                  "tool_choice %s, max_tokens %s", request.model, len(request.messages),
                  _size(request.messages), len(request.system or ""), len(request.tools or ()),
                  request.tool_choice, request.max_tokens)
        if _state["content"]:
            log.debug("request %s messages: %r", request.model, request.messages)
        try:
            async for item in self._inner.stream(request):
                kind = type(item).__name__
                if kind == "TextDelta":
                    chars += len(item.text)
                    first = first if first is not None else time.monotonic()
                elif kind == "ToolCall":
                    calls += 1
                    first = first if first is not None else time.monotonic()
                elif kind == "Usage":
                    log.debug("usage %s: %d in, %d out", request.model, item.input_tokens,
                              item.output_tokens)
                elif kind == "Retrying":
                    log.info("retrying %s: attempt %d in %.1fs: %s", request.model,
                             item.attempt, item.delay, item.reason)
                yield item
        except BaseException as exc:
            elapsed = (time.monotonic() - started) * 1000
            if type(exc).__name__ in ("CancelledError", "GeneratorExit"):
                log.debug("request %s cancelled after %.0f ms (%d characters received)",
                          request.model, elapsed, chars)
            elif type(exc).__name__ == "TransientError":
                log.warning("request %s failed after %.0f ms, may be retried: %s",
                            request.model, elapsed, exc)
            else:
                log.error("request %s failed after %.0f ms: %s", request.model, elapsed,
                          type(exc).__name__, exc_info=True)
            raise
        ttft = f"{(first - started) * 1000:.0f} ms" if first is not None else "none"
        log.debug("reply %s: %.0f ms (first piece after %s), %d characters, %d tool calls",
                  request.model, (time.monotonic() - started) * 1000, ttft, chars, calls)


class WatchedProviders:
    """The provider factory, each provider it makes watched."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get(self, model: str) -> Any:
        return WatchedProvider(self._inner.get(model))


def watch(providers: Any) -> Any:
    return WatchedProviders(providers) if debugging() else providers


def on_notice(notice: Any) -> None:
    """A session listener: turns, errors, retries and commits, without their text."""
    kind = type(notice).__name__
    if kind == "EventsCommitted":
        if notice.foreign:
            return
        for event in notice.events:
            payload = event.payload if isinstance(event.payload, dict) else {}
            size = len(str(payload.get("content") or ""))
            log.debug("committed #%s %s of agent %s (%d characters)", event.id, event.kind,
                      event.agent_id[:8], size)
            if _state["content"] and size:
                log.debug("#%s content: %r", event.id, payload.get("content"))
    elif kind == "TurnFinished":
        log.debug("turn of agent %s ended: %s", notice.agent_id[:8],
                  "ok" if notice.ok else f"failed: {notice.error}")
    elif kind == "ErrorNotice":
        log.warning("error of agent %s: %s", notice.agent_id[:8], notice.message)
    elif kind == "RetryNotice":
        log.info("agent %s retries in %.1fs (attempt %d): %s", notice.agent_id[:8],
                 notice.delay, notice.attempt, notice.reason)
