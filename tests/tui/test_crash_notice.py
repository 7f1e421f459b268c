"""An exception inside the full screen is never swallowed (issue 16, item 6): a failed
worker is a notice naming the log, which holds its traceback, and the app goes on; an
error in the interface itself ends the app, naming the log too."""

from __future__ import annotations

import os
from pathlib import Path

from ikigai_tui.support import diagnostics
from ikigai_tui.runtime import create_app

from .conftest import SIZE, make_config, settle


def _log_file() -> Path:
    return Path(os.environ["HOME"]) / ".local" / "state" / "ikigai" / "log" / "ikigai.log"


async def test_a_failed_worker_is_a_notice_naming_the_log(tmp_path):
    diagnostics.stop()
    app = create_app(make_config(tmp_path / "w.db", tmp_path))
    app.worker_errors_as_notices = True

    async def broken() -> None:
        raise ValueError("a worker broke")

    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.run_worker(broken())
            for _ in range(50):
                await pilot.pause(0.02)
                if app._notifications:
                    break
            notes = list(app._notifications)
            assert len(notes) == 1
            assert notes[0].title == "Internal error" and notes[0].severity == "error"
            assert notes[0].message == (f"ValueError: a worker broke. The traceback is in "
                                        f"{_log_file()}")
            assert app.is_running and app.crash is None  # the screen goes on
            await pilot.press("f1")  # and still answers keys
            await settle(pilot)
    finally:
        diagnostics.stop()
    text = _log_file().read_text()
    assert "unexpected error in the full screen: ValueError" in text
    assert "Traceback (most recent call last)" in text and "a worker broke" in text


async def test_an_error_in_the_interface_ends_the_app_naming_the_log(tmp_path):
    diagnostics.stop()
    app = create_app(make_config(tmp_path / "e.db", tmp_path))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.call_later(lambda: 1 / 0)
            await pilot.pause(0.2)
    except ZeroDivisionError:
        pass  # Pilot re-raises it for the test frameworks: it was not swallowed
    finally:
        diagnostics.stop()
    assert app.crash is not None
    assert app.crash == ("ZeroDivisionError: division by zero", _log_file())
    assert "ZeroDivisionError" in _log_file().read_text()
