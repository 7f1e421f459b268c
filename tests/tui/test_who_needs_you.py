"""Who needs you (issue 27 item 1, and of item 7 the dead hidden and a subtree collapsed):
the states in the tree (a permission question, a tool running, a reply streaming, a
failure, a finished turn not seen), Ctrl+N to the next agent that needs you, the F6
overview, the states after a restart, the tree's keys; snapshots of the tree in each
state and of the overview (SVGs in <root>/snapshots/test_who_needs_you/)."""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.notices import TurnFinished
from ikigai_tui.tui.agent_state import AgentState
from ikigai_tui.tui.screens.overview import OverviewScreen
from ikigai_tui.tui.screens.permission import PermissionScreen
from ikigai_tui.tui.ui_state import read_state, state_path
from tests.fakes.server import Reply
from tests.fakes.tools import Shell, install

from .conftest import SIZE, agent_named, idle, root_id, say, send_text, settle, type_text
from .test_memory_screens import _wait_for
from .test_permission_modal import app_on, fake, run  # noqa: F401 (the fixture)
from .test_tree_place import _row, _toasts

SMALL = (80, 24)


async def _overview(pilot, app) -> OverviewScreen:
    """F6, and the overview once it has read its rows."""
    await pilot.press("f6")
    await _wait_for(pilot, lambda: isinstance(app.screen, OverviewScreen)
                    and bool(app.screen.rows), "the overview")
    return app.screen


