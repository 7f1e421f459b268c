"""Acceptance, SPEC §4 (replay), driven through `ikigai run` and `context --json`.

The worked example of the design notes: messages 1-100, /mark, 101-150, a /forget of
50-75 made in conversation (the planning exchange leaves with them), 151-200, /rewind
-> the context is messages 1-49 and 76-100, and that is what the provider receives next.
"""

from __future__ import annotations

import json

import pytest

from tests.fakes.server import FakeProvider, Reply, validate_pairs
from tests.integration.acceptance_helpers import Cli, assert_one_error, conversation

FORGET_REQUEST = "Please forget messages 50 to 75, we are done with that."


def ordinal_text(n: int) -> str:
    """Message n of the example: odd ones are the user's u1, u2, ...; even ones the replies."""
    return f"u{(n + 1) // 2}" if n % 2 else f"a{n // 2}"


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def test_worked_example_forget_with_planning_then_rewind(database, tmp_path, fake):
    """The example at a fifth of its size (each request goes through litellm): messages
    1-20, /mark, 21-30, a /forget of 10-15 asked in conversation (31-34, the planning),
    35-40, /rewind -> messages 1-9 and 16-20. The offline test below runs it full size."""
    # The user's rule lets the LLM apply its forget (issue 28: "ask" refuses it headless).
    cli = Cli(database("we"), fake, env={"IKIGAI_LLM_CONTEXT_CHANGES": "allow"})
    state: dict = {}

    def respond(received):
        last = received.body["messages"][-1]
        if last["role"] == "tool":
            return Reply(text="Done.")
        text = last.get("content") or ""
        if text == FORGET_REQUEST:
            return Reply(tool_calls=[("filter_context", {
                "action": "apply", "mode": "forget", "message_ids": state["forget"]})])
        assert text.startswith("u"), text
        return Reply(text="a" + text[1:])

    fake.respond(respond)
    cli.ok(*[f"u{i}" for i in range(1, 11)])                   # messages 1-20
    assert cli.ok("/mark") == ["Checkpoint created."]
    cli.ok(*[f"u{i}" for i in range(11, 16)])                  # messages 21-30
    ids = [m["id"] for m in cli.context()["messages"]]
    assert len(ids) == 30
    state["forget"] = ids[9:15]                                # messages 10-15
    cli.ok(FORGET_REQUEST)                                     # 31-34: the planning
    cli.ok(*[f"u{i}" for i in range(18, 21)])                  # up to message 40

    before = cli.context()
    texts = [m["content"] for m in before["messages"]]
    kept_then = [ordinal_text(n) for n in [*range(1, 10), *range(16, 31)]]
    # The forgotten messages and the planning conversation are gone, and (issue 28) the
    # reply that closed the apply leaves with it: no trace of the planning stays.
    assert texts[:len(kept_then)] == kept_then
    assert FORGET_REQUEST not in texts
    assert not [m for m in before["messages"] if m["role"] in ("tool_call", "tool_result")]
    assert "Done." not in texts and texts[len(kept_then)] == "u18"

    assert cli.ok("/rewind") == ["Rewound to last checkpoint."]
    after = cli.context()
    expected = [ordinal_text(n) for n in [*range(1, 10), *range(16, 21)]]
    assert [m["content"] for m in after["messages"]] == expected
    assert [m["id"] for m in after["messages"]] == ids[:9] + ids[15:20]
    assert [m["position"] for m in after["marks"]] == [len(expected)]

    # The provider receives exactly that context next, then the new message.
    fake.requests.clear()
    cli.ok("u500")
    sent = fake.requests[-1]
    assert validate_pairs(sent) == []
    assert [t for _r, t in conversation(sent.body)] == [*expected, "u500"]

    # History is never deleted: every message is still in the log.
    logged = [e for e in cli.log() if e["kind"] in ("user", "assistant")]
    assert len(logged) >= 40


def test_worked_example_offline_with_forget_ids(database, tmp_path):
    cli = Cli(database("off"))
    cli.ok(*[f"m{i}" for i in range(1, 51)])
    cli.ok("/mark")
    cli.ok(*[f"m{i}" for i in range(51, 76)])
    ids = [m["id"] for m in cli.context()["messages"]]
    assert cli.ok(f"/forget --ids {ids[49]}-{ids[74]}") == ["Forgot 26 messages."]
    cli.ok(*[f"m{i}" for i in range(76, 101)])
    cli.ok("/rewind")
    assert [m["id"] for m in cli.context()["messages"]] == ids[:49] + ids[75:100]


