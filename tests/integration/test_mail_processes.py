"""Mail that acts across processes (issue 27 item 2), real `ikigai` processes against the
loopback fake: `ikigai run` waits for the turns mail wakes (a report waking its parent
included); mail another process commits reaches this one through the feed, and the
process that holds the agent's lease (here, mid-turn) is the one that wakes it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.fakes.items import Reply
from tests.integration.acceptance_helpers import Cli
from tests.integration.mail_helpers import child, settled, wakes
from tests.integration.processes import log_rows
from tests.integration.provider_helpers import conversation


def test_run_waits_for_the_turns_mail_wakes(tmp_path, fake):
    fake.respond(lambda received: Reply(text="ok"))
    cli = Cli(tmp_path / "run.db", fake)
    cli.ok("/mail wake", "/fork --name kid --report look around")
    rows = log_rows(cli.db)
    kinds = [(kind, payload.get("source")) for _i, _a, kind, payload in rows]
    root = rows[0][1]
    # The child answered, its report woke the root, and the root's turn ended: all before
    # `ikigai run` returned.
    assert ("command", "wake") in kinds
    mine = [kind for _i, agent, kind, _p in rows if agent == root]
    assert mine[-5:] == ["command", "mail_read", "user", "assistant", "usage"]


def test_the_configured_mail_reaches_every_agent_without_a_mode(tmp_path, fake):
    cli = Cli(tmp_path / "manual.db", fake, env={"IKIGAI_MAIL": "manual"})
    out = cli.ok("/fork --name kid", "/send kid hello", "/mail")
    assert out[-1].endswith("manual (the config's mail); its mail waits for /check-mail.")
    assert all(payload.get("source") != "wake" for *_rest, payload in log_rows(cli.db))
    assert fake.requests == []


@pytest.mark.parametrize("fmt", ["openai"], indirect=True)
async def test_another_process_s_mail_wakes_the_agent_where_its_turn_runs(make, fake):
    h = await make(timeout=60)  # the first request waits for the other process
    await h.session.command(h.root, "/fork --name kid")
    kid = child(h, "kid")
    release = threading.Event()

    def respond(received):
        if conversation(received)[-1] == ("user", "first job"):
            release.wait(30)  # kid's turn stays in flight here until the other process is done
            return Reply(text="first job done")
        return Reply(text="read your mail")

    fake.respond(respond)
    turn = await h.session.say(kid, "first job")
    await asyncio.sleep(0.2)
    other = Cli(h.path, fake)
    done = await asyncio.to_thread(other.run, "/send kid from the other process")
    assert done.returncode == 0, done.stderr
    assert h.session.tree[kid].in_turn  # the other process could not wake it: not its lease
    release.set()
    assert await asyncio.wait_for(turn, 20)
    await settled(h)
    [woke] = await wakes(h, kid)
    assert woke["output"] == ["1 mail read into the context."]
    assert [e.payload["content"] for e in await h.events(kid, "assistant")] == [
        "first job done", "read your mail"]
