"""A reply while it streams: shown whole in a pane opened meanwhile, drawn as Markdown as
it arrives (its finished blocks once, its last block again at most so often), and kept
whole when the scrollback is rebuilt under it."""

from __future__ import annotations

import asyncio
import contextlib

from rich.console import Console

from ikigai_tui.core.notices import StreamDelta
from ikigai_tui.tui.render import render_item
from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.widgets import streaming
from ikigai_tui.tui.widgets.streaming import MarkdownStream

from .conftest import SIZE, agent_named, idle, root_id, say, settle

MARKDOWN = ("# Kiwis\n\nThe **kiwi** is a bird of `New Zealand`.\nIt cannot fly.\n\n"
            "- small\n- brown\n- shy\n\n```python\nprint('kiwi')\n\nprint('bird')\n```\n\n"
            "> A quote.\n\n1. one\n2. two\n\nThe end.")


async def _wait_for(pilot, condition, *, timeout: float = 10.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.02)


@contextlib.asynccontextmanager
async def _kid_app(bench, *, delay: float):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Hello.")
        await session.command(root, "/fork --name kid")
        await session.wait_idle()
    app = bench.app(delay=delay)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        yield app, pilot


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def _visible(strips) -> list[str]:
    return [strip.text.rstrip() for strip in strips]


# ---- a pane opened while the reply streams -----------------------------------------------


def _collect_pieces(app, agent_id: str) -> list[str]:
    """Every piece the session tells of the agent's reply, from now on."""
    pieces: list[str] = []

    def listener(notice) -> None:
        if isinstance(notice, StreamDelta) and notice.agent_id == agent_id:
            pieces.append(notice.text)

    app.session.listeners.append(listener)
    return pieces


async def _partial_shown_whole(app, pilot, agent_id: str, pieces: list[str]) -> None:
    """The agent's pane shows the reply so far from its first word, each piece once."""
    sb = app.panes.showing(agent_id)[0].scrollback
    await _wait_for(pilot, lambda: sb._stream is not None and len(sb._stream.text) > 40,
                    what="the pane to show the streaming reply")
    shown = sb._stream.text
    assert shown.startswith("Offline model here.")
    assert "".join(pieces).startswith(shown)  # a prefix: nothing missing, nothing twice
    await _wait_for(pilot, lambda: app.session.tree[agent_id].status == "idle",
                    what="the reply to end")
    await idle(pilot)
    assert sb._stream is None
    text = " ".join(" ".join(strip.text.split()) for strip in sb._lines)
    assert text.count('You said: "Tell me a long story') == 1  # the committed reply, once


async def test_switching_to_an_agent_mid_reply_shows_the_whole_partial_reply(bench):
    async with _kid_app(bench, delay=0.1) as (app, pilot):
        root, kid = root_id(app.session), agent_named(app.session, "kid")
        pieces = _collect_pieces(app, root)
        await app.session.say(root, "Tell me a long story about kiwis and their nests.")
        await _wait_for(pilot, lambda: len(pieces) >= 6, what="six pieces")
        await pilot.press("alt+down")  # to the kid: the root's pane goes
        await pilot.pause(0.15)
        assert app.focused_agent == kid
        await pilot.press("alt+up")  # back: a new pane on the root, mid-reply
        await pilot.pause()
        assert app.focused_agent == root
        await _partial_shown_whole(app, pilot, root, pieces)


async def test_a_pane_opened_with_f2_mid_reply_shows_the_whole_partial_reply(bench):
    async with _kid_app(bench, delay=0.1) as (app, pilot):
        root, kid = root_id(app.session), agent_named(app.session, "kid")
        await app.focus_agent(kid)
        await idle(pilot)
        pieces = _collect_pieces(app, root)
        await app.session.say(root, "Tell me a long story about kiwis and their nests.")
        await _wait_for(pilot, lambda: len(pieces) >= 6, what="six pieces")
        await pilot.press("f2")  # a pane on the root beside the kid's
        await pilot.pause()
        assert [p.agent_id for p in app.panes.all()] == [kid, root]
        await _partial_shown_whole(app, pilot, root, pieces)


# ---- Markdown while it streams --------------------------------------------------------------


async def test_a_streaming_reply_is_drawn_as_markdown_as_the_committed_one_is(bench):
    async with _kid_app(bench, delay=0.0) as (app, pilot):
        sb = app.panes.active.scrollback
        before = len(sb._lines)
        for piece in _pieces(MARKDOWN, 7):
            sb.stream(piece)
        await pilot.pause(0.1)  # the last block is drawn when due
        streamed = _visible(sb._lines[before:])
        committed = _visible(render_item(app.console, Item(-1, "assistant", MARKDOWN),
                                         sb._content_width(), gap=False))
        assert "**" not in "\n".join(streamed) and "```" not in "\n".join(streamed)
        assert any(line.lstrip().startswith("• small") for line in streamed)
        # The same lines as the committed reply (blank lines between blocks aside).
        assert [line for line in streamed if line] == [line for line in committed if line]


