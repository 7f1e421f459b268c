"""The headless command line (SPEC §11), through the real `ikigai` in a subprocess."""

from __future__ import annotations

import json
import re

from ikigai_tui import __version__


def run_script(ikigai, tmp_path, db, text, *extra, name="script.txt"):
    script = tmp_path / name
    script.write_text(text)
    return ikigai("--db", str(db), "run", *extra, "--script", str(script))


def test_run_end_to_end_and_reports(ikigai, tmp_path):
    db = tmp_path / "e2e.db"
    done = run_script(ikigai, tmp_path, db, "hello world\n\n/mark A\nsecond message\n")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith('Offline model here. You said: "hello world". I can see 1 message')
    assert lines[1] == "Checkpoint 'A' created."
    assert lines[2].startswith('Offline model here. You said: "second message". I can see 3 messages')

    # context --json
    done = ikigai("--db", str(db), "context", "--json")
    assert done.returncode == 0, done.stderr
    ctx = json.loads(done.stdout)
    assert {"agent", "model", "messages", "marks", "tokens", "budget", "window_start"} <= set(ctx)
    assert ctx["model"] == "offline"
    assert re.fullmatch(r"[0-9a-f]{32}", ctx["agent"])
    messages = ctx["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    for m in messages:
        assert {"id", "role", "content", "in_window"} <= set(m)
        assert isinstance(m["id"], int) and m["in_window"] is True
    assert messages[0]["content"] == "hello world"
    assert messages[2]["content"] == "second message"
    assert [m["id"] for m in messages] == sorted(m["id"] for m in messages)
    assert [{"name": m["name"], "position": m["position"]} for m in ctx["marks"]] == [
        {"name": "A", "position": 2}]
    assert isinstance(ctx["tokens"], int) and ctx["tokens"] > 0
    assert ctx["budget"] == 100_000
    assert ctx["window_start"] == messages[0]["id"]

    # agents --json
    done = ikigai("--db", str(db), "agents", "--json")
    assert done.returncode == 0, done.stderr
    agents = json.loads(done.stdout)
    assert len(agents) == 1
    root = agents[0]
    assert {"id", "name", "parent", "status", "model"} <= set(root)
    assert root["id"] == ctx["agent"]
    assert (root["name"], root["parent"], root["status"], root["model"]) == (
        "root", None, "idle", "offline")

    # log --json: every event, in order, with the commands recorded
    done = ikigai("--db", str(db), "log", "--json")
    assert done.returncode == 0, done.stderr
    log = json.loads(done.stdout)
    ids = [e["id"] for e in log]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    kinds = [e["kind"] for e in log]
    assert kinds.count("user") == 2 and kinds.count("assistant") == 2
    assert "mark" in kinds and "command" in kinds
    assert all(e["agent"] == root["id"] for e in log)
    mark = next(e for e in log if e["kind"] == "mark")
    assert mark["payload"] == {"name": "A"}

    # export: markdown and json
    done = ikigai("--db", str(db), "export", "--format", "md")
    assert done.returncode == 0, done.stderr
    md = done.stdout
    assert md.startswith("# ikigai agent root")
    assert "Model: offline" in md
    assert f"## user #{messages[0]['id']}" in md
    assert "hello world" in md and "second message" in md
    assert "/mark A" in md
    done = ikigai("--db", str(db), "export", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["agent"] == root["id"] and data["model"] == "offline"
    assert [e["id"] for e in data["events"]] == ids
    in_ctx = {e["id"] for e in data["events"] if e["in_context"]}
    assert in_ctx == {m["id"] for m in messages}


def test_run_failing_input_exits_1_and_keeps_going(ikigai, tmp_path):
    db = tmp_path / "fail.db"
    done = run_script(ikigai, tmp_path, db,
                      "/clear NOPE\nafter the error\n/frobnicate\n/mark B\n")
    assert done.returncode == 1
    errors = done.stderr.splitlines()
    assert len(errors) == 2
    assert errors[0].startswith("Error: no mark named 'NOPE'")
    assert errors[1].startswith("Error: unknown command '/frobnicate'")
    lines = done.stdout.splitlines()
    assert lines[0].startswith('Offline model here. You said: "after the error"')
    assert lines[1] == "Checkpoint 'B' created."


def test_fork_agent_option_and_stdin(ikigai, tmp_path):
    db = tmp_path / "agents.db"
    done = run_script(ikigai, tmp_path, db,
                      "brief for the kid\n/fork --name kid Please do the child task\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    forked = [line for line in lines if line.startswith("Forked. Child: ")]
    assert len(forked) == 1
    short = forked[0].split()[-1]
    assert re.fullmatch(r"[0-9a-f]{6,}", short)
    # run waits for the child it started; the child's reply is printed labelled.
    assert any(line.startswith(f"[kid ({short})] Offline model here. You said: "
                               '"Please do the child task"') for line in lines)

    agents = json.loads(ikigai("--db", str(db), "agents", "--json").stdout)
    assert len(agents) == 2
    root = next(a for a in agents if a["parent"] is None)
    kid = next(a for a in agents if a["name"] == "kid")
    assert kid["parent"] == root["id"] and kid["id"].startswith(short)
    assert kid["status"] == "idle" and kid["model"] == "offline"

    # Talk to the kid, reading inputs from stdin, addressed by id prefix.
    done = ikigai("--db", str(db), "run", "--agent", short, input="hi kid\n/marks\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith('Offline model here. You said: "hi kid". I can see 5 messages')
    assert lines[1] == "No marks."

    done = ikigai("--db", str(db), "context", "--agent", "kid", "--json")
    assert done.returncode == 0, done.stderr
    ctx = json.loads(done.stdout)
    assert ctx["agent"] == kid["id"]
    contents = [m["content"] for m in ctx["messages"]]
    assert contents[0] == "brief for the kid"
    assert "Please do the child task" in contents and "hi kid" in contents
    assert len(contents) == 6

    root_ctx = json.loads(ikigai("--db", str(db), "context", "--json").stdout)
    assert root_ctx["agent"] == root["id"]
    assert "hi kid" not in [m["content"] for m in root_ctx["messages"]]


def test_run_from_stdin_on_a_new_database(ikigai, tmp_path):
    db = tmp_path / "new" / "stdin.db"
    done = ikigai("--db", str(db), "run", input="hello from stdin\n/marks\n/model\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith('Offline model here. You said: "hello from stdin"')
    assert lines[1:] == ["No marks.", "Model: offline"]
    assert db.exists()
    assert (db.stat().st_mode & 0o777) == 0o600


def test_reports_on_a_missing_database_are_errors(ikigai, tmp_path):
    db = tmp_path / "nowhere" / "missing.db"
    done = ikigai("--db", str(db), "context", "--json")
    assert done.returncode == 1
    assert done.stderr.startswith("Error:")
    assert done.stdout == ""
    done = ikigai("--db", str(db), "agents", "--json")
    assert done.returncode == 1
    assert done.stderr.startswith("Error:")
    assert not db.exists()
    assert not db.parent.exists()


def test_bad_agent_and_missing_script(ikigai, tmp_path):
    db = tmp_path / "bad.db"
    done = run_script(ikigai, tmp_path, db, "/marks\n")
    assert done.returncode == 0, done.stderr
    done = ikigai("--db", str(db), "context", "--agent", "nobody")
    assert done.returncode == 2  # a usage error
    assert done.stderr.startswith("Error: no agent named or with id starting 'nobody'")
    done = ikigai("--db", str(db), "run", "--script", str(tmp_path / "no-such-file.txt"))
    assert done.returncode == 2
    assert done.stderr.startswith("Error: cannot read script")


def test_version(ikigai):
    done = ikigai("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"ikigai {__version__}"
