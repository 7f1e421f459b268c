"""Issue 23, items 4-6: nothing finishes silently (a background agent's news is a badge
in the tree and a toast, the bell a setting); the tree fits its content (rows end with
`…`, no sideways scrolling, a key or a drag sets its width, kept); the place comes back
(panes, the active one and the focused agent survive a restart)."""

from __future__ import annotations

import pytest
from textual.widgets._toast import Toast

from ikigai_tui import config as config_module
from ikigai_tui.config import ConfigError
from ikigai_tui.core.notices import EventsCommitted, TurnFinished
from ikigai_tui.tui.screens.help import HelpKeys
from ikigai_tui.tui.ui_state import read_state, state_path, write_state

from .conftest import agent_named, idle, root_id, say, send_text, settle

SMALL = (80, 24)


async def _family(bench, *names: str, long_talk: bool = False, mail: str = "") -> None:
    """A root that talked, with children named `names` (forked waiting; `mail`: their
    /fork's --mail)."""
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Parent talk. " + ("words " * 40 if long_talk else ""))
        for name in names:
            await session.command(root, f"/fork --name {name}" + (f" --mail {mail}" if mail else ""))


def _row(app, agent_id: str) -> str:
    """The agent's row as the screen shows it (guides and label, fitted)."""
    tree = app.agent_tree
    node = tree.node_for(agent_id)
    return tree.render_line(node.line - int(tree.scroll_y)).text.rstrip()


def _toasts(app) -> list[str]:
    return [n.message for n in app._notifications]


# ---- 4. nothing finishes silently -------------------------------------------------------


async def test_a_background_agents_turn_end_and_mail_badge_it_and_toast_until_it_is_shown(bench):
    await _family(bench, "kid", mail="manual")  # mail waits: a woken turn is news of its own
    app = bench.app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        session = app.session
        root, kid = root_id(session), agent_named(session, "kid")

        await send_text(pilot, "/fork --name helper look into plums")  # runs beside, unseen
        helper = agent_named(session, "helper")
        assert helper in app.unseen
        assert any(t.startswith("helper (") and t.endswith("finished its turn")
                   for t in _toasts(app)), _toasts(app)
        assert _row(app, helper).startswith("└─ ○ helper") and " new " in _row(app, helper)

        # Mail the user sends is no news: the user did it.
        before = _toasts(app)
        await send_text(pilot, "/send kid please also look at pears")
        assert kid not in app.unseen and " new " not in _row(app, kid)
        assert _toasts(app) == before
        # Mail an agent's LLM sends is.
        await session.command(root, "/send kid and at quinces", source="llm")
        await idle(pilot)
        assert kid in app.unseen and " new " in _row(app, kid)
        assert any(t.startswith("kid (") and t.endswith(f"got mail from root ({root[:6]})")
                   for t in _toasts(app)), _toasts(app)
        # The toasts never cover the input.
        await pilot.pause(0.1)
        toasts = list(app.screen.query(Toast))
        assert toasts and all(not t.region.overlaps(app.prompt_input.region) for t in toasts)

        await pilot.press("ctrl+t", "down", "enter")  # the tree: kid, chosen and shown
        await idle(pilot)
        assert app.focused_agent == kid
        assert kid not in app.unseen and " new " not in _row(app, kid)
        assert helper in app.unseen  # not looked at yet

        await pilot.press("f2", "f2")  # panes beside: root, then helper (the next not shown)
        await idle(pilot)
        assert helper in [p.agent_id for p in app.panes.all()]
        assert helper not in app.unseen and " new " not in _row(app, helper)


async def test_five_forks_ending_at_once_make_one_toast_clear_of_the_pane_title(bench):
    """Five children end their turns unseen at 80x24: one toast tells the latest, its
    title how many agents have news; toasts never stack over the pane's title."""
    await _family(bench)
    app = bench.app()
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(pilot)
        for n in range(5):
            await send_text(pilot, f"/fork --name k{n} look into plums {n}")
        await idle(pilot)
        await pilot.pause(0.1)
        assert len(app.unseen.news) == 5
        toasts = list(app.screen.query(Toast))
        assert len(toasts) == 1 and len(_toasts(app)) == 1, _toasts(app)
        assert _toasts(app)[0].startswith("k4 (") and _toasts(app)[0].endswith("finished its turn")
        assert [n.title for n in app._notifications] == ["5 agents have news"]
        title = app.panes.all()[0].title.region
        assert not toasts[0].region.overlaps(title), (toasts[0].region, title)
        assert toasts[0].region.y == title.bottom  # just under it: no gap left by the dropped
        assert not toasts[0].region.overlaps(app.prompt_input.region)


