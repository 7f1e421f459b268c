"""Bringing messages back (SPEC §8): `/recall QUERY --restore` and `/restore IDS` write one
`filter` event of mode `restore`; `context --json` (a fresh process: a replay from disk)
shows the messages back at their place; bad input is one `Error:` line, nothing written."""

from __future__ import annotations

from tests.integration.acceptance_helpers import Cli, assert_one_error


def _ids(cli: Cli, agent: str | None = None) -> list[int]:
    return [m["id"] for m in cli.context(agent)["messages"]]


def _users(cli: Cli, agent: str | None = None) -> dict[str, int]:
    return {e["payload"]["content"]: e["id"] for e in cli.log(agent) if e["kind"] == "user"}


def _filters(cli: Cli, agent: str | None = None) -> list[dict]:
    return [e["payload"] for e in cli.log(agent) if e["kind"] == "filter"]


def test_recall_restore_brings_the_rewound_hits_back_in_log_order(tmp_path):
    cli = Cli(tmp_path / "r.db")
    cli.ok("zebra one", "/mark A", "zebra two", "okapi", "/rewind A", "after the rewind")
    u = _users(cli)
    before = _ids(cli)
    assert u["zebra two"] not in before

    dry = cli.ok("/recall zebra --restore --dry-run")
    assert dry[0].startswith("Would bring back ")
    assert any(f"#{u['zebra two']}" in line for line in dry)
    assert _ids(cli) == before and _filters(cli) == []  # only the command record

    out = cli.ok("/recall zebra --restore")
    assert out[0].startswith("Restored ")
    assert "already in the context: " in out[-1]
    ids = _ids(cli)
    two = u["zebra two"]
    # Back at their place: after "zebra one" and its reply, before the later turn.
    assert ids == sorted(ids) and {two, two + 1} <= set(ids)
    assert u["after the rewind"] in ids
    (payload,) = _filters(cli)
    # The hits (the offline replies quote the first message: okapi's reply is one), and
    # okapi, the question of that reply: a reply comes back with its question (issue 23).
    okapi = u["okapi"]
    assert payload["mode"] == "restore" and {two, two + 1, okapi, okapi + 1} <= set(payload["ids"])
    assert {okapi, okapi + 1} <= set(ids)
    assert set(payload["ids"]) <= set(ids)
    assert payload["command"] == "/recall zebra --restore"

    # Nothing left out: no event.
    again = cli.ok("/recall zebra --restore")
    assert again[0].startswith("Nothing to restore: already in the context")
    assert len(_filters(cli)) == 1


def test_restore_ids_and_ranges_then_undo_says_what_it_reverses(tmp_path):
    cli = Cli(tmp_path / "i.db")
    cli.ok("alpha", "beta", "gamma", "delta")
    u = _users(cli)
    all_ids = _ids(cli)
    cli.ok(f"/forget --ids {u['beta']}-{u['gamma'] + 1}")
    assert u["beta"] not in _ids(cli)
    out = cli.ok(f"/restore {u['gamma']}-{u['gamma'] + 1}")
    assert out[0].startswith("Restored 2 messages")
    assert _ids(cli) == [i for i in all_ids if i not in (u["beta"], u["beta"] + 1)]
    log = "\n".join(cli.ok("/undo"))
    assert log.startswith("Undid /restore ") and "2 messages leave it" in log
    assert u["gamma"] not in _ids(cli)
    # The forget is next: undoing it brings everything back.
    cli.ok("/restore " + str(u["beta"]), "/undo", "/undo")
    assert _ids(cli) == all_ids
    text = cli("log").stdout
    assert "filter: restored 1 message by /restore " in text


