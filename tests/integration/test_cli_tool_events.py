"""The tool-era events in the reports (issue 25 item 4): `ikigai log` prints every kind of
event as one line of words (a `cwd`, a `tool_output` clearing or restore, a `permission`
granted: none as its payload's JSON), `log --json` keeps the payloads whole, `export`
notes them; `context --json` tells the agent's workspace, its "always" permissions and
the tool results whose output is cleared (their call, tool, tokens and tokens saved)."""

from __future__ import annotations

import json

from ikigai_tui.cli.event_words import WORDS, event_line
from ikigai_tui.cli.output import context_data
from ikigai_tui.core.events import METADATA_KINDS, MESSAGE_KINDS, UNDOABLE_KINDS, Event, WriteBatch
from ikigai_tui.core.tools.permissions import grant_payload

BIG = "".join(f"line {n} of a long build log\n" for n in range(300))

# A payload of each kind, as the program writes it.
SAMPLES: dict[str, dict] = {
    "user": {"content": "hi"}, "assistant": {"content": "hello"}, "system": {"content": "be brief"},
    "tool_call": {"call_id": "c0", "name": "bash", "arguments": '{"command": "make"}'},
    "tool_result": {"call_id": "c0", "call_event": 4, "content": "ok\nexit status 2",
                    "is_error": True},
    "command": {"text": "/context", "source": "user"},
    "filter": {"ids": [3, 4], "mode": "forget", "command": "/forget 3-4"},
    "memory": {"op": "create", "path": "/memories/a.md", "after": "x"},
    "pruned_summary": {"messages": 2, "ranges": [[3, 4]], "tokens": 40, "model": "m",
                       "summary": "they talked"},
    "clear": {}, "mark": {"name": "A"}, "rewind": {"mark": "A", "mark_event": 7},
    "compact": {"ids": [3, 4], "summary": "s", "model": "m", "before": 900, "after": 100},
    "undo": {"target": 9},
    "fork": {"child": "a1b2c3", "mark": None, "mark_event": None},
    "kill": {"by": "a1b2c3"}, "mail": {"from": "a1b2c3", "text": "done"},
    "rename": {"name": "builder", "previous": "worker"},
    "revive": {"by": "a1b2c3"}, "mail_mode": {"mode": "wake"},
    "mail_read": {"ids": [12]}, "model": {"model": "openai/gpt-4o"},
    "pin": {"text": "use tabs"}, "unpin": {"index": 1},
    "budget": {"budget": 50_000, "previous": 100_000},
    "usage": {"model": "m", "input_tokens": 1200, "output_tokens": 30, "estimated_input": 1100.0},
    "interrupted": {"reason": "cancelled", "unanswered": 3},
    "error": {"message": "the provider failed"},
    "btw": {"question": "what is left?", "answer": "The tests.\nThen the docs.", "model": "m"},
    "permission": {"tool": "bash", "rule": "allow"},
    "cwd": {"path": "/work/b", "previous": "/work/a"},
    "tool_output": {"action": "clear", "ids": [5, 8], "tokens": [1200, 3400],
                    "before": {"tokens": 9000}, "after": {"tokens": 4500},
                    "command": "/forget --tool-results --keep 1"},
}


def test_every_kind_of_event_is_one_line_of_words_in_the_log():
    kinds = MESSAGE_KINDS | METADATA_KINDS | UNDOABLE_KINDS
    assert kinds <= SAMPLES.keys()  # a new kind: give it a sample (and words)
    assert kinds <= WORDS.keys() | {"undo"}
    for kind in sorted(kinds):
        line = event_line(Event(10, "a", kind, SAMPLES[kind], 0.0), {})
        assert line.startswith(f"#10 {kind}: "), line
        assert not line.removeprefix(f"#10 {kind}: ").startswith("{"), line  # never the JSON
    words = {kind: event_line(Event(10, "a", kind, SAMPLES[kind], 0.0), {})
             for kind in ("cwd", "tool_output", "permission", "tool_result", "btw")}
    assert words == {
        "cwd": "#10 cwd: workspace /work/b (was /work/a)",
        "tool_output": "#10 tool_output: cleared the output of 2 tool results (ids 5,8), 4,600 "
                       "tokens by /forget --tool-results --keep 1; context ~9,000 -> ~4,500 tokens",
        "permission": "#10 permission: always allow bash for this agent",
        "tool_result": "#10 tool_result: (for #4; error) ok\nexit status 2",
        "btw": "#10 btw: side question to m (in no context): what is left? -> The tests. Then "
               "the docs.",
    }
    mail = {"kind": "mail", "from": "b4", "text": "all\ndone", "report": True}
    assert [event_line(Event(10, "a", e.pop("kind"), e, 0.0), {}) for e in (
        {"kind": "revive", "by": "r0"}, {"kind": "mail_mode", "mode": "wake"}, dict(mail),
        {**mail, "ok": False}, {"kind": "fork", "parent": "r0", "parent_event": 2,
                                "mail": "manual", "report": True})] == [
        "#10 revive: revived by r0", "#10 mail_mode: mail mode wake",
        "#10 mail: report from b4: all done", "#10 mail: failure report from b4: all done",
        "#10 fork: forked from r0 (its event #2), mail manual, reports home"]
    restore = Event(11, "a", "tool_output", {"action": "restore", "ids": [5]}, 0.0)
    assert event_line(restore, {}) == "#11 tool_output: restored the output of 1 tool result (ids 5)"
    granted = Event(9, "a", "permission", SAMPLES["permission"], 0.0)
    undo = Event(12, "a", "undo", {"target": 9}, 0.0)
    assert event_line(undo, {9: granted}) == \
        "#12 undo: reverses permission #9: always allow bash for this agent"


