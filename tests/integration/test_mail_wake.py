"""Mail that acts (issue 27 item 2), over real litellm and the loopback fake: mail to an
idle agent on "wake" makes it run /check-mail (the same events) and take a turn; mail
during a turn wakes it once at the turn's end for all of it; a dead agent never wakes;
two agents mailing each other stop at wake_limit with one line; "manual" is unchanged;
the mode (/mail, /fork --mail, the config) survives a restart and is inherited."""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.mailbox import MailSettings
from ikigai_tui.core.notices import ErrorNotice
from tests.fakes.items import Reply
from tests.integration.mail_helpers import answer_by, child, settled, wakes
from tests.integration.provider_helpers import conversation, slash

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


async def test_mail_wakes_an_idle_child_which_reads_it_and_takes_a_turn(make):
    h = await make()
    await h.session.command(h.root, "/fork --name kid")
    kid = child(h, "kid")
    assert (await h.session.command(kid, "/mail")).lines == [
        f"Mail of {h.session.tree.label(kid)}: wake (the default for a child); mail wakes it: "
        "it reads its mail and takes a turn by itself."]
    h.fake.queue(Reply(text="on it"))
    await h.session.command(h.root, "/send kid please look at the tests")
    await settled(h)
    [woke] = await wakes(h, kid)
    assert woke["text"] == "/check-mail" and woke["output"] == ["1 mail read into the context."]
    kinds = [e.kind for e in await h.events(kid)]
    assert kinds[-6:] == ["mail", "command", "mail_read", "user", "assistant", "usage"]
    [request] = h.fake.requests
    assert conversation(request)[-1] == (
        "user", f"Mail from {h.session.tree.label(h.root)}: please look at the tests")
    assert h.session.tree[kid].unread == 0 and h.session.tree[kid].status == "idle"


async def test_mail_during_a_turn_wakes_it_once_when_the_turn_ends(make):
    h = await make()
    await h.session.command(h.root, "/fork --name kid")
    kid = child(h, "kid")
    h.fake.queue(Reply(text="slow words here", chunk_size=2, chunk_delay=0.05), Reply(text="both read"))
    turn = await h.session.say(kid, "work")
    await asyncio.sleep(0.2)
    assert h.session.tree[kid].in_turn
    await h.session.command(h.root, "/send kid first")
    await h.session.command(h.root, "/send kid second")
    assert await wakes(h, kid) == []  # not mid-turn
    assert await turn
    await settled(h)
    [woke] = await wakes(h, kid)
    assert woke["output"] == ["2 mails read into the context."]
    assert len(h.fake.requests) == 2
    last = conversation(h.fake.requests[-1])
    label = h.session.tree.label(h.root)
    assert last[-3:] == [("assistant", "slow words here"), ("user", f"Mail from {label}: first"),
                         ("user", f"Mail from {label}: second")]


async def test_a_dead_agent_never_wakes(make):
    h = await make()
    await h.session.command(h.root, "/fork --name kid")
    kid = child(h, "kid")
    await h.session.command(h.root, "/kill kid")
    batch = WriteBatch()  # mail committed to it anyway (another process's, say)
    batch.add(kid, "mail", {"from": h.root, "text": "are you there?"})
    await h.session.commit(batch)
    await settled(h)
    assert await wakes(h, kid) == [] and h.fake.requests == []


async def test_two_agents_mailing_each_other_stop_at_the_wake_limit(make):
    h = await make(settings_of_session={"mail": MailSettings("wake", wake_limit=3)})
    await h.session.command(h.root, "/fork --name kid")
    kid, root = child(h, "kid"), h.root

    def rule(role: str, text: str) -> Reply | None:
        if role == "tool":
            return Reply(text="sent")
        to = "kid" if "from kid" in text or text == "start" else root[:8]
        return Reply(tool_calls=[slash("send", f"{to} ping")])

    h.fake.respond(answer_by(rule))
    assert await h.say("start")
    await settled(h)
    assert len(await wakes(h, kid)) == 3 and len(await wakes(h, root)) == 3
    limits = [n.message for n in h.of(ErrorNotice) if "wake_limit" in n.message]
    assert len(limits) == 1 and "turns woken by mail in a row" in limits[0]
    assert h.session.tree[root].unread + h.session.tree[kid].unread == 1  # the mail waits
    # A message typed to it counts as you acting: its mail wakes it again.
    h.fake.respond(answer_by(lambda role, text: Reply(text="quiet now")))
    limited = next(a for a in (root, kid) if h.session.tree[a].unread)
    await h.say("carry on", limited)
    await h.session.command(kid if limited == root else root, f"/send {limited[:8]} one more")
    await settled(h)
    assert len(await wakes(h, limited)) == 4


async def test_manual_mail_waits_for_check_mail_as_before(make):
    h = await make()
    await h.session.command(h.root, "/fork --name kid --mail manual")
    kid = child(h, "kid")
    await h.session.command(h.root, "/send kid hello there")
    await settled(h)
    assert await wakes(h, kid) == [] and h.fake.requests == []
    assert h.session.tree[kid].unread == 1
    out = await h.session.command(kid, "/check-mail")
    assert out.lines == ["1 mail read into the context."]
    assert h.fake.requests == []  # reading does not start a turn


async def test_the_mode_is_inherited_and_survives_a_restart(make, tmp_path):
    h = await make()
    root = h.root
    assert (await h.session.command(root, "/mail")).lines[0].endswith(
        "manual (the default for the root); its mail waits for /check-mail.")
    await h.session.command(root, "/fork --name plain")
    await h.session.command(root, "/mail wake")
    await h.session.command(root, "/fork --name heir")
    await h.session.command(child(h, "heir"), "/mail manual")
    await h.session.command(child(h, "heir"), "/fork --name grandchild")
    await h.session.command(root, "/fork --name told --mail manual")
    with pytest.raises(Exception, match="--mail takes wake or manual"):
        await h.session.command(root, "/fork --mail sometimes")

    async def modes(session) -> dict[str, tuple[str, str]]:
        out = {}
        for agent in session.tree:
            mode = await session.mailwake.mode(agent)
            out[agent.name] = (mode.mode, mode.why)
        return out

    expected = {"root": ("wake", "set by /mail"), "plain": ("wake", "the default for a child"),
                "heir": ("manual", "set by /mail"), "grandchild": ("manual", "set at its fork"),
                "told": ("manual", "set at its fork")}
    assert await modes(h.session) == expected
    from tests.integration.provider_helpers import close
    await close(h)
    again = await make(path=h.path)
    assert await modes(again.session) == expected
    # The config's mail is the default of everyone without a mode of their own.
    third = await make(path=tmp_path / "other.db", settings_of_session={"mail": MailSettings("manual")})
    await third.session.command(third.root, "/fork --name kid")
    assert await modes(third.session) == {"root": ("manual", "the config's mail"),
                                          "kid": ("manual", "the config's mail")}
