"""A context change the LLM asks for opens the preview modal (issue 28 item 1): the
offline model's `@slash clear` in the full screen under llm_context_changes = "ask";
its title names the agent whose LLM asks; apply clears, Esc refuses (nothing leaves)."""

from __future__ import annotations

from ikigai_tui.runtime import create_app, open_session
from ikigai_tui.tui.screens.preview import PreviewScreen

from .conftest import DB_LABEL, SIZE, idle, make_config, settle, type_text
from .test_memory_screens import _wait_for


def app_on(bench, tmp_path):
    return create_app(make_config(bench.db, tmp_path), db_label=DB_LABEL,
                      session_factory=lambda c: open_session(c, new_id=bench.new_id))


async def _ask_to_clear(app, pilot) -> PreviewScreen:
    await type_text(pilot, "hello")
    await pilot.press("enter")
    await _wait_for(pilot, lambda: not app.session.running(), "the first reply", timeout=30)
    await type_text(pilot, "@slash clear")
    await pilot.press("enter")
    await _wait_for(pilot, lambda: isinstance(app.screen, PreviewScreen), "the preview", timeout=30)
    return app.screen


async def test_apply_and_refuse(bench, tmp_path):
    app = app_on(bench, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        screen = await _ask_to_clear(app, pilot)
        label = app.session.tree.label(root)
        assert screen._title == f"The LLM of {label} asks to clear the context: untick what stays"
        await pilot.press("escape")  # refused
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end", timeout=30)
        await idle(pilot)
        replayer = await app.session.replayer(root)
        assert len(replayer.ctx) >= 2
        events = await app.session.store.events(root)
        assert "clear" not in [e.kind for e in events]
        assert [e.payload.get("refused") for e in events if e.kind == "command"] == ["the user"]
        await _ask_to_clear(app, pilot)
        await pilot.press("ctrl+s")  # applied as proposed
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end", timeout=30)
        await idle(pilot)
        events = await app.session.store.events(root)
        assert [e.kind for e in events].count("clear") == 1
        assert len((await app.session.replayer(root)).ctx) == 0
