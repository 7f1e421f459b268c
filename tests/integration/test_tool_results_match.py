"""`/forget CRITERIA` sees tool calls and results as part of their exchange (issue 25 item
5): "the build logs" finds, with the local matcher, the exchanges whose `bash` results
hold build logs (asked for in words that say nothing of a build), each call with its
result, and leaves the other exchanges.

The local matcher scores exchanges, and one on-topic exchange among a few needs a strong
score on its own (local_score.TUNED: the mean of the best 3 must pass the gate, 0.18, or
the best alone 0.5): a build log scores ~0.26 against "the build logs", so one or two
builds among a few other exchanges are not found (measured); three, as a working
agent's context has, are found by the text of their tool output alone."""

from __future__ import annotations

import pytest

from ikigai_tui.core.commands.bus import Pending
from tests.fakes.server import Reply
from tests.integration.tool_results_helpers import tooled

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)
FIRST_BUILD = "\n".join([
    "make[1]: Entering directory '/work/project/src'",
    "gcc -O2 -Wall -c parser.c -o parser.o",
    "gcc -O2 -Wall -c lexer.c -o lexer.o",
    "lexer.c:88:12: warning: unused variable 'state' [-Wunused-variable]",
    "gcc -o ikigai parser.o lexer.o main.o -lm",
    "make[1]: Leaving directory '/work/project/src'",
    "Build finished: 3 objects compiled, 1 warning.",
])
SECOND_BUILD = FIRST_BUILD.replace("lexer.c:88:12: warning: unused variable 'state' "
                                   "[-Wunused-variable]\n", "").replace("1 warning", "0 warnings")


@pytest.fixture
def hw(make, tmp_path, monkeypatch):
    return tooled(make, tmp_path, monkeypatch)


async def shown(h, fake, folder, name: str, text: str, question: str) -> None:
    (folder / name).write_text(text)
    fake.queue(Reply(tool_calls=[("bash", {"command": f"cat {name}"})]),
               Reply(text="That is what it says."))
    assert await h.say(question)


async def test_forget_the_build_logs_finds_the_bash_results(hw, fake, tmp_path):
    h = await hw()
    folder = tmp_path / "work"
    fake.queue(Reply(text="A risotto wants arborio rice, warm stock added slowly, and parmesan."))
    assert await h.say("How do I cook a good mushroom risotto for dinner?")
    await shown(h, fake, folder, "notes.txt", FIRST_BUILD, "What is in that file I left there?")
    fake.queue(Reply(text="Saturn has the most moons we know of, and wide rings of ice."))
    assert await h.say("Which planet has the most moons?")
    await shown(h, fake, folder, "later.txt", SECOND_BUILD, "And in the other one?")
    await shown(h, fake, folder, "last.txt", SECOND_BUILD.replace("3 objects", "1 object"),
                "And this one?")
    calls = [e.id for e in await h.events(kind="tool_call")]
    results = await h.events(kind="tool_result")
    assert all("Build finished" in r.payload["content"] for r in results)
    pending = await h.session.propose(h.root, "/forget --local the build logs")
    assert isinstance(pending, Pending), pending
    chosen = {i.id for i in pending.proposal.items if i.chosen}
    assert {*calls, *(r.id for r in results)} <= chosen
    users = {e.payload["content"]: e.id for e in await h.events(kind="user")}
    assert users["How do I cook a good mushroom risotto for dinner?"] not in chosen
    assert users["Which planet has the most moons?"] not in chosen
