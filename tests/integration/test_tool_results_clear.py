"""/forget --tool-results (issue 25 item 5): the output of older tool results is replaced
by a one-line stub in what the provider receives (every call still paired, on the three
wire formats), after a preview of which results and the tokens saved; /undo brings them
back, /restore ID one; --keep, --tool, --min-tokens choose; the memory tool's results are
never cleared unless named."""

from __future__ import annotations

import pytest

from ikigai_tui.core.commands.bus import Pending
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, Presentation, Verdict
from ikigai_tui.core.errors import CommandError
from tests.fakes.server import Reply
from tests.fakes.tools import output
from tests.integration.tool_results_helpers import dump, next_request, run_tools, tooled


@pytest.fixture
def hw(make, tmp_path, monkeypatch):
    return tooled(make, tmp_path, monkeypatch)


async def propose(h, text: str):
    pending = await h.session.propose(h.root, text)
    assert isinstance(pending, Pending), pending
    return pending


def stub(h_id: int) -> str:
    return f"; /restore {h_id}]"


async def test_preview_lists_the_older_results_and_the_saving_then_the_request_sends_stubs(
        hw, fake, fmt):
    h = await hw()
    ids = await run_tools(h, fake, *(dump(t) for t in "abcde"))
    before = (await h.session.measure(h.root)).tokens
    pending = await propose(h, "/forget --tool-results --keep 2")
    proposal = pending.proposal
    assert proposal.presentation is Presentation.MATCHES
    assert [i.id for i in proposal.items] == [ids["a"], ids["b"], ids["c"]]
    preview = proposal.preview_lines()
    assert "3 tool results" in preview[0] and f"{before:,} -> " in preview[0]
    assert all(i.tokens > 300 for i in proposal.items)  # 60 lines each: the stub saves most
    assert proposal.tokens_after() < before - 900
    assert not await h.events(kind="tool_output")  # nothing written before the answer
    result = await h.session.answer(pending, ACCEPT_ALL)
    assert "Cleared the output of 3 tool results" in result.lines[0]
    after = (await h.session.measure(h.root)).tokens
    assert after == proposal.tokens_after()
    body = await next_request(h, fake)
    for tag in "abc":
        assert f"{tag} line 5 of" not in body
        assert stub(ids[tag]) in body
        assert "[output cleared: " in body
    for tag in "de":
        assert f"{tag} line 5 of" in body
    # the calls stay, with their results (as stubs), and the log keeps the whole text
    assert body.count('dump') >= 5
    logged = {e.id: e.payload["content"] for e in await h.events(kind="tool_result")}
    assert logged[ids["a"]] == output("a", 60)


async def test_undo_brings_them_back_and_restore_brings_one(hw, fake, fmt):
    h = await hw()
    ids = await run_tools(h, fake, *(dump(t) for t in "abcd"))
    whole = (await h.session.measure(h.root)).tokens
    await h.session.command(h.root, "/forget --tool-results --keep 1")
    assert (await h.session.measure(h.root)).tokens < whole - 1500
    restored = await h.session.command(h.root, f"/restore {ids['b']}")
    assert "Brought back the output of 1 tool result" in restored.lines[0]
    before_turn = (await h.session.measure(h.root)).tokens
    body = await next_request(h, fake)
    whole += (await h.session.measure(h.root)).tokens - before_turn  # the turn's messages
    assert "b line 5 of" in body and stub(ids["b"]) not in body
    assert "a line 5 of" not in body and stub(ids["a"]) in body
    undone = await h.session.command(h.root, "/undo")  # the /restore
    assert "cleared again" in undone.lines[0]
    undone = await h.session.command(h.root, "/undo")  # the clearing
    assert "/forget --tool-results --keep 1" in undone.lines[0]
    assert "sent whole again" in undone.lines[0]
    assert (await h.session.measure(h.root)).tokens == whole  # counted whole again
    body = await next_request(h, fake)
    assert "[output cleared" not in body
    assert all(f"{t} line 5 of" in body for t in "abcd")


async def test_keep_tool_and_min_tokens_choose(hw, fake, fmt):
    h = await hw()
    ids = await run_tools(h, fake, dump("a"), dump("b", lines=2), dump("c"), dump("d"))
    chosen = lambda p: [i.id for i in p.proposal.items]  # noqa: E731
    assert chosen(await propose(h, "/forget --tool-results")) == [ids["a"]]  # keeps 3
    assert chosen(await propose(h, "/forget --tool-results --keep 0")) == [
        ids[t] for t in "abcd"]
    assert chosen(await propose(h, "/forget --tool-results --keep 0 --min-tokens 100")) == [
        ids[t] for t in "acd"]
    assert chosen(await propose(h, "/forget --tool-results --keep=0 --tool dump")) == [
        ids[t] for t in "abcd"]
    nothing = await h.session.command(h.root, "/forget --tool-results --keep 0 --tool other")
    assert "No tool output of other to clear" in nothing.lines[0]
    with pytest.raises(CommandError, match="--keep takes a whole number"):
        await h.session.command(h.root, "/forget --tool-results --keep many")
    # a reviewer may untick: only what it kept ticked is cleared
    pending = await propose(h, "/forget --tool-results --keep 0")
    await h.session.answer(pending, Verdict.accept([ids["c"]]))
    [event] = await h.events(kind="tool_output")
    assert event.payload["ids"] == [ids["c"]]
    # once cleared, a result is not offered again
    assert ids["c"] not in chosen(await propose(h, "/forget --tool-results --keep 0"))


async def test_memory_results_are_never_cleared_unless_named(hw, fake, fmt):
    h = await hw()
    memory = Reply(tool_calls=[("memory", {"command": "view", "path": "/memories"})])
    ids = await run_tools(h, fake, dump("a"), memory, dump("b"))
    memory_result = ids[""]
    pending = await propose(h, "/forget --tool-results --keep 0 --min-tokens 0")
    offered = [i.id for i in pending.proposal.items]
    assert offered == [ids["a"], ids["b"]] and memory_result not in offered
    named = await h.session.propose(h.root, "/forget --tool-results --keep 0 --tool memory")
    assert [i.id for i in named.proposal.items] == [memory_result]


async def test_a_reopened_log_replays_the_cleared_results(hw, fake, fmt):
    h = await hw()
    ids = await run_tools(h, fake, *(dump(t) for t in "abc"))
    await h.session.command(h.root, "/forget --tool-results --keep 1")
    measured = (await h.session.measure(h.root)).tokens
    again = await hw(path=h.path)  # a second session over the same log, replayed from disk
    assert set((await again.session.replayer(again.root)).cleared) == {ids["a"], ids["b"]}
    assert (await again.session.measure(again.root)).tokens == measured
    body = await next_request(again, fake)
    assert stub(ids["a"]) in body and "c line 5 of" in body
