"""`ikigai -p PROMPT` / `ikigai ask`: one message, its reply, exit (issue 16, item 4).
Output formats text, json and stream-json (validated line by line against the schema in
stream_schema.py), `run --output-format`, and the exit codes 0, 1, 2."""

from __future__ import annotations

import argparse
import json

import pytest

from ikigai_tui.cli import build_parser, main

from tests.fakes.server import Fault, FakeProvider, Reply
from tests.integration.stream_schema import JSON_RESULT, validate, validate_line

KEY_ENV = {"OPENAI_API_KEY": "test-key", "IKIGAI_MAX_RETRIES": "1"}


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def stream_lines(stdout: str) -> list[dict]:
    objects = []
    for number, line in enumerate(stdout.splitlines(), 1):
        obj = json.loads(line)  # every line is one JSON object
        assert validate_line(obj) == [], (number, line, validate_line(obj))
        objects.append(obj)
    assert objects and objects[-1]["type"] == "result"
    assert objects[0]["type"] == "system"
    return objects


def test_the_validator_can_fail():
    assert validate_line({"type": "text_delta", "agent": "a", "text": "x"}) == []
    assert validate_line({"type": "text_delta", "agent": "a"})  # missing text
    assert validate_line({"type": "text_delta", "agent": "a", "text": 3})
    assert validate_line({"type": "text_delta", "agent": "a", "text": "x", "extra": 1})
    assert validate_line({"type": "nonsense"})
    assert validate_line({"type": "usage", "agent": "a", "model": "m", "input_tokens": True,
                          "output_tokens": 1})


def test_p_text_prints_the_reply_and_writes_the_turn(ikigai, tmp_path):
    db = tmp_path / "p.db"
    done = ikigai("--db", str(db), "-p", "hello plums")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("Offline model here. You said: \"hello plums\".")
    assert done.stdout.count("\n") == 1
    again = ikigai("--db", str(db), "ask", "and", "pears")  # words joined, same root
    assert again.returncode == 0, again.stderr
    assert 'You said: "and pears"' in again.stdout
    ctx = json.loads(ikigai("--db", str(db), "context", "--json").stdout)
    assert [m["role"] for m in ctx["messages"]] == ["user", "assistant"] * 2


