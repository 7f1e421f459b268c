"""`-n auto` starts two workers per core and hands out the slowest files first
(tests/scheduling.py, hooks in tests/conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import scheduling

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Item:
    nodeid: str


def test_auto_is_two_workers_per_core_unless_the_variable_says():
    assert scheduling.auto_workers(2, {}) == 4
    assert scheduling.auto_workers(8, {"PYTEST_XDIST_AUTO_NUM_WORKERS": ""}) == 16
    # xdist's own rules then: its variable, or its fallback when cores are unknown
    assert scheduling.auto_workers(2, {"PYTEST_XDIST_AUTO_NUM_WORKERS": "3"}) is None
    assert scheduling.auto_workers(None, {}) is None


def test_the_hook_xdist_asks_gives_two_per_core(pytestconfig, monkeypatch):
    if not pytestconfig.pluginmanager.hasplugin("xdist"):
        pytest.skip("pytest-xdist is not loaded (-p no:xdist)")
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    workers = pytestconfig.hook.pytest_xdist_auto_num_workers(config=pytestconfig)
    assert workers == 2 * scheduling.cores()
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert pytestconfig.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == 3


def test_the_slowest_files_go_first_each_file_in_its_order():
    items = [Item(n) for n in ("a.py::x", "b.py::x", "a.py::y", "c.py::x", "d.py::x",
                               "b.py::y", "e.py::x")]
    seconds = {"b.py": 30, "d.py": 30, "c.py": 5, "a.py": 1}
    ordered = [i.nodeid for i in scheduling.slowest_files_first(items, seconds)]
    assert ordered == ["b.py::x", "b.py::y", "d.py::x", "c.py::x", "a.py::x", "a.py::y",
                       "e.py::x"]


def test_the_durations_name_only_files_that_exist():
    seconds = scheduling.file_seconds()
    assert len(seconds) > 20
    missing = [path for path in seconds if not (ROOT / path).is_file()]
    assert missing == [], "renamed or removed: update tests/durations.json"
