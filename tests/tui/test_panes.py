"""The panes widget: it owns its panes and the active one, and tells the app which agent
the active pane shows with a message (the app's focus follows it); warnings are toasts."""

from __future__ import annotations

import contextlib

from ikigai_tui.core.notices import ErrorNotice
from ikigai_tui.tui.messages import AgentsChanged, EventsArrived, StreamArrived
from ikigai_tui.tui.panes import MAX_PANES, Panes

from .conftest import SIZE, agent_named, all_lines, events_of, idle, root_id, say, settle


@contextlib.asynccontextmanager
async def _family_app(bench, children: int, **run):
    """The app on a root with `children` children (kid0, kid1, ...), settled."""
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Parent talk.")
        for n in range(children):
            await session.command(root, f"/fork --name kid{n}")
    app = bench.app()
    async with app.run_test(size=SIZE, **run) as pilot:
        await settle(pilot)
        yield app, pilot


def _collect(kind):
    """The messages of a kind the app's widgets handled, each once (a bubbling message
    is handled by every widget on its way up)."""
    seen: list = []

    def hook(message) -> None:
        if isinstance(message, kind) and not any(m is message for m in seen):
            seen.append(message)

    return seen, hook


async def test_cycling_and_closing_panes_tell_the_app_which_agent_is_active(bench):
    changes, hook = _collect(Panes.ActiveChanged)
    async with _family_app(bench, 1, message_hook=hook) as (app, pilot):
        root, kid = root_id(app.session), agent_named(app.session, "kid0")
        assert isinstance(app.panes, Panes)
        assert app.query_one("#panes") is app.panes

        await pilot.press("f2")  # split: the kid beside the root, and active
        await idle(pilot)
        assert [p.agent_id for p in app.panes.all()] == [root, kid]
        assert app.panes.active.agent_id == kid and app.focused_agent == kid
        assert [m.agent_id for m in changes] == [kid]
        assert app.panes.active.has_class("-active")
        assert " · kid0 (" in app.status_line.render().plain  # the app refreshed for it

        await pilot.press("ctrl+w")  # from the input: the next pane (round to the root)
        await idle(pilot)
        assert app.panes.active.agent_id == root
        assert [m.agent_id for m in changes] == [kid, root]
        assert app.focused_agent == root

        await pilot.press("ctrl+w")  # and round again
        await idle(pilot)
        assert [m.agent_id for m in changes] == [kid, root, kid]
        assert app.focused_agent == kid

        await pilot.press("f3")  # close the kid's pane
        await idle(pilot)
        assert [p.agent_id for p in app.panes.all()] == [root]
        assert [m.agent_id for m in changes] == [kid, root, kid, root]
        assert app.focused_agent == root
        assert not app.panes.active.has_class("-active")  # a single pane is not marked

        await pilot.press("f3")  # the last pane stays
        await idle(pilot)
        assert [p.agent_id for p in app.panes.all()] == [root]
        assert len(changes) == 4


async def test_split_warns_with_a_toast_when_no_pane_can_be_added(bench):
    async with _family_app(bench, MAX_PANES) as (app, pilot):
        for _ in range(MAX_PANES - 1):
            await pilot.press("f2")
            await idle(pilot)
        assert len(app.panes.all()) == MAX_PANES
        await pilot.press("f2")
        await idle(pilot)
        assert len(app.panes.all()) == MAX_PANES
        assert [n.message for n in app._notifications] == [f"At most {MAX_PANES} panes."]


async def test_split_warns_when_every_agent_is_shown(bench):
    async with _family_app(bench, 1) as (app, pilot):
        await pilot.press("f2", "f2")
        await idle(pilot)
        assert len(app.panes.all()) == 2
        assert [n.message for n in app._notifications] == [
            "Every agent is already shown. Fork one with /fork."]
        assert all(n.severity == "warning" for n in app._notifications)


# ---- the session's notices, as messages to the panes -----------------------------------


