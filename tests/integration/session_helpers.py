"""Shared pieces of the agent and command tests (test_agents_*, test_commands_*), all over
a real Session on the offline model: a turn that must succeed, an agent's context as
(id, kind, content) or as ids, a /fork that must succeed, and a small tree of agents.
"""

from __future__ import annotations


async def talk(session, agent_id: str, text: str) -> None:
    task = await session.say(agent_id, text)
    assert await task


async def msgs(session, agent_id: str) -> list[tuple[int, str, str]]:
    return [(i, kind, payload.get("content")) for i, kind, payload in await session.messages(agent_id)]


async def fork(session, agent_id: str, args: str = "", source: str = "human") -> str:
    result = await session.command(agent_id, f"/fork {args}".strip(), source=source)
    assert result.lines[0].startswith("Forked. Child: ")
    assert isinstance(result.data, str) and result.data in session.tree
    return result.data


async def ids(session, agent_id: str) -> list[int]:
    return [m[0] for m in (await session.replayer(agent_id)).messages()]


async def build_tree(session):
    """root -> a -> b, root -> c; each with some history."""
    root = session.tree.root.id
    await talk(session, root, "root talk")
    a = await fork(session, root, "--name a")
    await talk(session, a, "a talk")
    b = await fork(session, a, "--name b")
    await talk(session, b, "b talk")
    c = await fork(session, root, "--name c")
    return root, a, b, c
