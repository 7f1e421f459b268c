"""Focus and keys (issue 13, items 8, 19 and 23): every pane and agent key works from the
input, a message goes to the active pane's agent, the focus comes back to the input after
choosing an agent, F3 right after F2 closes the new pane, the tree shrinks and hides, and
text selected in a scrollback (or a whole reply) can be copied."""

from __future__ import annotations

import contextlib

from textual.geometry import Offset
from textual.selection import Selection

from .conftest import SIZE, agent_named, events_of, idle, root_id, say, settle, type_text


@contextlib.asynccontextmanager
async def _kid_app(bench, *, size=SIZE):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Parent talk about **kiwis**.")
        await session.command(root, "/fork --name kid")
        await session.wait_idle()
    app = bench.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        yield app, pilot


async def _users(app, agent_id: str) -> list[str]:
    return [e.payload["content"] for e in await events_of(app, agent_id, "user")]


# ---- item 8: pane and agent keys from the input -----------------------------------------


async def test_ctrl_w_from_the_input_switches_pane_and_keeps_the_typed_words(bench):
    async with _kid_app(bench) as (app, pilot):
        root, kid = root_id(app.session), agent_named(app.session, "kid")
        await pilot.press("f2")
        await idle(pilot)
        assert app.panes.active.agent_id == kid
        await type_text(pilot, "hello there friend")
        await pilot.press("ctrl+w")
        await idle(pilot)
        assert app.prompt_input.text == "hello there friend"  # not a word deleted
        assert app.panes.active.agent_id == root and app.focused_agent == root
        assert app.focused is app.prompt_input


async def test_a_message_goes_to_the_active_panes_agent(bench):
    async with _kid_app(bench) as (app, pilot):
        root, kid = root_id(app.session), agent_named(app.session, "kid")
        await pilot.press("f2", "ctrl+w", "ctrl+w")  # kid active, root, kid again
        await idle(pilot)
        assert app.panes.active.agent_id == kid
        await type_text(pilot, "For the kid.")
        await pilot.press("enter")
        await idle(pilot)
        assert await _users(app, kid) == ["For the kid."]
        assert "For the kid." not in await _users(app, root)


async def test_f3_right_after_f2_closes_the_new_pane(bench):
    async with _kid_app(bench) as (app, pilot):
        root = root_id(app.session)
        await pilot.press("f2")
        await idle(pilot)
        assert len(app.panes.all()) == 2
        await pilot.press("f3")
        await idle(pilot)
        assert [p.agent_id for p in app.panes.all()] == [root]
        assert app.focused_agent == root


async def test_choosing_an_agent_in_the_tree_gives_the_focus_back_to_the_input(bench):
    async with _kid_app(bench) as (app, pilot):
        kid = agent_named(app.session, "kid")
        await pilot.press("ctrl+t", "down", "enter")
        await idle(pilot)
        assert app.focused_agent == kid
        assert app.focused is app.prompt_input
        await type_text(pilot, "Typed after choosing.")
        await pilot.press("enter")
        await idle(pilot)
        assert await _users(app, kid) == ["Typed after choosing."]


async def test_escape_in_the_tree_returns_to_the_input_and_typing_is_not_lost(bench):
    async with _kid_app(bench) as (app, pilot):
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.focused is app.agent_tree
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.prompt_input
        await pilot.press("ctrl+t")
        await pilot.pause()
        await type_text(pilot, "abc")  # typed with the tree focused: to the input
        await pilot.pause()
        assert app.focused is app.prompt_input
        assert app.prompt_input.text == "abc"


async def test_agent_keys_work_from_the_input(bench):
    async with _kid_app(bench) as (app, pilot):
        root, kid = root_id(app.session), agent_named(app.session, "kid")
        assert app.focused is app.prompt_input
        await pilot.press("alt+down")
        await idle(pilot)
        assert app.focused_agent == kid and app.focused is app.prompt_input
        await pilot.press("alt+up")
        await idle(pilot)
        assert app.focused_agent == root


