"""Mail arriving is a line in the recipient's scrollback (issue 27 item 2, its first
part): who sent it and its size, saying that /check-mail reads it into the context (its
text shows once, when read: tests/tui/test_smalls.py)."""

from __future__ import annotations

from .conftest import SIZE, agent_named, all_lines, root_id, say, send_text, settle


async def test_mail_shows_in_the_recipients_scrollback_live_and_after_a_restart(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Parent talk.")
        await session.command(root, "/fork --name kid --mail manual")  # mail waits for it
        await session.command(root, "/send kid please look at the tests\nsecond line")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        kid = agent_named(app.session, "kid")
        await send_text(pilot, "/send kid and the docs too")
        await pilot.press("alt+down")  # focus the first child
        await settle(pilot)
        assert app.focused_agent == kid
        lines = [line.strip() for line in all_lines(app.panes.active.scrollback)]
        text = " ".join(lines)
        mail = [part.split(" · /check-mail reads it")[0] for part in text.split("✉ ")[1:]]
        assert mail == [
            f"mail from root ({root[:6]}) · 2 lines, 36 characters",
            f"mail from root ({root[:6]}) · 1 line, 16 characters",
        ], lines
        assert "please look at the tests" not in text  # read into the context, then shown
