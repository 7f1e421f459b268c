"""Enter parses a command once (tui/submit.py): the parse that chooses the screen's way
(a dialog, a worker, the plain path) is the one the core runs, not parsed again."""

from __future__ import annotations

import pytest

from ikigai_tui.core.commands.parse import Registry

from .conftest import SIZE, conversation, idle, settle, type_text


@pytest.mark.parametrize("command,logged", [
    ("/mark here", "/mark here"),
    ("/pins", "/pins"),
    ("/recall zebra", "/recall zebra"),
    ("/forget --ids 1", "/forget --ids 1"),
])
async def test_enter_parses_a_command_once(bench, monkeypatch, command, logged):
    async with bench.prep() as session:
        await conversation(session, "zebra stripes", "more")
    parsed: list[str] = []
    parse = Registry.parse

    def counted(self, text: str):
        parsed.append(text)
        return parse(self, text)

    monkeypatch.setattr(Registry, "parse", counted)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        parsed.clear()
        await type_text(pilot, command)
        await pilot.press("enter")
        await idle(pilot)
        assert parsed == [command], parsed
        events = await app.session.store.events(app.focused_agent)
        assert [e.payload["text"] for e in events if e.kind == "command"][-1] == logged


async def test_a_bad_command_is_one_error_line_after_one_parse(bench, monkeypatch):
    parsed: list[str] = []
    parse = Registry.parse

    def counted(self, text: str):
        parsed.append(text)
        return parse(self, text)

    monkeypatch.setattr(Registry, "parse", counted)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        parsed.clear()
        await type_text(pilot, "/nosuch thing")
        await pilot.press("enter")
        await idle(pilot)
        assert parsed == ["/nosuch thing"]
        items = app.panes.active.scrollback.items
        assert items[-1].text.startswith("Error: unknown command '/nosuch'"), items[-1]