def test_p_json_is_one_result_object(ikigai, tmp_path):
    done = ikigai("--db", str(tmp_path / "j.db"), "-p", "hello", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert validate(result, JSON_RESULT) == []
    assert result["subtype"] == "success" and result["exit_code"] == 0
    assert result["result"].startswith("Offline model here.")
    assert [e["type"] for e in result["events"]] == ["system", "user", "assistant", "usage"]
    assert all(validate_line(e) == [] for e in result["events"])
    assert result["usage"]["cost_usd"] == 0.0


def test_p_stream_json_events_in_order(ikigai, tmp_path):
    done = ikigai("--db", str(tmp_path / "s.db"), "-p", "hello", "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    objects = stream_lines(done.stdout)
    kinds = [o["type"] for o in objects]
    assert kinds[:2] == ["system", "user"]
    deltas = [o["text"] for o in objects if o["type"] == "text_delta"]
    assert len(deltas) > 3  # as it happens, not at the end
    reply = next(o for o in objects if o["type"] == "assistant")
    assert "".join(deltas) == reply["content"] == objects[-1]["result"]
    assert kinds.index("assistant") > max(i for i, k in enumerate(kinds) if k == "text_delta")
    assert kinds[-2:] == ["usage", "result"]


def test_stream_json_tool_calls_results_and_retries(ikigai, tmp_path, fake):
    fake.queue(Fault.server_error(),
               Reply(text="Marking.", tool_calls=[("slash", {"command": "mark", "args": "A"})]),
               Reply(text="Marked it."))
    done = ikigai("--db", str(tmp_path / "t.db"), "--model", "openai/x", "--api-base",
                  fake.openai_base, "-p", "mark this", "--output-format", "stream-json",
                  env=KEY_ENV, timeout=90)
    assert done.returncode == 0, done.stderr
    objects = stream_lines(done.stdout)
    kinds = [o["type"] for o in objects]
    assert "retry" in kinds and kinds.index("retry") < kinds.index("text_delta")
    call = next(o for o in objects if o["type"] == "tool_call")
    result = next(o for o in objects if o["type"] == "tool_result")
    assert call["name"] == "slash" and json.loads(call["arguments"])["command"] == "mark"
    assert result["call_id"] == call["call_id"] and "Checkpoint 'A'" in result["content"]
    assert kinds.count("usage") == 2
    final = objects[-1]
    assert final["result"] == "Marked it."
    assert final["usage"]["input_tokens"] == sum(o["input_tokens"] for o in objects
                                                 if o["type"] == "usage")
    assert "test-key" not in done.stdout + done.stderr


def test_a_failed_turn_exits_1_with_an_error_object(ikigai, tmp_path, fake):
    fake.queue(Fault.auth())
    done = ikigai("--db", str(tmp_path / "f.db"), "--model", "openai/x", "--api-base",
                  fake.openai_base, "-p", "hello", "--output-format", "stream-json", env=KEY_ENV)
    assert done.returncode == 1, done.stderr
    objects = stream_lines(done.stdout)
    errors = [o for o in objects if o["type"] == "error"]
    assert len(errors) == 1 and "OPENAI_API_KEY" in errors[0]["message"]
    assert objects[-1]["subtype"] == "error" and objects[-1]["is_error"] is True
    assert objects[-1]["exit_code"] == 1 and objects[-1]["errors"] == [errors[0]["message"]]
    assert [line for line in done.stderr.splitlines() if line.startswith("Error:")] \
        == [f"Error: {errors[0]['message']}"]
    fake.queue(Fault.auth())  # text: the error on stderr, nothing on stdout
    text = ikigai("--db", str(tmp_path / "f2.db"), "--model", "openai/x", "--api-base",
                  fake.openai_base, "-p", "hello", env=KEY_ENV)
    assert text.returncode == 1 and text.stdout == ""
    assert "Traceback" not in text.stderr and "OPENAI_API_KEY" in text.stderr


@pytest.mark.parametrize("argv, needle", [
    (["-p", ""], "the prompt is empty"),
    (["ask"], "the prompt is empty"),
    (["-p", "hi", "--agent", "nobody"], "no agent named"),
    (["--agent", "root"], "--agent goes with -p"),
    (["--output-format", "json"], "--output-format goes with -p"),
    (["-p", "hi", "--output-format", "xml"], "invalid choice"),
    (["--model", "gpt-4oo", "-p", "hi"], "did you mean"),
    (["--model", "openai/gpt-4o", "-p", "hi"], "OPENAI_API_KEY is not set"),
])
def test_usage_and_configuration_errors_exit_2_writing_nothing(ikigai, tmp_path, argv, needle):
    db = tmp_path / "u.db"
    done = ikigai("--db", str(db), *argv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert needle in done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    if "--agent" not in argv or "-p" not in argv:
        assert not db.exists() or needle == "OPENAI_API_KEY is not set"


def test_missing_key_writes_no_model_switch(ikigai, tmp_path):
    db = tmp_path / "k.db"
    assert ikigai("--db", str(db), "-p", "first").returncode == 0
    done = ikigai("--db", str(db), "--model", "openai/gpt-4o", "-p", "hi")
    assert done.returncode == 2
    log = json.loads(ikigai("--db", str(db), "log", "--json").stdout)
    assert [e["kind"] for e in log if e["kind"] in ("model", "user")] == ["user"]


def test_prompt_from_stdin(ikigai, tmp_path):
    done = ikigai("--db", str(tmp_path / "i.db"), "ask", "-", input="from a pipe\nsecond line\n")
    assert done.returncode == 0, done.stderr
    assert 'You said: "from a pipe' in done.stdout


def test_run_output_formats(ikigai, tmp_path):
    db = tmp_path / "r.db"
    script = "hello\n/mark A\n/nonsense\n"
    done = ikigai("--db", str(db), "run", "--output-format", "stream-json", input=script)
    assert done.returncode == 1  # /nonsense failed
    objects = stream_lines(done.stdout)
    commands = [o for o in objects if o["type"] == "command"]
    assert commands == [{"type": "command", "agent": objects[0]["agent"], "text": "/mark A",
                         "output": ["Checkpoint 'A' created."]}]
    assert any(o["type"] == "error" and "nonsense" in o["message"] for o in objects)
    assert objects[-1]["exit_code"] == 1 and objects[-1]["subtype"] == "error"
    # json: one object at the end; the format may come before the subcommand too
    done = ikigai("--db", str(db), "--output-format", "json", "run", input="again\n")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert validate(result, JSON_RESULT) == []
    assert 'You said: "again"' in result["result"]


def test_help_documents_exit_codes_and_examples(ikigai):
    done = ikigai("--help")
    assert done.returncode == 0
    for needle in ("exit status:", "130", "usage or configuration error", "-p PROMPT", "examples:"):
        assert needle in done.stdout
    for command in ("ask", "run", "context", "agents", "log", "export", "check", "paths",
                    "completion"):
        sub = ikigai(command, "--help")
        assert sub.returncode == 0, command
        assert "ikigai" in sub.stdout.split("examples:")[1], command


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def test_every_command_help_lists_its_exit_statuses(capsys):
    """The README says `ikigai COMMAND --help` shows the exit statuses: every command's
    does (any command added later too), after its examples, success and usage error
    always there."""
    commands = next(a for a in build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction)).choices
    assert {"ask", "run", "context", "agents", "log", "export", "check"} <= set(commands)
    for command in commands:
        statuses = _help(capsys, command).split("examples:")[1].split("exit status:\n")[1]
        assert "  0    success\n" in statuses, command
        assert "  2    a usage or configuration error" in statuses, command
    check = _help(capsys, "check")
    assert "  1    the database is damaged" in check


def test_run_help_example_is_one_line_per_command(capsys):
    """The example pipes `printf 'hello\\n/mark A\\n/context\\n'`: shown as typed, the
    backslashes kept, not broken over three lines."""
    shown = _help(capsys, "run")
    assert "  printf 'hello\\n/mark A\\n/context\\n' | ikigai run\n" in shown
