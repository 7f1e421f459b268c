"""The terminal as the full-screen program uses it, and what happens when it goes away.

Textual's Linux driver (8.2.8) installs no SIGTERM or SIGHUP handler, so either signal
kills the program at once, losing the reply that is streaming. And when the terminal
closes, writes to it fail (EIO, EPIPE) and reads fail with EIO: the writer thread dies
and the queue behind it blocks the event loop once full, and the input thread asks the
app to panic, printing a traceback to a terminal that is not there.

So the app catches SIGTERM and SIGHUP (`StopOnSignal`, a mixin of the app), and its driver here:
- writes through `TolerantFile`, which drops what cannot be written once the terminal
  is gone instead of raising, so shutting down never waits for or crashes on it;
- treats a failed read as the terminal closing, not as a bug: it tells the app, which
  stops as on SIGHUP.
When the terminal is still there (a `kill -TERM` from elsewhere), shutting down restores
it as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import IO, Any

from textual.driver import Driver

# Signals that end the program; the streaming replies are kept first (see `stop_on_signal`).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class StopOnSignal:
    """A mixin of IkigaiApp: SIGTERM, SIGHUP or the terminal gone end the program after
    the replies streaming are kept."""

    _signal_loop: asyncio.AbstractEventLoop | None = None  # (Textual has a _loop)
    _stop_task: asyncio.Task | None = None

    def catch_stop_signals(self) -> None:
        self._signal_loop = loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self.stop_on_signal, signum)

    def get_driver_class(self):
        return driver_class(super().get_driver_class(), self._terminal_gone)  # type: ignore[misc]

    def stop_on_signal(self, signum: int) -> None:
        """SIGTERM, SIGHUP or the terminal gone: keep what each reply had received
        (committed, flagged interrupted), then leave with status 128 + the signal."""
        if self._stop_task is None:
            self._stop_task = asyncio.get_running_loop().create_task(self._stop(signum))

    async def _stop(self, signum: int) -> None:
        # The turns are cancelled here, before Textual's shutdown touches the terminal
        # (which may be gone): cancelling a turn commits its partial reply.
        session = self.session  # type: ignore[attr-defined]
        if session is not None:
            with contextlib.suppress(Exception):
                await session.close()
        self.exit(return_code=128 + signum)  # type: ignore[attr-defined]

    def _terminal_gone(self) -> None:
        """Called by the driver, from its threads, when the terminal cannot be read or written."""
        loop = self._signal_loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.stop_on_signal, signal.SIGHUP)


class TolerantFile:
    """A text file whose writes are dropped once one fails (the terminal is gone)."""

    def __init__(self, file: IO[str], on_gone: Callable[[], None]) -> None:
        self._file = file
        self._on_gone = on_gone
        self.gone = False

    def _lost(self) -> None:
        if not self.gone:
            self.gone = True
            self._on_gone()

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self._file.write(text)
            except (OSError, ValueError):  # EIO, EPIPE; ValueError: closed file
                self._lost()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except (OSError, ValueError):
                self._lost()

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def driver_class(base: type[Driver], on_gone: Callable[[], None]) -> type[Driver]:
    """`base` (Textual's driver for this platform) made to survive its terminal closing.

    `on_gone` is called (from any thread, at most once) when the terminal is found gone.
    Drivers other than Textual's Linux one are returned unchanged.
    """
    from textual.drivers.linux_driver import LinuxDriver

    if not issubclass(base, LinuxDriver):
        return base

    class HangupSafeDriver(base):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._file = TolerantFile(self._file, on_gone)

        def run_input_thread(self) -> None:
            try:
                super().run_input_thread()
            except OSError:  # EIO: the terminal closed under the read
                self._file.gone = True
                on_gone()

    return HangupSafeDriver