def test_finished_blocks_are_drawn_once_and_the_last_one_at_most_so_often(monkeypatch):
    now = [0.0]
    drawn: list[str] = []
    real = MarkdownStream._draw

    def draw(self, text):
        drawn.append(text)
        now[0] += 0.001  # a drawing takes a millisecond
        return real(self, text)

    monkeypatch.setattr(MarkdownStream, "_draw", draw)
    stream = MarkdownStream(Console(width=100), 100, clock=lambda: now[0])
    paragraphs = [f"Paragraph {n} has **some** words in it, " * 6 for n in range(60)]
    text = "\n\n".join(paragraphs)
    pieces = _pieces(text, 10)
    for piece in pieces:
        now[0] += 0.002  # a piece every 2 ms
        stream.feed(piece)
    stream.flush()
    # Each finished paragraph once; the open one at most every MIN_INTERVAL: the
    # characters drawn grow with the reply's length, not with its square.
    assert sum(map(len, drawn)) < 3 * len(text)
    assert len(drawn) <= len(paragraphs) + now[0] / streaming.MIN_INTERVAL + 2
    assert [line.rstrip() for line in _visible(stream.lines) if line] == [
        line for line in _visible(render_item(Console(width=100), Item(-1, "assistant", text),
                                              100, gap=False)) if line]


def test_a_slow_last_block_is_drawn_less_often(monkeypatch):
    now = [0.0]
    drawn: list[str] = []
    real = MarkdownStream._draw

    def draw(self, text):
        drawn.append(text)
        now[0] += 0.02  # a long code block, highlighted: 20 ms a drawing
        return real(self, text)

    monkeypatch.setattr(MarkdownStream, "_draw", draw)
    stream = MarkdownStream(Console(width=100), 100, clock=lambda: now[0])
    stream.feed("```python\n")
    for n in range(500):
        now[0] += 0.002
        stream.feed(f"x{n} = {n}\n")
    # Ten times its cost apart: the drawings take about a tenth of the time.
    assert len(drawn) * 0.02 <= now[0] * 0.15


def test_words_added_to_the_last_block_keep_the_lines_that_did_not_change():
    now = [0.0]
    stream = MarkdownStream(Console(width=40), 40, clock=lambda: now[0])
    stream.feed("Intro.\n\n" + "word " * 40)  # the open block: five lines
    stream.flush()
    before = list(stream.lines)
    now[0] += 1.0  # its time has come: drawn again at the next piece
    changed = stream.feed("and more words")
    # Only its last line changed: the lines before it are the same objects (what is
    # drawn from them stays good), and what changed is told from there.
    assert changed is not None and changed >= len(before) - 1
    assert all(new is old for new, old in zip(stream.lines[:changed], before))
    assert changed < len(stream.lines)
    last = list(stream.lines)
    now[0] += 1.0
    stream.feed("\n\nNext.")  # the block is finished: drawn again, the same lines
    assert all(new is old for new, old in zip(stream.lines, last[:-1]))
    fresh = MarkdownStream(Console(width=40), 40)
    fresh.feed(stream.text)
    fresh.flush()
    stream.flush()
    assert _visible(stream.lines) == _visible(fresh.lines)


def test_a_last_block_drawn_again_the_same_tells_no_change():
    now = [0.0]
    stream = MarkdownStream(Console(width=40), 40, clock=lambda: now[0])
    stream.feed("Some words")
    stream.flush()
    lines = list(stream.lines)
    now[0] += 1.0
    assert stream.feed(" ") is None  # a trailing space: drawn again, nothing shown changed
    assert all(new is old for new, old in zip(stream.lines, lines))


def test_a_code_fence_keeps_its_blank_lines_in_one_block():
    stream = MarkdownStream(Console(width=60), 60)
    stream.feed("```\na\n\nb\n```\nafter\n\n")
    text = _visible(stream.lines)
    assert "```" not in "\n".join(text)
    assert [line for line in text if line.strip()][-1] == "after"


# ---- a rebuild under a streaming reply --------------------------------------------------------


async def test_a_note_added_mid_reply_keeps_the_whole_reply_after_it(bench):
    async with _kid_app(bench, delay=0.0) as (app, pilot):
        sb = app.panes.active.scrollback
        sb.stream("First words of the reply")
        sb.stream(" and more words.")
        sb.add_note("note", "Retrying in 1.0s (attempt 1): slow")  # the scrollback is rebuilt
        sb.stream(" The end.")
        await pilot.pause(0.1)
        lines = [strip.text.rstrip() for strip in sb._lines]
        note = next(i for i, line in enumerate(lines) if line.startswith("Retrying"))
        assert "First words of the reply and more words. The end." in lines[note + 1:]


async def test_a_resize_mid_reply_draws_it_again_at_the_new_width(bench):
    async with _kid_app(bench, delay=0.0) as (app, pilot):
        sb = app.panes.active.scrollback
        words = " ".join(f"word{n}" for n in range(60))
        sb.stream(words)
        await pilot.pause(0.1)
        await pilot.resize_terminal(80, 30)
        await pilot.pause(0.2)
        lines = [strip.text.rstrip() for strip in sb._lines.tail]
        assert " ".join(" ".join(lines).split()) == words
        assert all(len(line) <= sb._content_width() for line in lines)