async def test_news_of_an_agent_on_screen_is_no_news(bench):
    await _family(bench)
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send_text(pilot, "hello again")
        assert not app.unseen.news and _toasts(app) == []
        assert " new " not in _row(app, app.focused_agent)


def test_news_names_a_failure_and_mail_from_anywhere():
    from ikigai_tui.tui.unseen import news_of

    class Tree:
        labels = {"k": "kid (k)", "r": "root (r)"}
        status = {"k": "idle", "r": "idle"}

        def __contains__(self, agent_id):
            return agent_id in self.labels

        def __getitem__(self, agent_id):
            return type("Agent", (), {"status": self.status[agent_id]})()

        def label(self, agent_id):
            return self.labels[agent_id]

    class Event:
        def __init__(self, agent_id, kind, payload):
            self.agent_id, self.kind, self.payload = agent_id, kind, payload

    tree = Tree()
    assert news_of(TurnFinished("k", False, "rate limited\nsecond line"), tree) == [
        ("k", "failed: rate limited")]
    assert news_of(TurnFinished("k", True), tree) == [("k", "finished its turn")]
    mail = Event("k", "mail", {"from": "r", "text": "hi"})
    error = Event("k", "error", {"message": "the stream broke"})
    assert news_of(EventsCommitted([mail, error]), tree) == [("k", "got mail from root (r)")]
    # Mail the user sent here (its batch opens with the user's command) is no news; the
    # LLM's, or another process's, is.
    typed = Event("r", "command", {"text": "/send kid hi", "source": "human"})
    assert news_of(EventsCommitted([typed, mail]), tree) == []
    by_llm = Event("r", "command", {"text": "/send kid hi", "source": "llm"})
    assert news_of(EventsCommitted([typed, by_llm, mail]), tree) == [
        ("k", "got mail from root (r)")]
    assert news_of(EventsCommitted([typed, mail], foreign=True), tree) == [
        ("k", "got mail from root (r)")]
    # Another process's failure comes only as its event.
    assert news_of(EventsCommitted([error], foreign=True), tree) == [
        ("k", "failed: the stream broke")]
    assert news_of(TurnFinished("gone", True), tree) == []


@pytest.mark.parametrize("bell", [True, False])
async def test_the_bell_rings_on_news_only_when_the_config_asks(bench, bell):
    (bench.tmp_path / "no-config.toml").write_text(f"bell = {str(bell).lower()}\n")
    await _family(bench)
    app = bench.app()
    assert app.config.bell is bell
    rung: list[bool] = []
    app.bell = lambda: rung.append(True)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send_text(pilot, "/fork --name helper look into plums")
        assert agent_named(app.session, "helper") in app.unseen
        assert rung == ([True] if bell else [])


def test_the_bell_setting_is_true_or_false(tmp_path):
    path = tmp_path / "config.toml"
    assert config_module.load(config_path=str(path), env={}).bell is False  # the default
    path.write_text('bell = "yes"\n')
    with pytest.raises(ConfigError, match=r"line 1: 'bell' must be true or false"):
        config_module.load(config_path=str(path), env={})


# ---- 5. the tree fits its content --------------------------------------------------------


async def test_a_narrow_tree_ends_rows_with_an_ellipsis_and_never_scrolls_sideways(bench):
    await _family(bench, "a-child-with-a-rather-long-name")
    app = bench.app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        tree = app.agent_tree
        room = tree.scrollable_content_region.width
        assert tree.virtual_size.width <= room and not tree.show_horizontal_scrollbar
        root = root_id(app.session)
        full = tree.node_for(root).label.plain  # "▶ ○ root (a1b2c1) 1% · spent 1.2K · 1.2K/100K"
        shown = _row(app, root)
        assert len(full) > room and len(shown) <= room
        assert shown.endswith(" …")
        # What is left before the `…` is whole fields of the full row, the usage figure
        # among them (the name's id gives way first).
        assert set(shown[:-2].split()) <= set(full.split()), (shown, full)
        assert "%" in shown and shown.split("%")[0].split()[-1].isdigit(), (shown, full)
        kid = _row(app, agent_named(app.session, "a-child-with-a-rather-long-name"))
        # The long name is cut (with "…"), the usage kept whole after it.
        assert "…" in kid and len(kid) <= room + tree.guide_depth
        assert "a-child-with-a-rather-long-name" not in kid and " 1% " in kid + " ", kid


