"""No long stall while a reply streams (issue 14, stall_stream_ms).

Full garbage collections are put off while a reply streams (heap.defer_full_collections:
each walked all of the reply's lines, a 10-40 ms stall every ~0.3 s of a fast stream);
the collector's thresholds come back when the last reply streaming ends, the collection
put off runs then, and nothing piles up from one reply to the next. A repaint of the
scrollback (every line, each time a followed reply scrolls it) looks its style up once,
not once a line."""

from __future__ import annotations

import gc

import pytest

from ikigai_tui.support import heap
from ikigai_tui.core.notices import StreamDelta
from ikigai_tui.tui.widgets.scrollback import Scrollback

from .conftest import SIZE, idle, root_id, say, settle


class Owner:  # any object a weak reference can point to
    pass


@pytest.fixture(autouse=True)
def _default_thresholds():
    saved, was = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(700, 10, 10)
    gc.enable()
    yield
    assert not heap.full_collections_deferred(), "a test left full collections deferred"
    heap.collect()  # (a test that did not run the collection put off)
    gc.set_threshold(*saved)
    if not was:
        gc.disable()


def test_deferred_until_the_last_owner_resumes_and_then_due():
    a, b = Owner(), Owner()
    heap.defer_full_collections(a)
    heap.defer_full_collections(a)  # idempotent
    heap.defer_full_collections(b)
    assert gc.get_threshold() == heap.STREAMING_THRESHOLDS
    assert heap.collect() == 0  # not while a reply streams
    assert heap.resume_full_collections(a) is False
    assert gc.get_threshold() == heap.STREAMING_THRESHOLDS  # b still streams
    assert heap.resume_full_collections(b) is True
    assert heap.resume_full_collections(b) is False  # once
    assert not heap.full_collections_deferred()
    assert gc.get_threshold() == heap.STREAMING_THRESHOLDS  # until the collection put off
    heap.collect()
    assert gc.get_threshold() == (700, 10, 10)


def test_an_owner_gone_without_resuming_gives_the_thresholds_back():
    owner = Owner()
    heap.defer_full_collections(owner)
    assert gc.get_threshold() == heap.STREAMING_THRESHOLDS
    del owner
    gc.collect()
    assert gc.get_threshold() == (700, 10, 10)
    other = Owner()  # and a later deferral saves the right threshold
    heap.defer_full_collections(other)
    assert heap.resume_full_collections(other)
    heap.collect()
    assert gc.get_threshold() == (700, 10, 10)


def test_a_put_off_collection_frees_cycles():
    owner = Owner()
    heap.defer_full_collections(owner)
    made = []
    for _ in range(50):
        cycle: list = []
        cycle.append(cycle)
        made.append(cycle)
    ids = {id(c) for c in made}
    del made, cycle
    assert heap.resume_full_collections(owner)
    assert heap.collect() >= 50
    assert not ids & {id(o) for o in gc.get_objects()}


