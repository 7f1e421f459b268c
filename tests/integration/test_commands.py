"""Every command through the session (and the CLI): errors write nothing, outputs are exact."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.core.command_table import REGISTRY
from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.request import DEFAULT_SYSTEM_PROMPT


async def talk(session, agent_id: str, text: str) -> None:
    task = await session.say(agent_id, text)
    assert await task


async def ids(session, agent_id: str) -> list[int]:
    return [m[0] for m in (await session.replayer(agent_id)).messages()]


async def kinds_of(session, agent_id: str) -> list[str]:
    return [e.kind for e in await session.store.events(agent_id)]


# -- bad arguments: a one-line error, nothing written --------------------------------

# (setup commands, bad command, fragment of the message, the usage must be named)
BAD = [
    ([], "/nosuch", "unknown command '/nosuch'", False),
    ([], "/nosuch x y", "unknown command '/nosuch'", False),
    ([], "/", "unknown command '/'", False),
    ([], "/mark a b", "unexpected argument 'b'", True),
    ([], "/mark -x", "'-x' is not a valid mark name", True),
    ([], "/mark 'unbalanced", "unbalanced quote", True),
    ([], "/clear NOPE", "no mark named 'NOPE'", False),
    (["/mark A"], "/clear NOPE", "Valid marks: A", False),
    (["/mark A"], "/clear A B", "unexpected argument 'B'", True),
    ([], "/rewind", "no valid mark", False),
    (["/mark A", "/clear"], "/rewind", "no valid mark", False),
    ([], "/rewind NOPE", "no mark named 'NOPE'", False),
    (["/mark A"], "/rewind A B", "unexpected argument 'B'", True),
    (["/mark A", "/clear"], "/rewind A", "mark 'A' is no longer valid", False),
    ([], "/marks x", "unexpected argument 'x'", True),
    ([], "/context x", "unexpected argument 'x'", True),
    ([], "/forget", "missing --ids LIST", True),
    ([], "/forget --ids", "missing id list", True),
    ([], "/forget --ids x", "'x' is not a list of message ids", True),
    ([], "/forget --ids 9-5", "runs backwards", True),
    ([], "/forget --ids 9999", "not in this agent's context: 9999", False),
    ([], "/forget --ids=9999", "not in this agent's context: 9999", False),
    ([], "/forget --ids 1 2", "unexpected argument '2'", True),
    ([], "/remember --ids", "missing id list", True),
    ([], "/remember", "missing --ids LIST", True),
    ([], "/remember --ids 1,x", "is not a list of message ids", True),
    ([], "/remember --ids 9999", "not in this agent's context", False),
    ([], "/undo", "nothing to undo", False),
    ([], "/undo now", "unexpected argument 'now'", True),
    (["/clear", "/undo"], "/undo", "nothing to undo", False),
    (["/mark NOTAMARK_INVALID", "/clear"], "/fork NOTAMARK_INVALID",
     "mark 'NOTAMARK_INVALID' is no longer valid", False),
    ([], "/fork --bogus", "unknown option '--bogus'", True),
    ([], "/fork --name", "missing value after --name", True),
    ([], "/fork --name=", "empty value for --name", True),
    ([], "/fork --name root", "an agent named 'root' already exists", False),
    ([], "/fork --name 9lives", "not a valid agent name", True),
    ([], "/fork --name a --name b", "--name given twice", True),
    ([], "/fork --model", "missing value after --model", True),
    ([], "/fork --model gpt4o", "is not a model name", False),
    ([], "/send", "missing AGENT", True),
    ([], "/send nobody hi", "no agent named or with id starting 'nobody'", False),
    ([], "/send root", "missing MESSAGE", True),
    (["/fork --name kid", "/kill kid"], "/send kid hi", "dead", False),
    ([], "/check-mail extra", "unexpected argument 'extra'", True),
    ([], "/kill", "missing AGENT", True),
    ([], "/kill root", "root agent cannot be killed", False),
    ([], "/kill nobody", "no agent named or with id starting 'nobody'", False),
    (["/fork --name kid"], "/kill kid now", "unexpected argument 'now'", True),
    (["/fork --name kid", "/kill kid"], "/kill kid", "already dead", False),
    ([], "/agents x", "unexpected argument 'x'", True),
    ([], "/model a b", "unexpected argument 'b'", True),
    ([], "/model gpt-4o", "'gpt-4o' is not a model name", False),
    ([], "/pin", "missing TEXT", True),
    ([], "/pin   ", "missing TEXT", True),
    ([], "/unpin", "missing N", True),
    ([], "/unpin 5", "there is no pin #5", False),
    (["/pin one"], "/unpin 2", "there is no pin #2 (this agent has 1)", False),
    ([], "/unpin 0", "there is no pin #0", False),
    ([], "/unpin x", "'x' is not a pin number", True),
    ([], "/unpin -1", "is not a pin number", True),
    (["/pin one"], "/unpin 1 2", "unexpected argument '2'", True),
    ([], "/pins x", "unexpected argument 'x'", True),
    ([], "/help nosuch", "unknown command '/nosuch'", False),
    ([], "/help fork mark", "unexpected argument 'mark'", True),
    ([], "/exit now", "unexpected argument 'now'", True),
]


@pytest.mark.parametrize("setup, bad, fragment, usage", BAD, ids=[b[1] for b in BAD])
async def test_bad_command_errors_and_writes_nothing(session, setup, bad, fragment, usage):
    root = session.tree.root.id
    await talk(session, root, "hello")
    for line in setup:
        await session.command(root, line)
    before = await session.store.count_events()
    agents_before = [(a.id, a.status, a.model) for a in session.tree]
    context_before = await ids(session, root)
    with pytest.raises(CommandError) as info:
        await session.command(root, bad)
    message = str(info.value)
    assert fragment in message
    assert message.strip() and "\n" not in message
    if usage:
        name = bad.split()[0]
        assert f"Usage: {REGISTRY.get(name[1:]).usage}" in message
    assert await session.store.count_events() == before
    assert [(a.id, a.status, a.model) for a in session.tree] == agents_before
    assert await ids(session, root) == context_before


@pytest.mark.parametrize("bad", ["/mark a b", "/undo", "/send nobody hi", "/kill root"])
async def test_bad_command_from_llm_also_writes_nothing(session, bad):
    root = session.tree.root.id
    before = await session.store.count_events()
    with pytest.raises(CommandError):
        await session.command(root, bad, source="llm")
    assert await session.store.count_events() == before


def test_bad_commands_through_the_cli(ikigai, tmp_path):
    db = str(tmp_path / "cli.db")
    setup = tmp_path / "setup.txt"
    setup.write_text("hello\n/mark A\n/pin one\n")
    done = ikigai("--db", db, "run", "--script", str(setup))
    assert done.returncode == 0, done.stderr
    before = json.loads(ikigai("--db", db, "log", "--json").stdout)
    bad_lines = ["/clear NOPE", "/mark a b", "/forget --ids 9999", "/unpin 5",
                 "/fork --name root", "/kill root", "/nosuch", "/model gpt-4o"]
    # One bad command alone: exit 1, one Error line, nothing on stdout.
    script = tmp_path / "bad.txt"
    script.write_text(bad_lines[0] + "\n")
    done = ikigai("--db", db, "run", "--script", str(script))
    assert done.returncode == 1
    assert done.stderr.startswith("Error: no mark named 'NOPE'")
    assert done.stderr.count("\n") == 1
    assert done.stdout == ""
    # The rest in one run: one Error line each, exit 1.
    script = tmp_path / "all_bad.txt"
    script.write_text("\n".join(bad_lines[1:]) + "\n")
    done = ikigai("--db", db, "run", "--script", str(script))
    assert done.returncode == 1
    errors = done.stderr.splitlines()
    assert len(errors) == len(bad_lines) - 1
    assert all(line.startswith("Error: ") for line in errors)
    assert done.stdout == ""
    after = json.loads(ikigai("--db", db, "log", "--json").stdout)
    assert after == before


# -- happy paths, exact outputs ----------------------------------------------------


async def test_mark_and_remark_moves(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    assert (await session.command(root, "/mark A")).lines == ["Checkpoint 'A' created."]
    assert (await session.command(root, "/mark")).lines == ["Checkpoint created."]
    r = await session.replayer(root)
    assert [m.label for m in r.valid_marks()][0] == "A"
    assert r.mark_position(r.find_mark("A")) == 2
    await talk(session, root, "two")
    moved = await session.command(root, "/mark A")
    assert moved.lines[0].startswith("Checkpoint 'A' created")
    assert "position 2" in moved.lines[0]
    r = await session.replayer(root)
    assert r.mark_position(r.find_mark("A")) == 4
    # Only one mark named A; the unnamed one stays.
    labels = [m.label for m in r.valid_marks()]
    assert labels.count("A") == 1 and len(labels) == 2
    # Rewinding to A now keeps both turns.
    await talk(session, root, "three")
    assert (await session.command(root, "/rewind A")).lines == ["Rewound to 'A'."]
    assert len(await ids(session, root)) == 4


async def test_rewind_default_and_named(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    await session.command(root, "/mark A")
    kept = await ids(session, root)
    await talk(session, root, "two")
    await session.command(root, "/mark B")
    at_b = await ids(session, root)
    await talk(session, root, "three")
    assert (await session.command(root, "/rewind")).lines == ["Rewound to 'B'."]
    assert await ids(session, root) == at_b
    # B itself stays valid.
    r = await session.replayer(root)
    assert [m.name for m in r.valid_marks()] == ["A", "B"]
    assert (await session.command(root, "/rewind A")).lines == ["Rewound to 'A'."]
    assert await ids(session, root) == kept
    r = await session.replayer(root)
    assert [m.name for m in r.valid_marks()] == ["A"]
    assert "rewind" in await kinds_of(session, root)


async def test_clear_and_clear_mark(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    await session.command(root, "/mark A")
    kept = await ids(session, root)
    await talk(session, root, "two")
    assert (await session.command(root, "/clear A")).lines == ["Rewound to 'A'."]
    assert await ids(session, root) == kept
    assert (await session.command(root, "/clear")).lines == ["Context cleared."]
    r = await session.replayer(root)
    assert r.messages() == [] and r.valid_marks() == []
    # The history is still in the log.
    assert (await kinds_of(session, root)).count("user") == 2


async def test_marks_listing(session):
    root = session.tree.root.id
    assert (await session.command(root, "/marks")).lines == ["No marks."]
    await talk(session, root, "one")
    await session.command(root, "/mark A")
    await talk(session, root, "two")
    await session.command(root, "/mark B")
    out = await session.command(root, "/marks")
    assert len(out.lines) == 2
    assert out.lines[0].startswith("A  at position 2")
    assert out.lines[1].startswith("B  at position 4")
    assert out.data == [("A", 2), ("B", 4)]
    await session.command(root, "/rewind A")
    assert [line.split()[0] for line in (await session.command(root, "/marks")).lines] == ["A"]


async def test_forget_remember_undo(session):
    root = session.tree.root.id
    for text in ("one", "two", "three"):
        await talk(session, root, text)
    all_ids = await ids(session, root)
    assert len(all_ids) == 6
    u1, a1, u2, a2, u3, a3 = all_ids
    out = await session.command(root, f"/forget --ids {u2},{a2}")
    assert out.lines == ["Forgot 2 messages."]
    assert await ids(session, root) == [u1, a1, u3, a3]
    out = await session.command(root, f"/forget --ids {a1}")
    assert out.lines == ["Forgot 1 message."]
    out = await session.command(root, f"/remember --ids={u1},{u3}")
    assert out.lines == ["Kept 2 messages; forgot 1."]
    assert await ids(session, root) == [u1, u3]
    # /undo walks back one operation at a time.
    assert (await session.command(root, "/undo")).lines[0].startswith("Undid /remember")
    assert await ids(session, root) == [u1, u3, a3]
    assert (await session.command(root, "/undo")).lines[0].startswith("Undid /forget")
    assert await ids(session, root) == [u1, a1, u3, a3]
    await session.command(root, "/undo")
    assert await ids(session, root) == all_ids
    with pytest.raises(CommandError, match="nothing to undo"):
        await session.command(root, "/undo")


async def test_undo_clear(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    before = await ids(session, root)
    await session.command(root, "/clear")
    out = await session.command(root, "/undo")
    assert out.lines[0].startswith("Undid /clear (event ")
    assert await ids(session, root) == before


async def test_model_show_and_set_same(session):
    root = session.tree.root.id
    assert (await session.command(root, "/model")).lines == ["Model: offline"]
    before = await session.store.count_events()
    assert (await session.command(root, "/model offline")).lines == ["Model is already offline."]
    assert await session.store.count_events() == before + 1  # only the command record


async def test_system_show_and_set(session):
    root = session.tree.root.id
    out = await session.command(root, "/system")
    assert out.lines == [f"System prompt (default): {DEFAULT_SYSTEM_PROMPT}"]
    out = await session.command(root, "/system Be terse. Don't ramble.")
    assert out.lines == ["System prompt set."]
    assert (await session.command(root, "/system")).lines == ["System prompt: Be terse. Don't ramble."]
    assert (await session.replayer(root)).system == "Be terse. Don't ramble."


async def test_pin_pins_unpin(session):
    root = session.tree.root.id
    assert (await session.command(root, "/pins")).lines == ["No pins."]
    assert (await session.command(root, "/pin always answer in French")).lines == ["Pinned #1."]
    assert (await session.command(root, '/pin "second note"')).lines == ["Pinned #2."]
    assert (await session.command(root, "/pins")).lines == [
        "1. always answer in French", "2. second note"]
    assert (await session.command(root, "/unpin 1")).lines == ["Unpinned #1."]
    assert (await session.command(root, "/pins")).lines == ["1. second note"]
    assert (await session.replayer(root)).pins == ["second note"]
    # Pins are not context messages.
    assert await ids(session, root) == []


async def test_help(session):
    root = session.tree.root.id
    out = await session.command(root, "/help")
    assert len(out.lines) == len(list(REGISTRY))
    for spec in REGISTRY:
        assert any(line.startswith(spec.usage) for line in out.lines), spec.name
    out = await session.command(root, "/help fork")
    assert out.lines[0] == "/fork [MARK] [--model M] [--name N] [PROMPT]"
    assert "  The LLM may call it." in out.lines
    out = await session.command(root, "/help /undo")
    assert out.lines[0] == "/undo"
    assert "  Human only." in out.lines


async def test_exit_and_context_and_agents(session):
    root = session.tree.root.id
    out = await session.command(root, "/exit")
    assert out.exit is True and out.lines == []
    await talk(session, root, "hi")
    out = await session.command(root, "/context")
    assert out.lines[0].startswith("Context: ") and "/200.0K tokens (0%), normal" in out.lines[0]
    assert "estimated for offline" in out.lines[0]
    assert any(line.strip().startswith("window") and "(2 messages)" in line for line in out.lines)
    assert any(line.startswith("Budget: 100,000; window starts at message") for line in out.lines)
    out = await session.command(root, "/agents")
    assert len(out.lines) == 1 and out.lines[0].startswith("root (")
    assert "<- you" in out.lines[0]


async def test_command_is_recorded(session):
    root = session.tree.root.id
    await session.command(root, "/mark A")
    events = await session.store.events(root)
    assert [e.kind for e in events] == ["command", "mark"]
    assert events[0].payload["text"] == "/mark A"
    assert events[0].payload["source"] == "human"
    assert events[0].payload["output"] == ["Checkpoint 'A' created."]


def test_cli_outputs_and_exit_stops_the_script(ikigai, tmp_path):
    db = str(tmp_path / "exit.db")
    script = tmp_path / "script.txt"
    script.write_text("/mark A\nhello\n/marks\n/clear A\n/clear\n/exit\n/mark B\nnever said\n")
    done = ikigai("--db", db, "run", "--script", str(script))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Checkpoint 'A' created."
    assert lines[1].startswith('Offline model here. You said: "hello"')
    assert lines[2].startswith("A  at position 0")
    assert lines[3:] == ["Rewound to 'A'.", "Context cleared."]
    events = json.loads(ikigai("--db", db, "log", "--json").stdout)
    texts = [e["payload"].get("text") or e["payload"].get("content") for e in events]
    assert "/mark B" not in texts and "never said" not in texts
    assert [e["kind"] for e in events].count("mark") == 1


# -- the LLM side: human-only commands refused, context changes deferred --------------

HUMAN_ONLY = ["/undo", "/model", "/model offline", "/system x", "/pin x", "/unpin 1",
              "/pins", "/help", "/exit", "/forget --ids 1", "/remember --ids 1"]


@pytest.mark.parametrize("line", HUMAN_ONLY)
async def test_llm_cannot_run_human_only(session, line):
    root = session.tree.root.id
    await talk(session, root, "hello")
    await session.command(root, "/pin keep")
    before = await session.store.count_events()
    with pytest.raises(CommandError, match="is for the human only"):
        await session.command(root, line, source="llm")
    assert await session.store.count_events() == before


async def test_llm_may_run_its_commands_outside_a_turn(session):
    root = session.tree.root.id
    await talk(session, root, "hello")
    out = await session.command(root, "/mark L", source="llm")
    assert out.lines == ["Checkpoint 'L' created."]
    out = await session.command(root, "/marks", source="llm")
    assert out.lines[0].startswith("L  at position 2")
    await talk(session, root, "more")
    out = await session.command(root, "/rewind", source="llm")
    assert out.lines == ["Rewound to 'L'."]
    events = await session.store.events(root)
    assert [e.payload["source"] for e in events if e.kind == "command"] == ["llm"] * 3


async def test_llm_slash_tool_refuses_human_only(session):
    root = session.tree.root.id
    await talk(session, root, "hello")
    await talk(session, root, "@slash undo")
    events = await session.store.events(root)
    results = [e for e in events if e.kind == "tool_result"]
    assert len(results) == 1
    assert results[0].payload["is_error"] is True
    assert "'undo' is not available" in results[0].payload["content"]
    assert "undo" not in [e.kind for e in events]
    assert "command" not in [e.kind for e in events]


async def test_llm_clear_is_deferred_to_the_end_of_the_turn(session):
    root = session.tree.root.id
    await talk(session, root, "first")
    await talk(session, root, "@slash clear")
    events = await session.store.events(root)
    kinds = [e.kind for e in events]
    assert kinds.count("clear") == 1
    clear = next(e for e in events if e.kind == "clear")
    call = next(e for e in events if e.kind == "tool_call")
    result = next(e for e in events if e.kind == "tool_result")
    final = [e for e in events if e.kind == "assistant"][-1]
    assert result.payload["call_event"] == call.id
    assert result.payload["content"].startswith("Accepted; applied when this turn ends")
    assert result.payload["is_error"] is False
    # The clear lands after the whole tool exchange and the reply that closes the turn.
    assert call.id < result.id < final.id < clear.id
    assert final.payload["content"].startswith("Tool results: Accepted")
    record = [e for e in events if e.kind == "command"]
    assert [(r.payload["text"], r.payload["source"]) for r in record] == [("/clear", "llm")]
    # After the turn the context is empty; the agent is idle.
    assert (await session.replayer(root)).messages() == []
    assert session.tree[root].status == "idle"
    assert session.tree[root].in_turn is False
    # The next turn starts from nothing.
    await talk(session, root, "again")
    reply = (await session.replayer(root)).messages()[-1]
    assert "I can see 1 message" in reply[2]["content"]


async def test_llm_rewind_deferred_mark_immediate(session):
    root = session.tree.root.id
    await talk(session, root, "first")
    kept = await ids(session, root)
    await talk(session, root, "@slash mark M")
    events = await session.store.events(root)
    mark = next(e for e in events if e.kind == "mark")
    result = next(e for e in events if e.kind == "tool_result")
    assert mark.id < result.id  # /mark is not deferred
    assert result.payload["content"] == "Checkpoint 'M' created."
    await talk(session, root, "@slash rewind M")
    events = await session.store.events(root)
    rewind = next(e for e in events if e.kind == "rewind")
    last_result = [e for e in events if e.kind == "tool_result"][-1]
    assert last_result.payload["content"].startswith("Accepted; applied when this turn ends")
    assert rewind.id > last_result.id
    # Rewound to M, which was set mid-turn after the user message "@slash mark M".
    now = await ids(session, root)
    assert now[:2] == kept
    assert all(i < mark.id for i in now)


async def test_llm_clear_with_bad_mark_is_an_error_result(session):
    root = session.tree.root.id
    await talk(session, root, "first")
    before = await ids(session, root)
    await talk(session, root, "@slash clear NOPE")
    events = await session.store.events(root)
    result = next(e for e in events if e.kind == "tool_result")
    assert result.payload["is_error"] is True
    assert "no mark named 'NOPE'" in result.payload["content"]
    assert "rewind" not in [e.kind for e in events]
    assert (await ids(session, root))[:2] == before