def test_bad_ids_write_nothing(tmp_path):
    cli = Cli(tmp_path / "b.db")
    cli.ok("one", "/mark M", "two", "/compact --keep 1")
    count = len(cli.all_events())
    assert_one_error(cli.run("/restore 99999"), "not a message of this agent", "99999")
    assert_one_error(cli.run("/restore 500-600"), "no message", "500-600")
    assert_one_error(cli.run("/restore"), "missing IDS", "Usage: /restore")
    assert_one_error(cli.run("/restore x7"), "not a list of message ids")
    assert_one_error(cli.run("/restore 1 --all"), "unknown option '--all'")
    assert_one_error(cli.run("/recall one --bring"), "unknown option '--bring'")
    mark = next(e["id"] for e in cli.log() if e["kind"] == "mark")
    assert_one_error(cli.run(f"/restore {mark}"), "not a message of this agent", str(mark))
    summarised = _users(cli)["one"]
    assert_one_error(cli.run(f"/restore {summarised}"), "summarised", "/undo")
    assert len(cli.all_events()) == count


def test_a_window_pruned_message_is_in_the_context_already(tmp_path):
    cli = Cli(tmp_path / "w.db", env={"IKIGAI_SLIDING_CONTEXT_TOKENS": "1500"})
    cli.ok(*[f"kiwi {i} " + "word " * 60 for i in range(8)])
    first = cli.context()["messages"][0]
    assert not first["in_window"]
    out = cli.ok(f"/restore {first['id']}")
    assert out == [f"Nothing to restore: already in the context, pruned by the window "
                   f"(not sent): #{first['id']}."]
    assert _filters(cli) == []


def test_a_tool_call_and_its_result_come_back_together(tmp_path):
    cli = Cli(tmp_path / "t.db")
    cli.ok("hello", "@slash marks")
    log = cli.log()
    call = next(e["id"] for e in log if e["kind"] == "tool_call")
    result = next(e["id"] for e in log if e["kind"] == "tool_result")
    cli.ok(f"/forget --ids {call}")
    assert call not in _ids(cli) and result not in _ids(cli)
    out = cli.ok(f"/restore {result}")
    assert out[0].startswith("Restored 2 messages (with 1 tool-call partner)")
    ids = _ids(cli)
    assert ids.index(call) + 1 == ids.index(result)


def test_a_child_restores_what_it_did_not_inherit_and_not_what_came_after_its_fork(tmp_path):
    cli = Cli(tmp_path / "f.db")
    cli.ok("zebra before the mark", "/mark R", "zebra brief", "/fork R --name kid",
           "zebra after the fork")
    root = _users(cli)
    assert root["zebra before the mark"] not in _ids(cli, "kid")
    out = cli.ok("/recall zebra --restore", agent="kid")
    assert out[0].startswith("Restored ")
    assert any("not of this agent's lineage" in line for line in out)
    kid = _ids(cli, "kid")
    assert kid[:2] == [root["zebra before the mark"], root["zebra before the mark"] + 1]
    assert root["zebra after the fork"] not in kid
    # The outline travels in the event: the child's replay needs nothing else.
    (payload,) = _filters(cli, "kid")
    assert [row[0] for row in payload["rows"]] == payload["ids"]
    assert all("content" not in row[2] for row in payload["rows"])
    contents = cli.contents("kid")
    assert contents[0] == "zebra before the mark"
    # A message written in the parent after the fork is not of the child's lineage.
    done = cli.run(f"/restore {root['zebra after the fork']}", agent="kid")
    assert_one_error(done, "after this agent was forked")
    # The parent is untouched.
    assert root["zebra before the mark"] in _ids(cli)


def test_the_llm_restores_through_recall_when_its_turn_ends(tmp_path):
    # The user's rule lets the LLM change its context (issue 28: "ask" refuses it headless).
    cli = Cli(tmp_path / "l.db", env={"IKIGAI_LLM_CONTEXT_CHANGES": "allow"})
    cli.ok("zebra one", "/mark A", "zebra two", "/rewind A")
    two = _users(cli)["zebra two"]
    out = "\n".join(cli.ok("@slash recall zebra --restore"))
    assert "Accepted; applied when this turn ends: Restored " in out
    (payload,) = _filters(cli)
    assert payload["mode"] == "restore" and two in payload["ids"]
    log = cli.log()
    # Written after the turn's reply: no request held half a change.
    assert [e["kind"] for e in log].index("filter") > max(
        i for i, e in enumerate(log) if e["kind"] == "assistant")
    assert two in _ids(cli)
