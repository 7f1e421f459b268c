"""The full screen's start-up imports what its first frame needs and no more (the cold
start figure, benchmarks/tui.py): the command handlers, the tools, compaction and the
memory tool's modules load when first used, after the first frame; so do the command
bus and the context planner (with the proposals and the pruned-turn summaries they use),
which the session makes at its first command or plan, and the input's submit path."""

from __future__ import annotations

import subprocess
import sys

LATER = (
    "ikigai_tui.core.handlers.context", "ikigai_tui.core.handlers.memory",
    "ikigai_tui.core.handlers.compact", "ikigai_tui.core.handlers.agents",
    "ikigai_tui.core.compaction.service", "ikigai_tui.core.compaction.summarise",
    "ikigai_tui.core.matching.llm", "ikigai_tui.core.tools.memory",
    "ikigai_tui.core.tools.slash", "ikigai_tui.core.memory.change",
    "ikigai_tui.tui.screens.memory_diff", "email.utils", "secrets",
    "ikigai_tui.core.commands.bus", "ikigai_tui.core.commands.context", "ikigai_tui.core.context",
    "ikigai_tui.core.commands.proposals", "ikigai_tui.core.compaction.pruned", "ikigai_tui.tui.submit",
)


def _loaded(statement: str, names: tuple[str, ...]) -> list[str]:
    code = f"import sys\n{statement}\nprint(','.join(m for m in {names!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_the_app_imports_none_of_what_comes_after_the_first_frame():
    assert _loaded("import ikigai_tui.tui.app, ikigai_tui.runtime", LATER) == []


def test_a_command_still_finds_its_handler():
    statement = ("import asyncio\nfrom ikigai_tui.core.commands.registry import REGISTRY\n"
                 "REGISTRY.get('marks')\nimport ikigai_tui.core.handlers.context")
    assert _loaded(statement, LATER) == [  # the check can fail; the handler's own imports too
        "ikigai_tui.core.handlers.context", "ikigai_tui.core.commands.context",
        "ikigai_tui.core.commands.proposals"]


def test_the_session_makes_its_command_bus_and_planner_when_first_used():
    statement = (
        "import asyncio, tempfile, pathlib\n"
        "from ikigai_tui.core.session import Session, SessionSettings\n"
        "from ikigai_tui.store.sqlite.store import Store\n"
        "from ikigai_tui.llm.providers import Providers\n"
        "async def main():\n"
        "    store = await Store.open(pathlib.Path(tempfile.mkdtemp()) / 'db')\n"
        "    session = await Session.open(store, Providers(), SessionSettings())\n"
        "    root = session.tree.root.id\n"
        "    assert 'ikigai_tui.core.commands.bus' not in sys.modules\n"
        "    assert (await session.measure(root)).tokens >= 0\n"
        "    assert (await session.command(root, '/mark here')).lines\n"
        "    await session.close()\n"
        "    await store.close()\n"
        "asyncio.run(main())"
    )
    assert _loaded(statement, ("ikigai_tui.core.commands.bus", "ikigai_tui.core.context")) == [
        "ikigai_tui.core.commands.bus", "ikigai_tui.core.context"]
