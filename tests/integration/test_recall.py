"""/recall QUERY (SPEC §5, §8): every message of the agent and its ancestors, those out
of the context too, each with where it stands; it writes nothing but its record."""

from __future__ import annotations

import re

from tests.integration.acceptance_helpers import Cli, assert_one_error


def _states(stdout: str) -> dict[int, str]:
    """Hit id -> its state, from the `  #ID role · STATE · first line` lines."""
    return {int(m[1]): m[2] for m in re.finditer(r"^  #(\d+) \w+ · (.+?) · ", stdout, re.M)}


def _user_ids(cli: Cli, agent: str | None = None) -> dict[str, int]:
    return {e["payload"]["content"]: e["id"] for e in cli.log(agent) if e["kind"] == "user"}


def test_each_hit_says_where_it_stands(tmp_path):
    cli = Cli(tmp_path / "r.db")
    cli.ok("zebra one", "/mark A", "zebra two", "zebra three")
    ids = _user_ids(cli)
    cli.ok(f"/forget --ids {ids['zebra three']}", "/rewind A", "zebra four", "/fork --name kid",
           "/clear")
    ids = _user_ids(cli)
    cli.ok("zebra five", agent="kid")
    kid = _user_ids(cli, "kid")

    root = cli.ok("/recall zebra")
    states = _states("\n".join(root))
    assert states[ids["zebra one"]] == "cleared"
    assert states[ids["zebra two"]] == "rewound to 'A'"
    assert states[ids["zebra three"]].startswith("forgotten by \"/forget --ids")
    assert states[ids["zebra four"]] == "cleared"
    assert kid["zebra five"] not in states  # a child's messages are not its parent's

    child = _states("\n".join(cli.ok("/recall ZEBRA", agent="kid")))
    assert child[ids["zebra one"]] == child[ids["zebra four"]] == "in the context"
    assert child[kid["zebra five"]] == "in the context"
    assert child[ids["zebra two"]].startswith("not inherited (in root")


def test_recall_writes_only_its_record_and_says_when_nothing_matches(tmp_path):
    cli = Cli(tmp_path / "n.db")
    cli.ok("hello there")
    before = cli.all_events()
    out = cli.ok("/recall wombat")
    assert out == ['No message of this agent or its ancestors matches "wombat" (by its words '
                   'or its meaning).']
    after = cli.all_events()
    assert [e["kind"] for e in after[len(before):]] == ["command"]
    assert_one_error(cli.run("/recall ?!"), "QUERY")
    assert len(cli.all_events()) == len(after)


def test_pruned_messages_are_found_and_said_to_be_outside_the_window(tmp_path):
    cli = Cli(tmp_path / "w.db", env={"IKIGAI_SLIDING_CONTEXT_TOKENS": "1500"})
    cli.ok(*[f"kiwi {i} " + "word " * 60 for i in range(8)])
    ctx = cli.context()
    first = ctx["messages"][0]
    assert not first["in_window"]
    states = _states("\n".join(cli.ok("/recall kiwi 0")))
    assert states[first["id"]] == "pruned by the window (not sent)"


def test_a_reply_is_listed_with_its_question_and_comes_back_with_it(tmp_path):
    """Issue 23: a recalled reply brings its question, so that the context never holds an
    answer to nothing (or two user messages in a row). Issue 28: "said" is a framing word
    (dropped), okapi is the topic: the question and its reply are both hits."""
    cli = Cli(tmp_path / "q.db")
    cli.ok("zebra one", "okapi two", "zebra three")
    question = _user_ids(cli)["okapi two"]
    reply = question + 1
    assert [e["kind"] for e in cli.log() if e["id"] == reply] == ["assistant"]
    cli.ok(f"/forget --ids {question},{reply}")

    out = cli.ok("/recall said okapi")
    assert out[0] == '2 messages match "said okapi":'
    listed = [line for line in out if line.startswith("  #")]
    assert listed[0].startswith(f"  #{question} user · forgotten by ")
    assert listed[0].endswith(" · okapi two")
    assert listed[1].startswith(f"  #{reply} assistant · forgotten by ")

    dry = cli.ok("/recall said okapi --restore --dry-run")
    assert dry[0].startswith("Would bring back 2 messages")
    cli.ok("/recall said okapi --restore")
    ids = [m["id"] for m in cli.context()["messages"]]
    assert question in ids and reply in ids
    (restore,) = [e["payload"] for e in cli.log() if e["kind"] == "filter"
                  and e["payload"]["mode"] == "restore"]
    assert restore["ids"] == [question, reply]