async def test_a_reply_reaches_the_panes_as_messages_its_pieces_before_its_events(bench):
    """The listener only translates: each streamed piece is a StreamArrived for the panes,
    then the committed reply an EventsArrived, in that order, on the panes' one queue;
    the app is told with AgentsChanged; the pane shows the committed reply once."""
    app = bench.app(delay=0.01)  # the offline model streams word by word
    seen, hook = _collect((StreamArrived, EventsArrived, AgentsChanged))
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot)
        root = app.focused_agent
        seen.clear()
        await app.session.say(root, "Count the pieces.")
        await app.session.wait_idle()
        await idle(pilot)

        reply = (await events_of(app, root, "assistant"))[-1]
        to_panes = [m for m in seen if not isinstance(m, AgentsChanged)]
        kinds = [type(m).__name__ for m in to_panes]
        assert kinds[0] == "EventsArrived"  # the user message
        assert [e.kind for e in to_panes[0].events] == ["user"]
        pieces = [m for m in to_panes if isinstance(m, StreamArrived)]
        assert len(pieces) > 3
        assert all(m.agent_id == root for m in pieces)
        assert "".join(m.text for m in pieces) == reply.payload["content"]
        last_piece = max(i for i, m in enumerate(to_panes) if isinstance(m, StreamArrived))
        committed = next(i for i, m in enumerate(to_panes)
                         if isinstance(m, EventsArrived) and reply.id in [e.id for e in m.events])
        assert kinds[1:last_piece + 1] == ["StreamArrived"] * last_piece
        assert committed == last_piece + 1
        assert any(isinstance(m, AgentsChanged) for m in seen)
        assert all(isinstance(m, (StreamArrived, EventsArrived)) for m in to_panes)

        scrollback = app.panes.active.scrollback
        assert scrollback._stream is None  # the streamed lines gave way to the reply
        first = reply.payload["content"].split(".")[0]
        assert sum(first in line for line in all_lines(scrollback)) == 1


async def test_events_a_pane_already_shows_are_not_added_again(bench):
    """A pane that read its page after an event was committed, but before that event's
    message was handled, shows it once."""
    async with bench.prep() as session:
        await say(session, root_id(session), "Only once, please.")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        scrollback = app.panes.active.scrollback
        before = all_lines(scrollback)
        assert any("Only once, please." in line for line in before)
        shown = await events_of(app, root)
        app.panes.post_message(EventsArrived(shown))
        await idle(pilot)
        assert all_lines(scrollback) == before


async def test_a_note_for_an_agent_reaches_only_its_panes(bench):
    async with _family_app(bench, 1) as (app, pilot):
        await pilot.press("f2")
        await idle(pilot)
        root_pane, kid_pane = app.panes.all()
        app.session.notify(ErrorNotice(kid_pane.agent_id, "Error: the kid's trouble"))
        app.session.notify(ErrorNotice(kid_pane.agent_id, "already logged", logged=True))
        await idle(pilot)
        assert "Error: the kid's trouble" in all_lines(kid_pane.scrollback)
        assert not any("trouble" in line for line in all_lines(root_pane.scrollback))
        assert not any("already logged" in line for line in all_lines(kid_pane.scrollback))


async def test_a_background_panes_stream_is_drawn_a_frame_at_a_time_the_active_ones_at_once(bench):
    """Five replies streaming into panes the user does not type in must not repaint on
    every piece: a background pane draws what came every BACKGROUND_FRAME, the active pane
    each piece as it comes, and a pane the user turns to shows the reply as it is now."""
    from ikigai_tui.tui.widgets.scrollback_stream import BACKGROUND_FRAME

    async with _family_app(bench, 1) as (app, pilot):
        root, kid = root_id(app.session), agent_named(app.session, "kid0")
        await pilot.press("f2")  # the kid beside the root, and active
        await idle(pilot)
        back, front = (app.panes.showing(a)[0].scrollback for a in (root, kid))
        assert back.background and not front.background
        drawn: dict = {back: [], front: []}
        for sb in drawn:
            real = sb._show_stream
            sb._show_stream = (lambda real, sb: lambda changed: (drawn[sb].append(changed),
                                                                 real(changed)))(real, sb)

        def pieces(agent_id: str, start: int, words: list[str]) -> None:
            for n, word in enumerate(words, start):
                app.panes.on_stream_arrived(StreamArrived(agent_id, word + " ", n))

        pieces(kid, 1, ["alpha", "beta", "gamma"])
        assert len(drawn[front]) == 3  # the active pane: each piece at once
        pieces(root, 1, ["one", "two", "three", "four"])
        assert drawn[back] == []  # held for the frame
        await pilot.pause(BACKGROUND_FRAME * 3)
        assert len(drawn[back]) == 1  # four pieces, one drawing
        assert any("one two three four" in line for line in all_lines(back))

        pieces(root, 5, ["five"])
        assert len(drawn[back]) == 1
        await pilot.press("ctrl+w")  # the user turns to the root's pane: drawn now
        assert app.panes.active.agent_id == root and not back.background and front.background
        assert len(drawn[back]) == 2
        assert any("four five" in line for line in all_lines(back))
