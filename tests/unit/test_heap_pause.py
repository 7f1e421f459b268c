"""heap.collector_paused (issue 14): a long load in a background thread runs with the
cyclic collector off (a full collection over a growing heap holds the GIL 20-175 ms: the
event loop freezes), and what it loaded is frozen at the end; the collector comes back on
only if it was on, after the last of nested or concurrent loads."""

from __future__ import annotations

import gc
import sys
import threading

import pytest

from ikigai_tui.support.heap import collector_paused


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if was:  # back as it was (a test here turns it off)
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_off_during_the_load_and_back_on_after():
    with collector_paused():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(made)  # out of later walks


def test_nested_and_concurrent_loads_turn_it_back_on_at_the_last_end():
    inner_done = threading.Event()
    release = threading.Event()

    def other() -> None:
        with collector_paused():
            inner_done.set()
            release.wait(5)

    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()  # the outer one still runs
        worker = threading.Thread(target=other)
        worker.start()
        assert inner_done.wait(5)
    assert not gc.isenabled()  # the other thread's load still runs
    release.set()
    worker.join(5)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_each_import_during_a_load_freezes_what_came_before(tmp_path, monkeypatch):
    """If another part turns the collector on mid-load, a collection walks only what came
    since the last import."""
    (tmp_path / "c1_probe_mod.py").write_text("X = [[i] for i in range(10)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with collector_paused():
        before = gc.get_freeze_count()
        junk = [[i] for i in range(5000)]
        import c1_probe_mod  # noqa: F401
        assert gc.get_freeze_count() >= before + len(junk)
    assert not any(type(f).__name__ == "_FreezeAtEachImport" for f in sys.meta_path)
    sys.modules.pop("c1_probe_mod", None)
