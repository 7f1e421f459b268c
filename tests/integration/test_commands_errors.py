"""Commands (SPEC §4) given bad arguments, through the session and the CLI: each gives a
one-line error naming the fragment that is wrong (and the usage where the arguments are
at fault) and writes nothing, neither to the log nor to the agents nor to the context;
the same from the LLM; and from a script, one `Error:` line each and exit 1.
"""

from __future__ import annotations

import json

import pytest

from ikigai_tui.core.commands.registry import REGISTRY
from ikigai_tui.core.errors import CommandError
from tests.integration.session_helpers import ids, talk


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
    ([], "/forget", "missing CRITERIA (what to forget) or --ids LIST", True),
    ([], "/forget --ids", "missing id list", True),
    ([], "/forget --ids x", "'x' is not a list of message ids", True),
    ([], "/forget --ids 9-5", "runs backwards", True),
    ([], "/forget --ids 9999", "not in this agent's context: 9999", False),
    ([], "/forget --ids=9999", "not in this agent's context: 9999", False),
    ([], "/forget --ids 1 2", "unexpected argument '2'", True),
    ([], "/remember --ids", "missing id list", True),
    ([], "/remember", "missing CRITERIA (what to remember) or --ids LIST", True),
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
    ([], "/fork --name " + "a" * 33, "32 characters at most", True),
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
    ([], "/model gpt-4oo", "'gpt-4oo' is not a model name", False),
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
                 "/fork --name root", "/kill root", "/nosuch", "/model gpt-4oo"]
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
