"""Find in the active pane (issue 27, item 6): Ctrl+F opens a bar; typing searches the
agent's whole transcript as you type (loaded page or not, out of the context too), the
count says where you are, Enter/Down and Up move with wrapping, a hit in an older page is
read and shown, the words are highlighted, Esc closes it all."""

from __future__ import annotations

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.tui.find import Finder, holds, words_of
from ikigai_tui.tui.find_bar import FindBar
from ikigai_tui.tui.widgets.find_lines import CURRENT, FOUND

from .conftest import SIZE, root_id, settle


async def _long_history(session, n: int = 600) -> None:
    """n exchanges written straight to the log; "zebra" in exchanges 5 and n-20."""
    root = root_id(session)
    batch = WriteBatch()
    for i in range(n):
        topic = "zebra crossing" if i in (5, n - 20) else "plain talk"
        batch.add(root, "user", {"content": f"message {i} about {topic}"})
        batch.add(root, "assistant", {"content": f"reply {i}"})
    await session.commit(batch)
    ids = [e.id for e in await session.store.events(root) if e.kind == "user"]
    await session.command(root, f"/forget --ids {ids[5]}")  # the oldest zebra is forgotten


def _count(app) -> str:
    return str(app.query_one("#find-count").render())


async def _find(app, pilot, text: str) -> FindBar:
    await pilot.press("ctrl+f")
    await pilot.pause()
    bar = app.query_one(FindBar)
    for ch in text:
        await pilot.press(ch if ch != " " else "space")
    await pilot.pause(0.3)
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause(0.1)  # the count's new width laid out before anything is looked at
    return bar


def test_the_word_rule():
    assert holds("The Database schema", words_of("data sch"))
    assert not holds("the database", words_of("base"))  # a word's start, not its middle
    assert not holds("database", words_of("data schema"))


async def test_find_counts_moves_wraps_and_reads_older_pages(bench):
    async with bench.prep() as session:
        await _long_history(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scrollback = app.panes.active.scrollback
        bar = await _find(app, pilot, "zebra")
        assert len(bar.hits) == 2
        assert _count(app) == "2 of 2"  # the newest hit at or above the view
        newest = bar.hits[1].key
        assert scrollback.find_current == newest
        assert any(i.key == newest for i in scrollback.items)
        await pilot.press("up")
        await pilot.pause()
        oldest = bar.hits[0].key
        assert any(i.key == oldest for i in scrollback.items)  # its page was read
        assert _count(app).startswith("1 of 2 · forgotten by")  # out of the context, said so
        await pilot.press("enter")  # next, wrapping round
        await pilot.pause()
        assert _count(app) == "2 of 2"
        await pilot.press("down")
        await pilot.pause()
        assert _count(app).startswith("1 of 2")


async def test_highlight_no_match_and_escape(bench):
    async with bench.prep() as session:
        await _long_history(session, 40)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scrollback = app.panes.active.scrollback
        bar = await _find(app, pilot, "zebra")
        current = scrollback.find_current
        line = next(n for n, item in enumerate(scrollback.items) if item.key == current)
        strip = scrollback.find_styled(scrollback._lines[scrollback._starts[line]], scrollback._starts[line])
        assert any(seg.style is not None and seg.style.bgcolor == CURRENT.bgcolor for seg in strip)
        others = [n for n, item in enumerate(scrollback.items)
                  if item.kind == "user" and "zebra" in item.text and item.key != current]
        for n in others:
            strip = scrollback.find_styled(scrollback._lines[scrollback._starts[n]], scrollback._starts[n])
            assert any(seg.style is not None and seg.style.bgcolor == FOUND.bgcolor for seg in strip)
        for _ in range(5):
            await pilot.press("backspace")
        for ch in "okapi":
            await pilot.press(ch)
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert bar.hits == [] and _count(app) == "no match"
        await pilot.press("escape")
        await pilot.pause()
        assert not app.query(FindBar)
        assert scrollback.find_pattern is None and app.focused is app.prompt_input


async def test_a_query_typed_fast_shows_only_the_last_ones_hits(bench, monkeypatch):
    """Each key restarts the search (debounced, the older one cancelled): a slow search of
    "z" or "ze" never lands after the one of "zebra" began, nor shows its hits."""
    import asyncio

    async with bench.prep() as session:
        await _long_history(session, 40)
    log: list[tuple[str, str]] = []
    real = Finder.find

    async def slow(self, text):
        log.append(("start", text))
        # The shorter the query, the slower (more hits): without cancelling, "z" would end
        # last and show its hits under "zebra".
        await asyncio.sleep(0.6 - 0.1 * len(text))
        found = await real(self, text)
        log.append(("end", text))
        return found

    monkeypatch.setattr(Finder, "find", slow)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        await pilot.pause()
        bar = app.query_one(FindBar)
        for ch in "zebra":
            await pilot.press(ch)
            await pilot.pause(0.08)  # past the debounce, before a slow search ends
        await pilot.pause(0.8)
        await app.workers.wait_for_complete()
        await pilot.pause()
        starts = [text for event, text in log if event == "start"]
        assert len(starts) >= 2 and starts[-1] == "zebra"
        for n, (event, text) in enumerate(log):  # an end follows its own start, no other
            if event == "end":
                assert [t for e, t in log[:n] if e == "start"][-1] == text, log
        assert ("end", "zebra") in log
        assert bar.query_text == "zebra" and len(bar.hits) == 2 and _count(app) == "2 of 2"


async def test_the_finder_over_a_child_finds_what_it_inherited(bench):
    async with bench.prep() as session:
        root = root_id(session)
        batch = WriteBatch()
        batch.add(root, "user", {"content": "the okapi lives in forests"})
        batch.add(root, "assistant", {"content": "yes"})
        await session.commit(batch)
        await session.command(root, "/fork --name kid")
        kid = session.tree.resolve("kid").id
        batch = WriteBatch()
        batch.add(kid, "user", {"content": "more about the okapi"})
        await session.commit(batch)
        hits, more = await Finder(session, kid).find("okap")
        assert len(hits) == 2 and not more
        assert hits[0].key < hits[1].key  # the inherited one first: transcript order


def test_find_bar_snapshot(bench, snap_compare):
    bench.prepare(lambda session: _long_history(session, 30))
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await _find(app, pilot, "zebra")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_find_bar_snapshot_narrow(bench, snap_compare):
    bench.prepare(lambda session: _long_history(session, 30))
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await _find(app, pilot, "reply 2")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