async def test_closing_panes_leaves_no_border_at_the_right_edge(bench):
    async with _kid_app(bench) as (app, pilot):
        await pilot.press("f2")
        await idle(pilot)
        first, second = app.panes.all()
        assert first.styles.border_right[0] != "" and second.styles.border_right[0] == ""
        if app.panes.active is not second:
            await app.action_next_pane()
        await pilot.press("f3")  # closes the second: the first is the last one now
        await idle(pilot)
        assert app.panes.all() == [first]
        assert first.styles.border_right[0] == ""
        assert first.region.right == app.panes.region.right


# ---- item 19: narrow terminals -------------------------------------------------------------


async def test_the_tree_shrinks_on_a_narrow_terminal_and_f4_hides_it(bench):
    async with _kid_app(bench, size=(80, 24)) as (app, pilot):
        tree = app.agent_tree
        assert tree.region.width <= 26  # not a fixed 34 columns out of 80
        panes_width = app.panes.region.width
        await pilot.press("f4")
        await idle(pilot)
        assert not tree.display
        assert app.panes.region.width == 80
        assert app.panes.region.width > panes_width
        await pilot.press("f4")
        await idle(pilot)
        assert tree.display and app.panes.region.width == panes_width


async def test_ctrl_t_shows_a_hidden_tree(bench):
    async with _kid_app(bench, size=(80, 24)) as (app, pilot):
        await pilot.press("f4", "ctrl+t")
        await idle(pilot)
        assert app.agent_tree.display and app.focused is app.agent_tree


# ---- item 23: copying -----------------------------------------------------------------------


async def test_text_dragged_over_in_the_scrollback_is_copied_with_ctrl_c(bench):
    async with _kid_app(bench) as (app, pilot):
        sb = app.panes.active.scrollback
        lines = [sb.render_line(y).text.rstrip() for y in range(sb.size.height)]
        row = next(y for y, line in enumerate(lines) if line.startswith("› Parent talk"))
        # The drawn cells carry their place in the text, as Textual's selection needs.
        offsets = [seg.style.meta.get("offset") for seg in sb.render_line(row)
                   if seg.style is not None and seg.text.strip()]
        assert offsets and offsets[0] == (0, int(sb.scroll_y) + row)
        # From the P to the k of "› Parent talk" (the pane's padding is one column).
        await pilot.mouse_down(sb, offset=(3, row))
        await pilot.hover(sb, offset=(13, row))
        await pilot.mouse_up(sb, offset=(13, row))
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "Parent talk"


async def test_a_selection_spanning_lines_is_copied_and_highlighted(bench):
    async with _kid_app(bench) as (app, pilot):
        sb = app.panes.active.scrollback
        text = [strip.text.rstrip() for strip in sb._lines]
        start = next(y for y, line in enumerate(text) if line.startswith("› Parent talk"))
        app.screen.selections = {sb: Selection(Offset(2, start), Offset(7, start + 2))}
        await pilot.pause()
        assert app.screen.get_selected_text() == "\n".join(
            [text[start][2:], text[start + 1], text[start + 2][:7]])
        style = app.screen.get_component_rich_style("screen--selection")
        y = start - int(sb.scroll_y)
        marked = [seg for seg in sb.render_line(y) if seg.style and seg.style.bgcolor == style.bgcolor]
        assert "".join(seg.text for seg in marked).startswith("Parent talk")


async def test_f5_copies_the_whole_reply_in_view(bench):
    async with _kid_app(bench) as (app, pilot):
        root = root_id(app.session)
        reply = (await events_of(app, root, "assistant"))[-1].payload["content"]
        await pilot.press("f5")
        await pilot.pause()
        assert app.clipboard == reply
        assert "**kiwis**" in app.clipboard  # its Markdown, as the model wrote it
