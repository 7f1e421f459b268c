"""Agent state has one owner (issue 24, item 3): what the log says, the replayed cache and
the live turn apart; status derived, never assigned; each part written in one place."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

import ikigai_tui
from ikigai_tui.core.agents import AgentRuntime
from ikigai_tui.core.events import AgentRecord

PACKAGE = Path(ikigai_tui.__file__).parent
# Who may write which part: the live turn's control, the log's columns.
TURN_WRITERS = {"begin", "finishing", "end", "streaming", "streamed"}
ALLOWED = {
    "turn": {"core/session.py", "core/turns.py"},
    "apply_update": {"core/session.py"},
}


def _agent(status: str = "idle") -> AgentRuntime:
    return AgentRuntime.from_record(AgentRecord("a1", None, "root", "m", status, 0.0, None, None))


async def test_status_follows_the_turn_and_the_log() -> None:
    agent = _agent()
    assert (agent.status, agent.in_turn, agent.busy) == ("idle", False, False)
    gate = asyncio.Event()
    task = agent.turn.begin(lambda: asyncio.get_running_loop().create_task(gate.wait()))
    assert (agent.status, agent.in_turn, agent.busy, agent.task) == ("working", True, True, task)
    agent.turn.finishing()  # deferred writes: not deferred again, still working
    assert (agent.status, agent.in_turn) == ("working", False)
    gate.set()
    await task
    agent.turn.end()
    assert (agent.status, agent.in_turn, agent.busy, agent.task) == ("idle", False, False, task)
    agent.apply_update("status", "dead")
    assert agent.status == "dead" and agent.dead
    agent.turn.begin(lambda: task)
    assert agent.status == "dead"  # a killed agent's turn ending does not revive it


def test_a_dead_row_opens_dead_and_updates_apply_by_column() -> None:
    assert _agent("dead").status == "dead"
    agent = _agent()
    agent.apply_update("model", "openai/gpt-4o")
    agent.apply_update("name", "scout")
    assert (agent.model, agent.name) == ("openai/gpt-4o", "scout")
    with pytest.raises(ValueError):
        agent.apply_update("unread", 3)


def test_status_cannot_be_assigned() -> None:
    with pytest.raises(AttributeError):
        _agent().status = "working"  # type: ignore[misc]


def test_the_reply_so_far_is_read_not_reached_into() -> None:
    agent = _agent()
    assert agent.reply_so_far() is None
    parts = agent.turn.streaming()
    assert agent.reply_so_far() is None  # nothing arrived yet
    parts.extend(["Hel", "lo"])
    assert agent.reply_so_far() == ("Hello", 2)
    agent.turn.streamed()
    assert agent.reply_so_far() is None


def _writes(tree: ast.AST) -> list[tuple[str, int]]:
    """(what, line) for each write of an agent's turn state or log columns in a module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if (node.func.attr in TURN_WRITERS and isinstance(owner, ast.Attribute)
                    and owner.attr == "turn"):
                out.append(("turn", node.lineno))
            elif node.func.attr == "apply_update":
                out.append(("apply_update", node.lineno))
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr in (
                    "killed", "phase", "reply", "in_turn", "status", "task"):
                inside = isinstance(target.value, ast.Name) and target.value.id == "self"
                if not inside:
                    out.append((f"assign .{target.attr}", node.lineno))
    return out


def test_each_part_has_one_writer() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where == "core/agents.py":
            continue
        for what, line in _writes(ast.parse(path.read_text(), str(path))):
            if where not in ALLOWED.get(what, set()):
                found.append(f"{where}:{line} {what}")
    assert found == []