def test_marks_invalidated_by_clear_and_rewind_and_back_on_undo(database, tmp_path):
    cli = Cli(database("m"))
    cli.ok("one", "/mark A", "two", "/mark B", "three", "/mark C", "four")
    assert cli.ok("/rewind B") == ["Rewound to 'B'."]
    assert cli.marks() == ["A", "B"]                      # C was set after B: invalid
    line = assert_one_error(cli.run("/clear C"), "'C'", "A", "B")
    assert "C" not in line.split("'C'", 1)[1]             # C is named, not listed as valid
    cli.ok("/undo")
    assert cli.marks() == ["A", "B", "C"]
    assert cli.ok("/clear") == ["Context cleared."]
    assert cli.context()["messages"] == [] and cli.marks() == []
    assert_one_error(cli.run("/rewind A"), "'A'")
    cli.ok("/undo")
    assert cli.marks() == ["A", "B", "C"]
    assert cli.ok("/clear A") == ["Rewound to 'A'."]
    assert cli.contents()[0] == "one" and len(cli.contents()) == 2
    assert cli.marks() == ["A"]                           # the mark itself stays valid


@pytest.mark.parametrize("line", ["/clear nosuch", "/rewind nosuch", "/clear A B",
                                  "/clear 'unbalanced", "/nosuch", "/mark a b"])
def test_bad_context_commands_write_nothing(database, tmp_path, line):
    cli = Cli(database("e"))
    cli.ok("one", "/mark A", "two")
    before = cli.log()
    done = cli.run(line)
    error = assert_one_error(done)
    if "nosuch" in line and "clear" in line or "rewind" in line:
        assert "'nosuch'" in error and "A" in error
    assert cli.log() == before


def test_fork_independence_both_ways_and_fork_mark(database, tmp_path):
    cli = Cli(database("f"))
    cli.ok("p1", "/mark R", "brief")
    out = cli.ok("/fork --name whole", "/fork R --name tail")
    assert out[0].startswith("Forked. Child: ") and out[1].startswith("Forked. Child: ")
    whole, tail = cli.contents("whole"), cli.contents("tail")
    assert whole == cli.contents() and whole[0] == "p1"
    assert tail == whole[2:] and tail[0] == "brief"        # only what came after R
    assert cli.marks("whole") == [] and cli.marks("tail") == []   # no marks inherited
    cli.ok("/clear", "parent goes on")
    assert cli.contents("whole") == whole
    cli.ok(f"/forget --ids {cli.context('whole')['messages'][0]['id']}", agent="whole")
    cli.ok("child goes on", agent="whole")
    assert cli.contents()[0] == "parent goes on"
    assert cli.contents("tail") == tail
    assert cli.contents("whole")[1:3] == whole[2:4]


def test_killed_agents_stay_readable(database, tmp_path):
    cli = Cli(database("k"))
    cli.ok("hello", "/fork --name kid", "/fork --name grandkid", agent=None)
    cli.ok("/fork --name grandkid2", "kid says hi", agent="kid")
    kid_before = cli.context("kid")
    assert cli.ok("/kill kid")[0].startswith("Killed kid")
    status = {a["name"]: a["status"] for a in cli.json("agents")}
    assert status["kid"] == "dead" and status["grandkid2"] == "dead"
    assert status["root"] != "dead" and status["grandkid"] != "dead"
    assert cli.context("kid")["messages"] == kid_before["messages"]
    assert [e for e in cli.log("kid") if e["kind"] == "user"]
    assert cli("export", "--agent", "kid").returncode == 0
    assert_one_error(cli.run("more", agent="kid"), "dead")


def test_undo_of_each_kind_walks_back(database, tmp_path):
    cli = Cli(database("u"))
    cli.ok("m1", "/mark A", "m2", "m3")
    full = cli.context()["messages"]
    ids = [m["id"] for m in full]
    cli.ok(f"/forget --ids {ids[2]}", f"/remember --ids {ids[0]},{ids[1]},{ids[4]}",
           "/rewind A", "/clear")
    assert cli.context()["messages"] == []
    steps = [[0, 1], [0, 1, 4], [0, 1, 3, 4, 5], list(range(6))]
    for step in steps:
        cli.ok("/undo")
        assert [m["id"] for m in cli.context()["messages"]] == [ids[i] for i in step]
    before = cli.log()
    assert_one_error(cli.run("/undo"), "nothing to undo")
    assert cli.log() == before


def test_json_output_escapes_every_control_character(database, tmp_path, fake):
    cli = Cli(database("c"), fake)
    nasty = "A\x1b[31mB\x07C\x9b2JD\x7fE\x00F"
    fake.queue(Reply(text=nasty, chunk_size=2))
    done = cli.run("hi")
    assert done.returncode == 0, done.stderr
    for stream in (done.stdout, done.stderr):
        assert not [c for c in stream if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f]
    for args in (("context",), ("log",), ("agents",)):
        raw = cli(*args, "--json").stdout
        assert not [c for c in raw if (ord(c) < 32 and c not in "\n ") or 0x7f <= ord(c) <= 0x9f]
        json.loads(raw)
    assert cli.contents()[-1] == nasty                    # kept as is, only shown safely
