"""An exception inside the full screen is never swallowed: its traceback goes to the log
(support/diagnostics.py) and the user is told where. A failed background job (a worker) is a
notice naming the log, and the screen goes on; an error in the interface itself ends
the program, and the command line says in one line where the traceback is."""

from __future__ import annotations

from typing import Any

from ikigai_tui.support import diagnostics


def summary(error: BaseException) -> str:
    text = str(error).splitlines()[0][:200] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def handle(app: Any, error: Exception) -> bool:
    """True when the app goes on (the error was shown as a notice)."""
    from textual.worker import WorkerFailed

    failed = error.error if isinstance(error, WorkerFailed) else error
    path = diagnostics.exception("the full screen", failed)
    keep_going = app.worker_errors_as_notices
    if keep_going is None:
        keep_going = not app.is_headless  # under Pilot a failure fails the test
    if isinstance(error, WorkerFailed) and keep_going:
        app.notify(f"{summary(failed)}. The traceback is in {path}", title="Internal error",
                   severity="error", timeout=30, markup=False)
        return True
    app.crash = (summary(failed), path)
    return False