async def _tool_era(session) -> tuple[str, list[int]]:
    """Two bash calls with long results, both cleared by /forget --tool-results, one
    brought back; bash allowed always; the workspace moved to a sub-folder."""
    root = session.tree.root.id
    results = []
    for n in range(2):
        batch = WriteBatch()
        batch.add(root, "tool_call", {"call_id": f"c{n}", "name": "bash",
                                      "arguments": json.dumps({"command": f"make step{n}"})})
        [call] = await session.commit(batch)
        batch = WriteBatch()
        batch.add(root, "tool_result", {"call_id": f"c{n}", "call_event": call.id,
                                        "content": BIG + "exit status 0", "is_error": False})
        results += [e.id for e in await session.commit(batch)]
    batch = WriteBatch()
    batch.add(root, "permission", grant_payload("bash"))
    await session.commit(batch)
    await session.command(root, "/forget --tool-results --keep 0")
    await session.command(root, f"/restore {results[1]}")
    return root, results


async def test_context_json_tells_the_workspace_permissions_and_cleared_results(session, tmp_path):
    (tmp_path / "sub").mkdir()
    root = session.tree.root.id
    await session.command(root, f"/cwd {tmp_path / 'sub'}")
    root, results = await _tool_era(session)
    data = await context_data(session, session.tree[root])
    assert data["workspace"] == str(tmp_path / "sub") and data["workspace_source"] == "cwd"
    assert data["permissions"] == [{"tool": "bash", "rule": "allow", "inherited": False}]
    [cleared] = data["cleared_tool_results"]
    assert cleared["id"] == results[0] and cleared["tool"] == "bash" and cleared["call_id"] == "c0"
    assert cleared["tokens"] > 2000 and 0 < cleared["tokens"] - cleared["saved"] < 50
    [clearing] = [e for e in await session.store.events(root) if e.kind == "tool_output"
                  and e.payload["action"] == "clear"]
    assert cleared["event"] == clearing.id
    flagged = {m["id"]: m.get("cleared") for m in data["messages"] if m["role"] == "tool_result"}
    assert flagged == {results[0]: True, results[1]: None}
    # a fork inherits the permission (and the cleared result)
    await session.command(root, "/fork --name kid")
    kid = next(a for a in session.tree if a.name == "kid")
    child = await context_data(session, kid)
    assert child["permissions"] == [{"tool": "bash", "rule": "allow", "inherited": True}]
    assert [c["id"] for c in child["cleared_tool_results"]] == [results[0]]
    assert child["cleared_tool_results"][0]["event"] is None


async def test_log_prints_the_tool_era_events_in_words_and_json_keeps_them(
        session, db_path, tmp_path, ikigai):
    (tmp_path / "sub").mkdir()
    await session.command(session.tree.root.id, f"/cwd {tmp_path / 'sub'}")
    root, results = await _tool_era(session)
    await session.store.close()  # (the fixture closes it again: harmless)
    done = ikigai("--db", str(db_path), "log")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("#")]
    kinds = {line.split(" ")[1].rstrip(":") for line in lines}
    assert {"cwd", "permission", "tool_output"} <= kinds
    for line in lines:
        assert not line.split(": ", 1)[1].startswith("{"), line  # no payload as JSON
    assert any(f"cwd: workspace {tmp_path / 'sub'} (was " in line for line in lines)
    assert any("permission: always allow bash for this agent" in line for line in lines)
    assert any(f"tool_output: cleared the output of 2 tool results (ids {results[0]},{results[1]})"
               in line and "by /forget --tool-results --keep 0" in line for line in lines)
    assert any(line.endswith(f"tool_output: restored the output of 1 tool result (ids {results[1]})")
               for line in lines)
    done = ikigai("--db", str(db_path), "log", "--json")
    events = json.loads(done.stdout)
    [clearing] = [e for e in events if e["kind"] == "tool_output" and e["payload"]["action"] == "clear"]
    assert clearing["payload"]["ids"] == results and len(clearing["payload"]["tokens"]) == 2
    done = ikigai("--db", str(db_path), "export")
    assert done.returncode == 0, done.stderr
    exported = done.stdout.splitlines()
    assert any(line.startswith(f"> Workspace: {tmp_path / 'sub'} (was ") for line in exported)
    assert "> Permission: always allow bash for this agent." in exported
    assert any(line.startswith("> Tool output: cleared the output of 2 tool results")
               for line in exported)
    assert any(line.startswith("> Tool output: restored the output of 1 tool result")
               for line in exported)
