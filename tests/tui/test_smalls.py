"""The smaller defects of issue 13 item 17, in the full screen: Help scrolls with
PageUp/PageDown and names only commands that exist, /exit works on a dead agent, the
palette finds /mark by its name, narrow panes wrap, a typed zero-width joiner is kept,
a child is not shown a tool call it never received, errors stay when switching agents
(each failed command above its error), and /check-mail shows each mail once."""

from __future__ import annotations

import re

from ikigai_tui.core.commands.registry import REGISTRY
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.tui.screens.help import HelpScreen

from .conftest import SIZE, agent_named, all_lines, events_of, idle, root_id, say, settle, type_text


def _lines(app) -> list[str]:
    return all_lines(app.panes.active.scrollback)


# ---- Help ------------------------------------------------------------------------------------


async def test_page_down_and_page_up_scroll_help(bench):
    app = bench.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        body = app.screen.query_one("#help-body")
        assert body.max_scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert body.scroll_y > 0
        down = body.scroll_y
        await pilot.press("pageup")
        await pilot.pause()
        assert body.scroll_y < down


def _named_commands(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w/])/([a-z][a-z-]*)", text))


async def test_help_names_only_commands_that_exist(bench):
    app = bench.app()
    known = {spec.name for spec in REGISTRY}
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        screen = app.screen
        text = "\n".join(str(widget.render()) for widget in screen.query("Static"))
        named = _named_commands(text)
        assert "undo" in named and named <= known, named - known
        await pilot.press("escape")
        await pilot.pause()
        for spec in REGISTRY:
            shown = await app.session.command(app.focused_agent, f"/help {spec.name}")
            assert _named_commands(" ".join(shown.lines)) <= known, spec.name
        undo = " ".join((await app.session.command(app.focused_agent, "/help undo")).lines)
        assert "recall" not in undo  # not built yet; /compact is (issue 15), and undoable
        assert "/compact" in undo


# ---- commands ----------------------------------------------------------------------------------


async def test_exit_works_on_a_dead_agent(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await session.command(root, "/fork --name kid")
        await session.command(root, "/kill kid")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.focus_agent(agent_named(app.session, "kid"))
        await idle(pilot)
        await type_text(pilot, "/exit")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert not app.is_running
        assert not any(line.startswith("Error") for line in _lines(app))


async def test_typing_mark_in_the_palette_starts_mark(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await type_text(pilot, "mark")
        await pilot.pause(0.5)  # the palette searches in a worker
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert app.prompt_input.text == "/mark "


async def test_a_failed_command_is_shown_above_its_error_and_both_stay(bench):
    async with bench.prep() as session:
        await say(session, root_id(session), "Hello.")
        await session.command(root_id(session), "/fork --name kid")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root, kid = root_id(app.session), agent_named(app.session, "kid")
        await type_text(pilot, "/clear NOPE")
        await pilot.press("enter")
        await idle(pilot)
        shown = [line.rstrip() for line in _lines(app) if line.strip()]
        at = shown.index("/clear NOPE")
        assert shown[at + 1].startswith("Error: ") and "NOPE" in shown[at + 1]
        await app.focus_agent(kid)
        await idle(pilot)
        assert not any("NOPE" in line for line in _lines(app))
        await app.focus_agent(root)
        await idle(pilot)
        shown = [line.rstrip() for line in _lines(app) if line.strip()]
        at = shown.index("/clear NOPE")  # still there, in its place: after the reply
        assert shown[at + 1].startswith("Error: ") and "NOPE" in shown[at + 1]
        assert any(line.startswith("Offline model here.") for line in shown[:at])


async def test_check_mail_shows_each_mail_once(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await session.command(root, "/fork --name kid")
        await session.command(agent_named(session, "kid"), "/send root Lunch at noon?")
        await session.wait_idle()
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, "/check-mail")
        await pilot.press("enter")
        await idle(pilot)
        text = "\n".join(_lines(app))
        assert text.count("Lunch at noon?") == 1
        assert "1 mail read into the context." in text


def test_run_prints_each_mail_once(tmp_path, ikigai):
    db = str(tmp_path / "m.db")
    assert ikigai("--db", db, "run", input="/fork --name kid\n").returncode == 0
    assert ikigai("--db", db, "run", "--agent", "kid", input="/send root Lunch?\n").returncode == 0
    done = ikigai("--db", db, "run", input="/check-mail\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Lunch?") == 1
    assert "Mail from kid" in done.stdout


# ---- narrow panes ---------------------------------------------------------------------------------


async def _four_panes(bench, size):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Please explain the wrapping of narrow panes in some detail.")
        for name in ("a", "b", "c"):
            await session.command(root, f"/fork --name {name}")
    return bench.app(), size


async def test_four_panes_on_80_columns_wrap_words_instead_of_clipping(bench):
    for size in ((80, 24), (66, 24)):
        app, size = await _four_panes(bench, size)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("f2", "f2", "f2")
            await idle(pilot)
            assert len(app.panes.all()) == 4
            for pane in app.panes.all():
                sb = pane.scrollback
                room = sb.scrollable_content_region.width
                assert room > 0
                assert all(strip.cell_length <= room for strip in sb._lines), (size, pane.agent_id)
                words = " ".join(strip.text for strip in sb._lines).split()
                assert "narrow" in words or "(this" in words
        bench.db.unlink()
        bench.new_id = type(bench)(bench.tmp_path).new_id


# ---- the input ------------------------------------------------------------------------------------


async def test_a_typed_zero_width_joiner_is_kept(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a", "\u200d", "b")
        assert app.prompt_input.text == "a\u200db"
        await pilot.press("enter")
        await idle(pilot)
        users = await events_of(app, app.focused_agent, "user")
        assert users[-1].payload["content"] == "a\u200db"


# ---- a child's inherited view ----------------------------------------------------------------------


async def test_a_child_is_not_shown_a_tool_call_it_never_received(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Start.")
        batch = WriteBatch()
        batch.add(root, "tool_call", {"call_id": "c1", "name": "slash",
                                      "arguments": '{"command": "fork"}'})
        [call] = await session.commit(batch)
        await session.command(root, "/fork --name kid", source="llm")  # mid-turn, as the LLM does
        batch = WriteBatch()
        batch.add(root, "tool_result", {"call_id": "c1", "call_event": call.id,
                                        "content": "Forked.", "is_error": False})
        await session.commit(batch)
        await session.wait_idle()
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.focus_agent(agent_named(app.session, "kid"))
        await idle(pilot)
        shown = "\n".join(_lines(app))
        assert "› Start." in shown
        assert "▸ slash" not in shown  # the parent's call, answered after the fork
        await app.focus_agent(root_id(app.session))
        await idle(pilot)
        assert "▸ slash" in "\n".join(_lines(app))  # the parent's own view has it
