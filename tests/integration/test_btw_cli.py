"""/btw headless (issue 27 item 5): `ikigai run` and `-p` print the side answer under its
mark; the context is unchanged by it and `ikigai log` says it in words."""

from __future__ import annotations

import json

from tests.integration.test_cli import run_script

MARK = "Side answer (not in any context):"


def test_btw_in_a_script_and_with_p(ikigai, tmp_path):
    db = tmp_path / "btw.db"
    done = run_script(ikigai, tmp_path, db, "hello world\n/btw what did I say?\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == MARK
    # The offline model echoes the last message and counts the messages it sees.
    assert lines[2].startswith('Offline model here. You said: "what did I say?". I can see 3 messages')

    done = ikigai("--db", str(db), "-p", "/btw and now?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == MARK
    assert 'You said: "and now?". I can see 3 messages' in done.stdout

    context = json.loads(ikigai("--db", str(db), "context", "--json").stdout)
    assert [m["content"] for m in context["messages"] if m["role"] == "user"] == ["hello world"]
    log = ikigai("--db", str(db), "log").stdout
    assert "btw: side question to offline (in no context): and now? -> Offline model" in log
