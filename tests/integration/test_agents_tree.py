"""Agents (SPEC §6), the tree beyond fork and kill: mail sent between agents (human and
LLM, parent and child) and read with /check-mail; AGENT references resolved by name or
by a unique id prefix, ambiguous or unknown ones refused writing nothing; and the whole
tree (agents, contexts, marks, mail, pins, dead agents) surviving a reopen.
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.mailbox import MailSettings
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.integration.session_helpers import build_tree, fork, msgs, talk


# -- mail -----------------------------------------------------------------------------

# Mail here waits for /check-mail (mail = "manual"): mail that wakes is test_mail_wake's.
MANUAL = SessionSettings(mail=MailSettings("manual"))


@pytest.fixture
async def session(db_path):
    store = await Store.open(db_path)
    sess = await Session.open(store, Providers(), MANUAL)
    yield sess
    await sess.close()
    await store.close()


async def test_send_and_check_mail(session):
    root = session.tree.root.id
    kid = await fork(session, root, "--name kid")
    label = session.tree.label(root)
    out = await session.command(root, "/send kid hello there")
    assert out.lines == [f"Mail sent to {session.tree.label(kid)}."]
    await session.command(root, '/send kid "second one"')
    assert session.tree[kid].unread == 2
    assert len((await session.replayer(kid)).unread) == 2
    before = await msgs(session, kid)
    out = await session.command(kid, "/check-mail")
    # Each mail becomes a user message; the output does not repeat them (issue 13 item 17).
    assert out.lines == ["2 mails read into the context."]
    after = await msgs(session, kid)
    assert after[: len(before)] == before
    assert [(m[1], m[2]) for m in after[len(before):]] == [
        ("user", f"Mail from {label}: hello there"), ("user", f"Mail from {label}: second one")]
    assert session.tree[kid].unread == 0
    assert (await session.replayer(kid)).unread == {}
    assert (await session.command(kid, "/check-mail")).lines == ["No new mail."]
    kinds = [e.kind for e in await session.store.events(kid)]
    assert kinds.count("mail") == 2 and kinds.count("mail_read") == 1
    # The sender's context is untouched by sending.
    assert await msgs(session, root) == []


async def test_mail_from_child_to_parent_and_llm_check_mail(session):
    root = session.tree.root.id
    kid = await fork(session, root, "--name kid")
    await session.command(kid, "/send root done with it", source="llm")
    assert session.tree[root].unread == 1
    out = await session.command(root, "/check-mail", source="llm")
    assert out.lines == [f"Mail from {session.tree.label(kid)}: done with it"]
    assert session.tree[root].unread == 0
    assert (await session.command(root, "/check-mail")).lines == ["No new mail."]


async def test_llm_mails_only_its_own_line_of_agents(session):
    # SPEC §11: the LLM's slash tool cannot reach agents outside its own subtree; it
    # reports up the line that delegated to it. The human may mail anyone.
    root, a, b, c = await build_tree(session)
    before = await session.store.count_events()
    for who, target in ((a, "c"), (c, "a"), (c, "b"), (b, "c"), (a, "a")):
        with pytest.raises(CommandError, match="only send to its own descendants or its ancestors"):
            await session.command(who, f"/send {target} psst", source="llm")
    assert await session.store.count_events() == before
    for who, target in ((b, "a"), (b, root[:8]), (root, "b"), (a, "b")):
        await session.command(who, f"/send {target} report", source="llm")
    assert [session.tree[x].unread for x in (root, a, b, c)] == [1, 1, 2, 0]
    await session.command(c, "/send a from the human")
    assert session.tree[a].unread == 2
    await talk(session, c, "@slash send a psst")
    result = [e for e in await session.store.events(c) if e.kind == "tool_result"][-1]
    assert result.payload["is_error"] is True and "ancestors" in result.payload["content"]
    assert session.tree[a].unread == 2


# -- AGENT resolution -----------------------------------------------------------------


@pytest.fixture
async def fixed_session(db_path):
    """A session whose agent ids (the root's first) are fixed, to test prefixes."""
    ids = iter(["0123456" + "0" * 25, "abc1234" + "0" * 25, "abc1235" + "0" * 25,
                "fedcba" + "9" * 26])
    store = await Store.open(db_path)
    session = await Session.open(store, Providers(), MANUAL, new_id=lambda: next(ids))
    yield session
    await session.close()
    await store.close()


async def test_agent_resolution(fixed_session):
    session = fixed_session
    root = session.tree.root.id
    assert root.startswith("0123456")
    first = (await session.command(root, "/fork")).data
    out = await session.command(root, "/fork --name worker")
    second = out.data
    assert out.lines == ["Forked. Child: abc1235"]  # 6 characters are not unique: 7
    assert session.tree.short_id(first) == "abc1234"
    assert "abc1234  idle" in "\n".join((await session.command(root, "/agents")).lines)
    third = (await session.command(root, "/fork")).data
    assert session.tree.short_id(third) == "fedcba"
    # By unique prefix, long or short, and by name.
    await session.command(root, "/send abc1234 to first")
    await session.command(root, "/send abc1235 to second")
    await session.command(root, "/send worker by name")
    await session.command(root, "/send fed to third")
    await session.command(root, f"/send {root[:8]} to root")
    assert session.tree[first].unread == 1
    assert session.tree[second].unread == 2
    assert session.tree[third].unread == 1
    assert session.tree[root].unread == 1
    assert session.tree.resolve(first).id == first
    # Ambiguous prefixes name the candidates and write nothing.
    before = await session.store.count_events()
    for ref in ("abc", "abc123"):
        with pytest.raises(CommandError) as info:
            await session.command(root, f"/send {ref} hi")
        message = str(info.value)
        assert f"'{ref}' matches several agents" in message
        assert "abc1234" in message and "abc1235" in message
    with pytest.raises(CommandError, match="several agents"):
        await session.command(root, "/kill abc12")
    with pytest.raises(CommandError, match="no agent named or with id starting 'zzz'"):
        await session.command(root, "/kill zzz")
    assert await session.store.count_events() == before
    assert session.tree.label(second) == "worker (abc1235)"


# -- persistence ----------------------------------------------------------------------


async def test_agents_persist_across_reopen(session, db_path):
    root, a, b, c = await build_tree(session)
    await session.command(root, "/mark R")
    await talk(session, root, "brief")
    d = await fork(session, root, "R --name d --model offline go")
    await session.wait_idle()
    await session.command(root, "/kill a")
    await session.command(root, "/send c hello")
    await session.command(c, "/pin c note")
    before = {x.id: (x.parent_id, x.name, x.status, x.model) for x in session.tree}
    contexts = {x: await msgs(session, x) for x in (root, a, b, c, d)}
    marks = [m.name for m in (await session.replayer(root)).valid_marks()]

    store = await Store.open(db_path)
    try:
        again = await Session.open(store, Providers(), MANUAL)
        after = {x.id: (x.parent_id, x.name, x.status, x.model) for x in again.tree}
        assert after == before
        assert again.tree.root.id == root
        assert after[a][2] == after[b][2] == "dead"
        for agent_id, ctx in contexts.items():
            assert await msgs(again, agent_id) == ctx, agent_id
        assert [m.name for m in (await again.replayer(root)).valid_marks()] == marks
        assert len((await again.replayer(c)).unread) == 1
        assert again.tree[c].unread == 1
        assert (await again.replayer(c)).pins == ["c note"]
        assert again.tree.resolve("d").id == d
        with pytest.raises(CommandError, match="dead"):
            await again.say(a, "still there?")
        await again.close()
    finally:
        await store.close()
