"""What each agent sees, on the screen (issue 13, items 1, 2 and 18): messages out of the
agent's context are drawn apart with why (and F8 hides them), F9 shows each message's id,
and a new agent's empty scrollback holds a welcome until its conversation starts."""

from __future__ import annotations

from ikigai_tui.tui.render import OUTSIDE_BAR
from ikigai_tui.tui.welcome import HIDE_ID, KEYS, LINES, TITLE

from .conftest import all_lines, conversation, events_of, idle, root_id, settle, type_text

SIZE = (120, 40)


async def _ids(session, root: str, kind: str) -> list[int]:
    events = await session.store.events(root)
    return [e.id for e in events if e.kind == kind]


async def _rewound_forgotten_cleared(session) -> dict[str, list[int]]:
    """alpha -> rewound; one user message forgotten; then everything cleared; then one
    more exchange, in the context. The user messages' ids, by what happened to them."""
    root = root_id(session)
    await conversation(session, "first question")
    await session.command(root, "/mark alpha")
    await conversation(session, "rewound question")
    await session.command(root, "/rewind alpha")
    await conversation(session, "forgotten question", "cleared question")
    users = await _ids(session, root, "user")
    await session.command(root, f"/forget --ids {users[2]}")
    await session.command(root, "/clear")
    await conversation(session, "kept question")
    users = await _ids(session, root, "user")
    return {"first": [users[0]], "rewound": [users[1]], "forgotten": [users[2]],
            "cleared": [users[3]], "kept": [users[4]]}


def _line_of(lines: list[str], text: str) -> int:
    found = [n for n, line in enumerate(lines) if text in line]
    assert found, f"{text!r} not shown"
    return found[0]


async def test_messages_out_of_the_context_are_drawn_apart_with_why(bench):
    async with bench.prep() as session:
        ids = await _rewound_forgotten_cleared(session)
    forget = f'forgotten by "/forget --ids {ids["forgotten"][0]}"'  # the command that did it
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        lines = all_lines(sb)
        # Each out-of-context message: a bar down its side, and above its run, why.
        for text, why in [("rewound question", "rewound to 'alpha'"),
                          ("forgotten question", forget),
                          ("cleared question", "cleared")]:
            at = _line_of(lines, text)
            assert lines[at].startswith(OUTSIDE_BAR), lines[at]
            label = max(n for n, line in enumerate(lines[:at]) if line.startswith("⊘"))
            assert why in lines[label] and "not in the context" in lines[label]
        # In the context: drawn as always. The first question was cleared too.
        assert not lines[_line_of(lines, "kept question")].startswith(OUTSIDE_BAR)
        assert lines[_line_of(lines, "first question")].startswith(OUTSIDE_BAR)
        # The dimmed colour is the theme's, not the text's own.
        outside = sb.palette.outside.color
        strip = sb._lines[_line_of(lines, "rewound question")]
        assert any(seg.style and seg.style.color == outside and "rewound" in seg.text
                   for seg in strip)
        kept = sb._lines[_line_of(lines, "kept question")]
        assert all(not (seg.style and seg.style.color == outside) for seg in kept if seg.text.strip())
        # The lines grew past the view after the first paint (the labels, the bars): the
        # view is at the end, and the scrollbar's thumb says so.
        assert sb.show_vertical_scrollbar and sb.scroll_y == sb.max_scroll_y > 0
        assert sb.vertical_scrollbar.position == sb.scroll_y


