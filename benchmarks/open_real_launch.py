"""The real program (`python -m ikigai_tui ARGS...`) with two marks and a loop-lag probe:
benchmarks/open_real.py runs this in a pseudo-terminal instead of `python -m ikigai_tui`,
so that what it reads from outside (the screen, the RSS) comes with what only the process
can tell: when the app started, and the stalls of its event loop.

Nothing the program does is changed. `create_app` is wrapped, as its module is imported
(by the command line, as usual), to note the app's start: after the imports, as
benchmarks/tui.py's start-up figures count them. `asyncio.run` (by which Textual runs the
app) is wrapped to start benchmarks/stall.py's LagProbe on the app's loop. At exit, the
JSON file named by OPEN_REAL_STALLS gets {"start": ..., "stalls": [[when, ms], ...],
"litellm": whether litellm was imported by then}, moments in time.perf_counter, which is
CLOCK_MONOTONIC: the parent compares them with its own clock.
"""

from __future__ import annotations

import asyncio
import importlib.abc
import importlib.util
import json
import os
import runpy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stall import LagProbe  # noqa: E402

APP_MODULE = "ikigai_tui.runtime"  # where create_app lives (the composition root)
_run = asyncio.run
_record: dict = {"start": None, "stalls": [], "litellm": False}


class _MarkCreateApp(importlib.abc.MetaPathFinder):
    """Finds the app's module as the other finders do, and wraps its create_app."""

    def find_spec(self, name, path=None, target=None):
        if name != APP_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run_module = spec.loader.exec_module

        def exec_module(module) -> None:
            run_module(module)
            create = module.create_app

            def create_app(*args, **kwargs):
                _record["start"] = time.perf_counter()
                return create(*args, **kwargs)

            module.create_app = create_app

        spec.loader.exec_module = exec_module
        return spec


def _probed_run(main, **kwargs):
    async def probed():
        probe = LagProbe().start()
        try:
            return await main
        finally:
            await probe.stop()
            _record["stalls"] = [[probe._t0 + t, ms] for t, ms in probe.stalls]

    return _run(probed(), **kwargs)


def _write() -> None:
    _record["litellm"] = "litellm" in sys.modules
    path = os.environ.get("OPEN_REAL_STALLS")
    if path:
        Path(path).write_text(json.dumps(_record))


if __name__ == "__main__":
    sys.meta_path.insert(0, _MarkCreateApp())
    asyncio.run = _probed_run
    sys.argv = ["ikigai", *sys.argv[1:]]
    try:
        runpy.run_module("ikigai_tui", run_name="__main__", alter_sys=True)
    finally:
        _write()