async def test_keys_widen_and_narrow_the_tree_and_the_width_comes_back(bench):
    await _family(bench)
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        start = app.agent_tree.outer_size.width
        await pilot.press("alt+shift+right", "alt+shift+right", "alt+shift+right")
        await idle(pilot)
        assert app.agent_tree.outer_size.width == start + 12  # past the default 30% cap
        await pilot.press("alt+shift+left")
        await idle(pilot)
        assert app.agent_tree.outer_size.width == start + 8
        await pilot.press("alt+shift+left", *["alt+shift+left"] * 10)
        await idle(pilot)
        assert app.agent_tree.outer_size.width == 16  # the narrowest
        await pilot.press("alt+shift+right", "alt+shift+right")
        await idle(pilot)
    assert read_state(state_path(app.config.config_path))["tree_width"] == 24

    again = bench.app()
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert again.agent_tree.outer_size.width == 24


async def test_dragging_the_trees_edge_sets_its_width_and_it_is_kept(bench):
    await _family(bench)
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tree = app.agent_tree
        edge = tree.region.x + tree.outer_size.width - 1
        await pilot.mouse_down(offset=(edge, 5))
        await pilot.hover(offset=(edge + 10, 6))
        await pilot.pause()
        await pilot.mouse_up(offset=(edge + 10, 6))
        await idle(pilot)
        assert tree.outer_size.width == edge + 11 - tree.region.x
        wanted = tree.outer_size.width
    assert read_state(state_path(app.config.config_path))["tree_width"] == wanted


async def test_help_lists_the_keys_that_size_the_tree(bench):
    await _family(bench)
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        rows = app.screen.query_one(HelpKeys)._key_rows
        actions = {description: keys for keys, description in rows}
        assert any("Alt+Shift+Right" in keys and "Widen the agent tree" in what
                   for what, keys in actions.items()), rows
        assert any("Alt+Shift+Left" in keys and "Narrow the agent tree" in what
                   for what, keys in actions.items()), rows


# ---- 6. the place comes back --------------------------------------------------------------


async def test_panes_the_active_pane_and_the_focused_agent_come_back_after_a_restart(bench):
    await _family(bench, "kid0", "kid1")
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        session = app.session
        root, kid0, kid1 = root_id(session), agent_named(session, "kid0"), agent_named(session, "kid1")
        await pilot.press("f2", "f2")  # root | kid0 | kid1, kid1 active
        await idle(pilot)
        await pilot.press("ctrl+w", "ctrl+w")  # round to root, then kid0
        await idle(pilot)
        assert [p.agent_id for p in app.panes.all()] == [root, kid0, kid1]
        assert app.panes.index == 1 and app.focused_agent == kid0

    again = bench.app()
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert [p.agent_id for p in again.panes.all()] == [root, kid0, kid1]
        assert again.panes.index == 1 and again.focused_agent == kid0
        assert again.panes.active.has_class("-active")
        assert " · kid0 (" in again.status_line.render().plain
        # Each pane shows its agent's conversation, read before the first frame.
        assert all(p.scrollback.items for p in again.panes.all())


async def test_agents_that_no_longer_exist_fall_back_cleanly(bench):
    await _family(bench, "kid0")
    path = state_path(bench.app().config.config_path)
    async with bench.prep() as session:
        root, kid0 = root_id(session), agent_named(session, "kid0")
    db = str(bench.db.resolve())
    # The active agent gone: the panes left show, the first active.
    write_state(path, places={db: {"panes": [kid0, "f" * 32, root], "active": 1}})
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert [p.agent_id for p in app.panes.all()] == [kid0, root]
        assert app.panes.index == 0 and app.focused_agent == kid0

    # None of them left (another database's ids), or a place that is not one: the root.
    for place in ({"panes": ["e" * 32], "active": 0}, {"panes": "nonsense", "active": -3}):
        write_state(path, places={db: place})
        again = bench.app()
        async with again.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert [p.agent_id for p in again.panes.all()] == [root]
            assert again.focused_agent == root