class Gated(Shell):
    """`run`, held until the test opens the gate (the tool is seen running)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def execute(self, context, arguments):
        await self.gate.wait()
        return await super().execute(context, arguments)


@pytest.fixture
def gated(monkeypatch) -> Gated:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    tool = Gated()
    install(monkeypatch, tool)
    return tool


async def test_the_tree_says_a_question_waits_then_the_tool_running(bench, tmp_path, fake, gated):
    fake.queue(run("make all"), Reply(text="Built."))
    app = app_on(bench, tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        await type_text(pilot, "Build it.")
        await pilot.press("enter")
        await _wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question",
                        timeout=90)
        await _wait_for(pilot, lambda: " asks " in _row(app, root), "the asks state")
        assert app.agent_states(app.session)[root] == AgentState("needs", "asks")
        await pilot.press("y")
        await _wait_for(pilot, lambda: "● root" in _row(app, root) and " run" in _row(app, root)
                        and " asks " not in _row(app, root), "the tool's name")
        assert app.agent_states(app.session)[root] == AgentState("working", "run")
        gated.gate.set()
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end")
        await idle(pilot)
        assert app.agent_states(app.session)[root].kind == "idle"
        assert _row(app, root).startswith("▶ ○ root") and " run" not in _row(app, root)


async def test_a_reply_streaming_then_a_failure_unseen(bench):
    async with bench.prep() as session:
        await session.command(root_id(session), "/fork --name kid")
    app = bench.app(delay=0.05)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        root, kid = app.focused_agent, agent_named(app.session, "kid")
        await type_text(pilot, "Tell me a long story please.")
        await pilot.press("enter")
        await _wait_for(pilot, lambda: " streaming" in _row(app, root), "streaming", timeout=30)
        await _wait_for(pilot, lambda: not app.session.running(), "the reply's end", timeout=60)
        await idle(pilot)
        assert " streaming" not in _row(app, root)
        app._on_notice(TurnFinished(kid, False, "the provider said no"))  # a background failure
        await idle(pilot)
        assert " failed " in _row(app, kid)
        assert app.agent_states(app.session)[kid] == AgentState("needs", "failed")


async def _children_done(bench, *names: str) -> None:
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Parent talk.")
        for name in names:
            await session.command(root, f"/fork --name {name}")


async def test_ctrl_n_goes_round_those_that_need_you_then_says_nobody(bench):
    await _children_done(bench, "quiet")
    app = bench.app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        for name in ("one", "two"):  # each answers unseen
            await send_text(pilot, f"/fork --name {name} look into plums")
        one, two = agent_named(app.session, "one"), agent_named(app.session, "two")
        assert " new " in _row(app, one) and " new " in _row(app, two)
        await pilot.press("ctrl+n")
        await idle(pilot)
        assert app.focused_agent == one and " new " not in _row(app, one)
        await pilot.press("ctrl+n")
        await idle(pilot)
        assert app.focused_agent == two
        await pilot.press("ctrl+n")
        await idle(pilot)
        assert app.focused_agent == two and "Nobody needs you" in _toasts(app)


async def test_f6_opens_the_overview_needs_you_first_and_enter_focuses(bench):
    await _children_done(bench, "quiet")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_text(pilot, "/fork --name helper look into plums")
        helper = agent_named(app.session, "helper")
        await _overview(pilot, app)
        rows = app.screen.rows
        assert [row.state.words for row in rows][:1] == ["needs you: new"]
        assert rows[0].id == helper and rows[0].last and rows[0].age
        assert {row.name.split(" (")[0] for row in rows} == {"root", "quiet", "helper"}
        assert rows[0].tokens  # what it spent so far
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, OverviewScreen) and app.focused_agent != helper
        await _overview(pilot, app)
        await pilot.press("enter")  # the first row: helper
        await idle(pilot)
        assert not isinstance(app.screen, OverviewScreen)
        assert app.focused_agent == helper and app.panes.active.agent_id == helper


async def test_the_states_and_the_hidden_dead_come_back_after_a_restart(bench, tmp_path):
    await _children_done(bench, "gone")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_text(pilot, "/kill gone")
        await send_text(pilot, "/fork --name helper look into plums")
        await send_text(pilot, "/fork --name broken")
        helper, broken = agent_named(app.session, "helper"), agent_named(app.session, "broken")
        app._on_notice(TurnFinished(broken, False, "the provider said no"))
        await idle(pilot)
        app.agent_tree.focus()
        await pilot.press("d")  # the dead hidden
        await idle(pilot)
        assert "(1 dead hidden)" in [line.text.strip() for line in _lines(app)]
    assert read_state(state_path(tmp_path / "no-config.toml"))["tree_hide_dead"] is True

    again = bench.app()
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert " new " in _row(again, helper) and " failed " in _row(again, broken)
        assert "(1 dead hidden)" in [line.text.strip() for line in _lines(again)]
        await _overview(pilot, again)
        words = {row.id: row.state.words for row in again.screen.rows}
        assert words[helper] == "needs you: new" and words[broken] == "needs you: failed"
        await pilot.press("enter")
        await idle(pilot)
    # Looked at: no longer news at the next start.
    third = bench.app()
    async with third.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert " new " not in _row(third, helper) and " failed " in _row(third, broken)


def _lines(app):
    tree = app.agent_tree
    return [tree.render_line(y) for y in range(tree.size.height)]


async def test_space_collapses_a_subtree_and_d_shows_the_dead_again(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await session.command(root, "/fork --name kid")
        kid = agent_named(session, "kid")
        await session.command(kid, "/fork --name grandkid")
        await session.command(root, "/fork --name old")
        await session.command(root, "/kill old")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        kid, grandkid = agent_named(session, "kid"), agent_named(session, "grandkid")
        app.unseen.add(grandkid, "finished its turn")  # it needs you, under kid
        app.schedule_refresh()
        await pilot.press("ctrl+t", "down")  # the tree, its cursor on kid
        await idle(pilot)
        assert app.agent_tree.cursor_node.data == kid
        await pilot.press("space")
        await idle(pilot)
        assert app.agent_tree.node_for(grandkid) is None
        assert " kid +1! " in _row(app, kid), _row(app, kid)
        await pilot.press("space")
        await idle(pilot)
        assert app.agent_tree.node_for(grandkid) is not None and "+1" not in _row(app, kid)
        old = agent_named(session, "old")
        await pilot.press("d")
        await idle(pilot)
        assert app.agent_tree.node_for(old) is None
        await pilot.press("d")
        await idle(pilot)
        assert app.agent_tree.node_for(old) is not None
        assert app.focused is app.agent_tree  # the keys stayed in the tree


# ---- snapshots ----------------------------------------------------------------------------


async def _many(session) -> None:
    root = root_id(session)
    await say(session, root, "Plan the work.")
    for name in ("asker", "reviewer", "failer", "finisher", "streamer", "tooler", "matcher",
                 "sleeper", "dead", "parent"):
        await session.command(root, f"/fork --name {name}")
    await session.command(agent_named(session, "parent"), "/fork --name child")
    await session.command(agent_named(session, "parent"), "/fork --name waiting")
    await session.command(root, "/kill dead")


def _every_state(app) -> None:
    """Each state at once (the facts set by hand: each is tested live above)."""
    session = app.session
    named = {agent.name: agent.id for agent in session.tree}
    doings = app.doings
    doings.asks[named["asker"]] = 1
    doings.reviews[named["reviewer"]] = 1
    doings.matching.add(named["matcher"])
    app.unseen.news[named["failer"]] = "failed: rate limited"
    app.unseen.news[named["finisher"]] = "finished its turn"
    app.unseen.news[named["waiting"]] = "finished its turn"
    for name, reply in (("streamer", ["Once"]), ("tooler", None)):
        turn = session.tree[named[name]].turn
        turn.phase, turn.reply = "running", reply
    doings.tools[named["tooler"]] = "bash"


def _calm(app) -> None:
    """The hand-set turns end, so that the app closes as it does after a real one."""
    for agent in app.session.tree:
        agent.turn.phase, agent.turn.reply = None, None


async def _every_state_ended(pilot, app) -> None:
    """Every state, with the hand-set turns over (what the pictures show needs no turn)."""
    await settle(pilot)
    _every_state(app)
    _calm(app)


@pytest.mark.parametrize("size", [SIZE, SMALL], ids=["120x40", "80x24"])
def test_snapshot_the_tree_in_every_state(bench, snap_compare, size):
    bench.prepare(_many)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        _every_state(app)
        app.schedule_refresh()
        await pilot.pause(0.2)

    try:
        assert snap_compare(app, terminal_size=size, run_before=run_before)
    finally:
        if app.session is not None:
            _calm(app)


def test_snapshot_the_tree_with_the_dead_hidden_and_a_subtree_collapsed(bench, snap_compare):
    bench.prepare(_many)
    app = bench.app()

    async def run_before(pilot):
        await _every_state_ended(pilot, app)
        app.agent_tree.hide_dead = True
        app.agent_tree.collapsed.add(agent_named(app.session, "parent"))
        app.schedule_refresh()
        await idle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_the_overview(bench, snap_compare, monkeypatch):
    from ikigai_tui.tui.screens import overview

    monkeypatch.setattr(overview, "age_text", lambda seconds: "" if seconds is None else "1m")
    bench.prepare(_many)
    app = bench.app()

    async def run_before(pilot):
        await _every_state_ended(pilot, app)
        await _overview(pilot, app)
        assert app.screen.rows[0].state.needs_you

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_help_lists_the_keys_of_who_needs_you(bench):
    from ikigai_tui.tui.screens.help import HelpKeys

    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await idle(pilot)
        says = dict(app.screen.query_one(HelpKeys)._key_rows)
        assert "next agent that needs you" in says["Ctrl+N"]
        assert "overview" in says["F6"]
        assert "dead" in says["D"] and "subtree" in says["Space"]


async def test_news_kept_for_an_agent_shown_at_the_start_or_gone_is_dropped(bench, tmp_path):
    from ikigai_tui.tui.ui_state import write_state

    await _children_done(bench, "kid")
    app = bench.app()
    path = state_path(tmp_path / "no-config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root, kid = app.focused_agent, agent_named(app.session, "kid")
    write_state(path, news={str(bench.db.resolve()): {root: "finished its turn", kid: "got mail",
                                                      "f" * 32: "finished its turn"}})
    again = bench.app()
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert again.unseen.news == {kid: "got mail"}  # root is on screen, the other gone
        assert " new " in _row(again, kid) and " new " not in _row(again, root)
    assert read_state(path)["news"] == {str(bench.db.resolve()): {kid: "got mail"}}


async def test_a_background_agents_question_is_told_on_the_desktop(bench, tmp_path, fake, gated):
    fake.queue(run("make all"), Reply(text="Built."))
    app = app_on(bench, tmp_path, fake)
    told: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app._notice_desktop = told.append  # what would be written to the terminal
        await type_text(pilot, "/fork --name bg build it")
        await pilot.press("enter")
        await _wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question",
                        timeout=90)
        bg = agent_named(app.session, "bg")
        assert told == [f"bg ({bg[:6]}) asks permission"]
        gated.gate.set()
        await pilot.press("y")
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end")
        await idle(pilot)
        assert told[1:] == [f"bg ({bg[:6]}) finished its turn"]
