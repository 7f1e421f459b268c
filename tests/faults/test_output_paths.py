"""Issue 10, item 1: hostile model, tool, provider and file text through every output
path. Text mode (stdout, stderr, line mode) shows it inert, as visible placeholders;
JSON escapes every control character (C1 included) and stays exact; `export --output`
writes the exact text.

One provider run produces every kind of text (a streamed reply, a tool call and its
result, another agent's reply, a retry notice, an error body); the reading commands
then print it back in every format.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from tests.conftest import run_ikigai
from tests.fakes.server import Fault, FakeProvider, Reply
from tests.faults.hostile import ALL, PAYLOADS, assert_inert, neutralised, raw_controls

KEY_ENV = {"OPENAI_API_KEY": "test-key", "IKIGAI_MAX_RETRIES": "1"}
EVERY = sorted(PAYLOADS)


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory):
    """A database holding hostile text in replies, tool calls and results, an error, a
    child agent's reply; plus what `run` printed while making it."""
    tmp = tmp_path_factory.mktemp("hostile")
    db = tmp / "h.db"
    env = dict(os.environ, **KEY_ENV, HOME=str(tmp), XDG_DATA_HOME=str(tmp / "d"),
               XDG_CONFIG_HOME=str(tmp / "c"))
    with FakeProvider() as fake:
        fake.queue(
            # 1: a reply with every payload and a tool call whose result echoes them.
            Reply(text=ALL, tool_calls=[("slash", {"command": "send", "args": shlex.quote(ALL) + " hi"})]),
            Reply(text="after the tool " + ALL),
            # 2: a 500 (retried, shown) whose body is hostile, then a 400 (reported).
            Fault.http(500, {"error": {"message": "busy " + ALL}}),
            Fault.http(400, {"error": {"message": "refused " + ALL, "type": "invalid"}}),
            # 3: a child's reply, printed with its name.
            Reply(text="child says " + ALL),
        )
        script = tmp / "script.txt"
        script.write_text("first\nsecond\n/fork --name kid go\n", encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "ikigai_tui", "--db", str(db), "--model", "openai/x",
             "--api-base", fake.openai_base, "run", "--script", str(script)],
            capture_output=True, text=True, env=env, timeout=120)
    return db, done


def test_run_shows_replies_tools_and_other_agents_inert(hostile_db):
    _, done = hostile_db
    assert done.returncode == 1  # the 400 failed an input
    out = done.stdout
    assert neutralised(out, "run stdout") == EVERY
    lines = out.splitlines()
    assert any(line.startswith("-> slash") for line in lines)  # the tool call
    result = [line for line in lines if line.startswith("<- ")]  # its result names the agent
    assert len(result) == 1 and neutralised(result[0], "tool result") == EVERY
    assert any(line.startswith("[kid") and "child says" in line for line in lines)


def test_run_shows_provider_errors_and_retries_inert(hostile_db):
    _, done = hostile_db
    err = done.stderr
    assert_inert(err, "run stderr")
    assert "Traceback" not in err
    retry = [line for line in err.splitlines() if line.startswith("Retrying")]
    error = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(retry) == 1 and "busy" in retry[0]
    assert len(error) == 1 and "refused" in error[0]
    # Error bodies are folded to one line: every payload shows, none acts.
    assert neutralised(retry[0], "retry line") and neutralised(error[0], "error line")


@pytest.mark.parametrize("command", [["log"], ["context"], ["export"], ["export", "--format", "md"]])
def test_reading_commands_print_text_inert(hostile_db, command):
    db, _ = hostile_db
    done = run_ikigai("--db", str(db), *command)
    assert done.returncode == 0, done.stderr
    assert neutralised(done.stdout, " ".join(command)) == EVERY
    assert done.stderr == ""


def test_child_log_and_agents_tree_are_inert(hostile_db):
    db, _ = hostile_db
    log = run_ikigai("--db", str(db), "log", "--agent", "kid")
    assert log.returncode == 0, log.stderr
    assert neutralised(log.stdout, "log --agent kid") == EVERY
    tree = run_ikigai("--db", str(db), "agents")
    assert tree.returncode == 0 and "kid" in tree.stdout
    assert_inert(tree.stdout, "agents")


@pytest.mark.parametrize("command", [["log", "--json"], ["export", "--format", "json"],
                                     ["context", "--json"], ["agents", "--json"]])
def test_json_escapes_every_control_character_and_stays_exact(hostile_db, command):
    db, _ = hostile_db
    done = run_ikigai("--db", str(db), *command)
    assert done.returncode == 0, done.stderr
    assert raw_controls(done.stdout) == []  # C1 and DEL included: \u009b, never raw
    data = json.loads(done.stdout)
    if command[0] == "agents":
        return
    text = json.dumps(data, ensure_ascii=False)
    # Exact: decoding the JSON gives the hostile text back, byte for byte.
    assert ALL in text.encode().decode("unicode_escape", "ignore") or _contains_exact(data)


def _contains_exact(data) -> bool:
    if isinstance(data, str):
        return ALL in data
    if isinstance(data, dict):
        return any(_contains_exact(v) for v in data.values())
    if isinstance(data, list):
        return any(_contains_exact(v) for v in data)
    return False


def test_json_log_holds_the_exact_text(hostile_db):
    db, _ = hostile_db
    events = json.loads(run_ikigai("--db", str(db), "log", "--json").stdout)
    replies = [e["payload"]["content"] for e in events if e["kind"] == "assistant"]
    assert replies[0] == ALL
    assert "\x9b" in replies[0] and "\r" in replies[0]


def test_export_to_a_file_is_exact_text(hostile_db, tmp_path):
    db, _ = hostile_db
    target = tmp_path / "out.md"
    done = run_ikigai("--db", str(db), "export", "--output", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    text = target.read_bytes().decode("utf-8")
    assert ALL in text  # raw, exactly as the model wrote it
    assert (target.stat().st_mode & 0o777) == 0o600


def test_export_to_an_unwritable_place_is_one_line(hostile_db, tmp_path):
    db, _ = hostile_db
    done = run_ikigai("--db", str(db), "export", "--output", str(tmp_path / "no" / "x.md"))
    assert done.returncode == 1
    assert done.stderr.startswith("Error: cannot write") and done.stderr.count("\n") == 1


def test_offline_echo_and_line_mode_are_inert(tmp_path):
    """The user's own hostile line, echoed by the offline model, in `run` and `--line`."""
    db = tmp_path / "o.db"
    for mode in (["run"], ["--line"]):
        lines = "".join(f"say {payload}\n" for payload in PAYLOADS.values())
        done = run_ikigai("--db", str(db), *mode, input=f"{lines}/nosuch{ALL}\n")
        assert done.returncode == 1, done.stderr  # the unknown command
        # The offline model folds whitespace (the bare CR too) in what it echoes.
        assert neutralised(done.stdout, f"{mode} stdout") == sorted(set(EVERY) - {"bare_cr"}), done.stdout
        assert_inert(done.stderr, f"{mode} stderr")
        assert done.stderr.count("Error:") == 1


def test_a_cut_stream_reason_and_a_bad_script_path_are_inert(tmp_path):
    done = run_ikigai("--db", str(tmp_path / "s.db"), "run", "--script",
                      str(tmp_path / f"missing{PAYLOADS['osc52_clipboard']}"))
    assert done.returncode == 2  # a usage error
    assert_inert(done.stderr, "script path error")
    assert done.stderr.startswith("Error: cannot read script")