async def test_f8_hides_and_shows_them_and_undo_restores_their_look(bench):
    async with bench.prep() as session:
        await _rewound_forgotten_cleared(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        await pilot.press("f8")
        await idle(pilot)
        lines = all_lines(sb)
        assert not any("rewound question" in line or "cleared question" in line for line in lines)
        assert any("kept question" in line for line in lines)
        hidden = [line for line in lines if line.startswith("⊘")]
        assert any("2 messages rewound to 'alpha'" in line and "hidden" in line for line in hidden)
        assert any("F8 shows them" in line for line in hidden), hidden
        await pilot.press("f8")
        await idle(pilot)
        assert any("rewound question" in line for line in all_lines(sb))

        # /undo of the /clear: the cleared messages are in the context again, and look it.
        await type_text(pilot, "/undo")
        await pilot.press("enter")
        await idle(pilot)
        lines = all_lines(sb)
        assert not lines[_line_of(lines, "cleared question")].startswith(OUTSIDE_BAR)
        assert not any("⊘ cleared" in line for line in lines)
        assert lines[_line_of(lines, "forgotten question")].startswith(OUTSIDE_BAR)


async def test_a_clear_typed_now_dims_what_is_shown_without_reading_the_log_again(bench):
    async with bench.prep() as session:
        await conversation(session, "one", "two", "three")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        store = app.session.store
        reads = []
        for name in ("page", "events", "agent_rows"):
            original = getattr(store, name)

            def counted(*args, _original=original, _name=name, **kwargs):
                reads.append(_name)
                return _original(*args, **kwargs)

            setattr(store, name, counted)
        await type_text(pilot, "/clear")
        await pilot.press("enter")
        await idle(pilot)
        lines = all_lines(sb)
        for text in ("one", "two", "three"):
            assert lines[_line_of(lines, f"› {text}")].startswith(OUTSIDE_BAR)
        assert reads == []


async def test_f9_shows_each_message_id_and_hides_it_again(bench):
    async with bench.prep() as session:
        await conversation(session, "first question", "second question")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        users = [e.id for e in await events_of(app, root, "user")]
        replies = [e.id for e in await events_of(app, root, "assistant")]
        sb = app.panes.active.scrollback
        await pilot.press("f9")
        await idle(pilot)
        lines = all_lines(sb)
        for key, text in [(users[0], "› first question"), (users[1], "› second question")]:
            line = lines[_line_of(lines, text)]
            assert line.split()[0] == str(key), line
        assert any(line.split()[:1] == [str(replies[1])] for line in lines)
        await pilot.press("f9")
        await idle(pilot)
        assert all_lines(sb)[_line_of(all_lines(sb), "first question")].startswith("› ")


async def test_a_new_agent_is_welcomed_until_its_conversation_starts(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        lines = all_lines(sb)
        assert lines[0] == TITLE
        text = " ".join(lines)
        for word in ("Agents:", "Marks:", "Forks:", "The window:", "Dimmed:", "/undo"):
            assert word in text
        for shown in ("Enter send", "F1 help", "Ctrl+T agents", "F2 split", "Esc stop a reply",
                      "F8 hides them"):
            assert shown in text, shown
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await idle(pilot)
        lines = all_lines(sb)
        assert TITLE not in lines and any("› hello" in line for line in lines)


def test_every_key_the_welcome_names_is_bound():
    from ikigai_tui.tui.app import IkigaiApp
    from ikigai_tui.tui.widgets.prompt import PromptInput

    ids = {b.id for b in [*IkigaiApp.BINDINGS, *PromptInput.BINDINGS]}
    assert len(KEYS) == 5
    for binding_id, _what in KEYS:
        assert binding_id in ids, binding_id
    assert any("{hide} hides them" in line for _name, line in LINES)
    assert [b.action for b in IkigaiApp.BINDINGS if b.id == HIDE_ID] == ["toggle('outside')"]


async def test_the_welcome_and_the_hidden_line_name_the_keys_the_keymap_binds(bench):
    """Keys moved in the config's [keymap] are the keys the welcome and the hidden-messages
    line name, not the defaults."""
    (bench.tmp_path / "no-config.toml").write_text(
        '[keymap]\nhelp = "f10"\nsend = "ctrl+s"\nagents = "ctrl+y"\nout-of-context = "f12"\n',
        encoding="utf-8")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = " ".join(all_lines(app.panes.active.scrollback))
        for shown in ("F10 help", "Ctrl+S send", "Ctrl+Y agents", "F2 split", "F12 hides them"):
            assert shown in text, shown
        for stale in ("F1 help", "Enter send", "Ctrl+T agents", "F8 hides"):
            assert stale not in text, stale
    async with bench.prep() as session:
        await _rewound_forgotten_cleared(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f12")
        await idle(pilot)
        hidden = [line for line in all_lines(app.panes.active.scrollback) if line.startswith("⊘")]
        assert any("(F12 shows them)" in line for line in hidden), hidden
        assert not any("F8" in line for line in hidden), hidden


# ---- the scrollback on its own: hiding reads on, the reasons stay bounded ---------------


class ClearedLog:
    """An in-memory log of `n` items whose first `cleared` are out of the context, with the
    AgentPages methods the scrollback asks (outside, context_version)."""

    def __init__(self, n: int, cleared: int) -> None:
        from .test_scrollback import Log, make_items

        self.log = Log(make_items(n))
        self.cleared = cleared
        self.version = 1

    async def __call__(self, **where):
        return await self.log.pages(**where)

    def outside(self, key: int) -> str | None:
        return "cleared" if key <= self.cleared else None

    def context_version(self) -> object:
        return self.version


async def test_hiding_them_reads_older_pages_until_the_view_is_filled_or_the_start():
    from ikigai_tui.tui.widgets.scrollback import PAGE_ITEMS, Scrollback

    from .test_scrollback import Host, settle as settle_widget

    source = ClearedLog(200, 180)
    sb = Scrollback("agent", source)
    sb.preload(await sb.latest_page())
    app = Host(sb)
    async with app.run_test(size=SIZE) as pilot:
        await settle_widget(pilot)
        sb.set_rule(None, "")  # the context is known: the refresh the app would make
        await settle_widget(pilot)
        assert len(sb.items) == PAGE_ITEMS and not sb.at_start
        sb.toggle("outside", False)
        await settle_widget(pilot)
        # The 20 messages in the context fill less than the view and its margins: the
        # older pages, all hidden, were read up to the start of the log.
        assert sb.at_start and len(sb.items) == 200
        hidden = [line for line in all_lines(sb) if line.startswith("⊘")]
        assert hidden == ["⊘ 180 messages cleared · not in the context, hidden"]
        # Only the loaded items' reasons are kept, however far the range moved.
        assert len(sb.look.reasons) <= len(sb.items)


def test_the_reason_names_the_command_and_is_made_safe():
    from ikigai_tui.tui.transcript import removal_label

    assert removal_label("clear", {}) == "cleared"
    assert removal_label("rewind", {"mark": "alpha"}) == "rewound to 'alpha'"
    assert removal_label("filter", {"mode": "forget"}) == "forgotten by /forget"
    long = "/remember " + "words " * 20
    label = removal_label("filter", {"mode": "remember", "command": long})
    assert label.startswith('left out by "/remember words') and label.endswith('…"')
    unsafe = removal_label("filter", {"mode": "forget", "command": "/forget \x1b]52;c;AA\x07x"})
    assert "\x1b" not in unsafe and "\x07" not in unsafe
