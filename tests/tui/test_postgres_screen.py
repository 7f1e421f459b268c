"""The full screen on a PostgreSQL log (issue 26, items 4 and 5): it works as on a file,
and a server lost mid-session is a line in the status bar while the input waits, the
message still written once the server is back; the title never holds the password."""

from __future__ import annotations

import asyncio
import threading
import time

from ikigai_tui.core.notices import StoreTrouble
from ikigai_tui.runtime import create_app, open_session

from .conftest import SIZE, all_lines, make_config, send_text, settle


def _status(app) -> str:
    return app.status_line.render().plain


async def _until(pilot, check, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        await pilot.pause(0.05)
    return check()


async def test_a_lost_server_is_a_status_line_and_nothing_is_lost(tmp_path, pg_url, pg_server):
    url = pg_url.replace("postgres@", "postgres:hunter22@")  # trust: any password passes
    config = make_config(url, tmp_path)
    app = create_app(config, session_factory=lambda c: open_session(c))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "hunter22" not in _status(app) and "postgres:***@" in _status(app)
        await send_text(pilot, "before the outage")
        assert await _until(pilot, lambda: any("You said: \"before the outage\"" in line
                                                for line in all_lines(app.panes.active.scrollback)))
        pg_server.stop()
        restart = threading.Timer(1.5, pg_server.start)
        restart.start()
        try:
            shown: list[str] = []  # the status line as each StoreTrouble left it
            app.session.subscribe(
                lambda n: shown.append(_status(app)) if isinstance(n, StoreTrouble) else None)
            await send_text(pilot, "during the outage")
            assert await _until(pilot, lambda: len(shown) >= 2), shown
            assert "lost the connection" in shown[0] and "hunter22" not in shown[0]
            assert "lost the connection" not in shown[-1] == _status(app)
            assert await _until(pilot, lambda: any(
                "You said: \"during the outage\"" in line
                for line in all_lines(app.panes.active.scrollback)))
        finally:
            restart.join()
        session = app.session
        texts = [e.payload.get("content") for e in await session.store.events(session.tree.root.id)
                 if e.kind == "user"]
        assert texts == ["before the outage", "during the outage"]
    await asyncio.sleep(0)
