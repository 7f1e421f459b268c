"""How `make test` spreads the suite over its workers (hooks in tests/conftest.py).

Most of the suite waits rather than computes: a Pilot test paces its keys and pauses by
the clock (textual's wait_for_idle sleeps 20 ms twice per key), a CLI test waits for its
child. Two workers per core keep the cores busy while one worker waits (`-n auto` only;
`-n N` and PYTEST_XDIST_AUTO_NUM_WORKERS still choose exactly).

The files known to be slow (durations.json: seconds per file, summed from
`pytest -n 2 --durations=0`) are handed out first, so the run does not end waiting on a
long file started last. A file's tests keep their order (its module fixtures are built
as before); files not listed, being quick, come after, in their collected order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

DURATIONS = Path(__file__).with_name("durations.json")
WORKERS_PER_CORE = 2


class _Item(Protocol):
    nodeid: str


Item = TypeVar("Item", bound=_Item)


def auto_workers(cores: int | None, env: Mapping[str, str]) -> int | None:
    """How many workers `-n auto` starts; None leaves the choice to pytest-xdist (its
    PYTEST_XDIST_AUTO_NUM_WORKERS, or a core count it could not find)."""
    if env.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or not cores:
        return None
    return WORKERS_PER_CORE * cores


def file_seconds(path: Path = DURATIONS) -> dict[str, float]:
    return json.loads(path.read_text())


def slowest_files_first(items: Sequence[Item], seconds: Mapping[str, float]) -> list[Item]:
    """The items, the slowest files' first; within a file, and among equal files, the
    collected order."""
    rank = {}
    for index, item in enumerate(items):
        rank.setdefault(item.nodeid.split("::")[0], index)

    def key(item: Item) -> tuple[float, int]:
        path = item.nodeid.split("::")[0]
        return -seconds.get(path, 0.0), rank[path]

    return sorted(items, key=key)


def cores() -> int | None:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count()