@pytest.mark.serial  # a wall-clock bound: no collection within one pause of the end (0.1 s timer)
async def test_a_streaming_reply_defers_full_collections_until_it_ends(bench, monkeypatch):
    async with bench.prep() as session:
        await say(session, root_id(session), "Hello.")
    collected: list[int] = []
    real = heap.collect
    monkeypatch.setattr("ikigai_tui.tui.widgets.scrollback_stream.collect",
                        lambda: collected.append(real()) or collected[-1])
    app = bench.app(delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        sb.stream("The first piece of a reply.")
        assert heap.full_collections_deferred()
        assert gc.get_threshold() == heap.STREAMING_THRESHOLDS
        await pilot.pause()
        assert not collected
        sb.end_stream()
        await pilot.pause()
        assert not collected  # not in the turn that draws the end ...
        assert gc.get_threshold() == heap.STREAMING_THRESHOLDS  # (nor a full one of Python's)
        await pilot.pause(0.3)
        assert len(collected) == 1  # ... but shortly after, on a turn of its own
        assert gc.get_threshold() == (700, 10, 10)


async def test_a_real_reply_gives_the_collector_back_when_committed(bench):
    async with bench.prep() as session:
        await say(session, root_id(session), "Hello.")
    app = bench.app(delay=0.02)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_id(app.session)
        seen: list[bool] = []
        app.session.listeners.append(
            lambda n: seen.append(heap.full_collections_deferred()) if isinstance(n, StreamDelta) else None)
        await app.session.say(root, "Tell me about kiwis.")
        await idle(pilot)
        await pilot.pause(0.3)
        assert len(seen) > 3 and any(seen[1:])  # deferred while it streamed ...
        assert not heap.full_collections_deferred()  # ... and not after
        assert gc.get_threshold() == (700, 10, 10)


async def test_replies_leave_nothing_behind(bench):
    """Objects the collector tracks after 5 replies and after 25: what one reply leaves
    (its lines, their caches, the parsers' cycles) is gone once it ends."""
    async with bench.prep() as session:
        await say(session, root_id(session), "Hello.")
    app = bench.app(delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback

        async def replies(n: int) -> int:
            for _ in range(n):
                for i in range(120):
                    sb.stream(f"word {i} and `code` and **bold** " + ("\n\n" if i % 9 == 8 else ""))
                    if i % 20 == 0:
                        app.screen._on_timer_update()  # painted: the lines' caches fill
                        await pilot.pause()
                sb.end_stream()
                await pilot.pause()
            await pilot.pause()
            gc.collect()
            return len(gc.get_objects()) + gc.get_freeze_count()  # frozen ones too

        await replies(5)  # caches warm up
        after_5 = await replies(5)
        after_25 = await replies(20)
        assert after_25 - after_5 < 2_000, (after_5, after_25)


async def test_a_repaint_looks_the_scrollback_style_up_once_not_once_a_line(bench, monkeypatch):
    async with bench.prep() as session:
        await say(session, root_id(session), "Hello.")
    app = bench.app(delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        sb.stream("".join(f"line {i} of a long reply\n\n" for i in range(60)))
        sb.end_stream()  # (its lines go; the view is full of the transcript's)
        sb.stream("".join(f"line {i} of a long reply\n\n" for i in range(60)))
        await pilot.pause(0.1)
        before = [sb.render_line(y).text for y in range(sb.size.height)]
        looked, drawn = [], []
        style = Scrollback.rich_style
        render_line = Scrollback.render_line
        monkeypatch.setattr(Scrollback, "rich_style",
                            property(lambda self: looked.append(1) or style.fget(self)))
        monkeypatch.setattr(Scrollback, "render_line",
                            lambda self, y: drawn.append(y) or render_line(self, y))
        sb.refresh()
        await pilot.pause()  # the repaint
        assert len(drawn) >= sb.size.height - 1
        assert len(looked) <= 3, f"{len(looked)} style lookups for {len(drawn)} lines"
        monkeypatch.undo()
        assert [sb.render_line(y).text for y in range(sb.size.height)] == before
        sb.end_stream()
        await pilot.pause()


def test_painted_lines_are_not_reference_cycles():
    """Textual's Strip.divide and crop_extend cache the strip itself, in its own cache,
    when there is nothing to cut or crop: every painted line was a cycle for the
    collector (strip_cycles, installed by the app). Same results, no cycles."""
    from rich.segment import Segment
    from textual.strip import Strip

    from ikigai_tui.tui.widgets import strip_cycles

    strip_cycles.install()

    def paint(n: int) -> list[list[str]]:
        shown = []
        for i in range(n):
            strip = Strip([Segment(f"line {i:03} "), Segment("of text")])
            width = strip.cell_length
            whole = strip.crop_extend(0, width, None)
            pieces = whole.divide([width])
            split = strip.divide([4, width, width + 5])
            shown.append([s.text for s in (whole, *pieces, *split,
                                           strip.crop_extend(2, width + 3, None))])
        return shown

    assert paint(1) == [["line 000 of text", "line 000 of text", "line", " 000 of text",
                         "ne 000 of text   "]]
    gc.collect()
    paint(200)
    assert gc.collect() < 50  # (Textual's own versions: ~500 objects in cycles)
