"""The real `ikigai` command line against the loopback fake provider (SPEC §10, §11).

The fake runs in this test process (a background thread); `ikigai` runs in a fresh
interpreter and reaches it over loopback, through real litellm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.server import Fault, FakeProvider, Reply, validate_pairs

KEY_ENV = {"OPENAI_API_KEY": "test-key"}
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def write_script(tmp_path: Path, text: str, name: str = "script.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Error:")]


def test_run_script_against_the_fake(ikigai, tmp_path, fake):
    fake.queue(Reply(text="Hello from the fake provider", usage=(21, 6)),
               Reply(text="A second streamed reply"))
    db = tmp_path / "run.db"
    script = write_script(tmp_path, "first message\n/mark A\nsecond message\n")
    done = ikigai("--db", str(db), "--model", "openai/x", "--api-base", fake.openai_base,
                  "run", "--script", str(script), env=KEY_ENV)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        "Hello from the fake provider", "Checkpoint 'A' created.", "A second streamed reply"]

    assert [(r.format, r.model, r.stream) for r in fake.requests] == [("openai", "x", True)] * 2
    second = fake.requests[1]
    assert validate_pairs(second) == []
    said = [(m["role"], m.get("content")) for m in second.body["messages"] if m["role"] != "system"]
    assert said == [("user", "first message"), ("assistant", "Hello from the fake provider"),
                    ("user", "second message")]
    assert fake.requests[0].headers.get("authorization") == "Bearer test-key"

    # What was logged: the model, the replies, the usage numbers.
    ctx = json.loads(ikigai("--db", str(db), "context", "--json").stdout)
    assert ctx["model"] == "openai/x"
    assert [(m["role"], m["content"]) for m in ctx["messages"]] == [
        ("user", "first message"), ("assistant", "Hello from the fake provider"),
        ("user", "second message"), ("assistant", "A second streamed reply")]
    log = json.loads(ikigai("--db", str(db), "log", "--json").stdout)
    usage = [e["payload"] for e in log if e["kind"] == "usage"]
    assert {k: usage[0][k] for k in ("model", "input_tokens", "output_tokens")} == {
        "model": "openai/x", "input_tokens": 21, "output_tokens": 6}
    assert usage[0]["estimated_input"] > 0


def test_run_auth_error_is_one_line_naming_the_key(ikigai, tmp_path, fake):
    fake.queue(Fault.auth(), Reply(text="never asked for"))
    db = tmp_path / "auth.db"
    script = write_script(tmp_path, "hello\n")
    done = ikigai("--db", str(db), "--model", "openai/x", "--api-base", fake.openai_base,
                  "run", "--script", str(script), env=KEY_ENV)
    assert done.returncode == 1
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    errors = error_lines(done.stderr)
    assert len(errors) == 1, done.stderr
    assert "OPENAI_API_KEY" in errors[0]
    assert "Retrying" not in done.stderr
    assert len(fake.requests) == 1  # not retried
    assert "test-key" not in done.stderr + done.stdout


def test_config_file_per_model_api_base(ikigai, tmp_path, fake):
    fake.queue(Reply(text="Reached through the config file"))
    config = tmp_path / "config.toml"
    config.write_text(f'[models."openai/x"]\napi_base = "{fake.openai_base}"\n')
    script = write_script(tmp_path, "hello config\n")
    done = ikigai("--db", str(tmp_path / "cfg.db"), "--config", str(config), "--model", "openai/x",
                  "run", "--script", str(script), env=KEY_ENV)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Reached through the config file"]
    assert len(fake.requests) == 1
    assert fake.requests[0].format == "openai" and fake.requests[0].model == "x"


# -- start-up hygiene: litellm (seconds, ~190 MB) is imported only for a real request --------

PROBE = ("import sys\nfrom ikigai_tui.cli import main\nrc = main(sys.argv[1:])\n"
         "print('LITELLM', 'litellm' in sys.modules, rc)\n")


def probe(*argv: str, env: dict | None = None) -> tuple[bool, int, subprocess.CompletedProcess]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          env=full_env, cwd=REPO, timeout=60)
    last = done.stdout.splitlines()[-1].split() if done.stdout.strip() else []
    assert last[:1] == ["LITELLM"], (done.stdout, done.stderr)
    return last[1] == "True", int(last[2]), done


def test_litellm_is_imported_only_for_requests(tmp_path, fake):
    db = tmp_path / "hygiene.db"
    # The check can fail: a real turn imports litellm.
    fake.queue(Reply(text="real reply"), Reply(tool_calls=[("slash", {"command": "mark", "args": "B"})]),
               Reply(text="after the tool"))
    script = write_script(tmp_path, "hello\nuse a tool\n")
    imported, rc, done = probe("--db", str(db), "--model", "openai/x", "--api-base",
                               fake.openai_base, "run", "--script", str(script), env=KEY_ENV)
    assert rc == 0, done.stderr
    assert imported is True
    assert "real reply" in done.stdout and "after the tool" in done.stdout
    assert len(fake.requests) == 3

    # Reading a database full of provider turns does not.
    for command in (["context"], ["context", "--json"], ["agents"], ["agents", "--json"],
                    ["log"]):
        imported, rc, done = probe("--db", str(db), *command, env=KEY_ENV)
        assert rc == 0, (command, done.stderr)
        assert imported is False, command
    _, _, done = probe("--db", str(db), "agents", "--json", env=KEY_ENV)
    agents = json.loads("\n".join(done.stdout.splitlines()[:-1]))
    assert [a["model"] for a in agents] == ["openai/x"]

    # Nor does importing the core, the CLI, or the provider modules (the adapter is lazy).
    code = (
        "import importlib, pkgutil, sys\n"
        "import ikigai_tui.core as core\n"
        "for m in pkgutil.iter_modules(core.__path__):\n"
        "    importlib.import_module('ikigai_tui.core.' + m.name)\n"
        "for name in ('ikigai_tui.cli', 'ikigai_tui.cli.run', 'ikigai_tui.cli.output',\n"
        "             'ikigai_tui.config', 'ikigai_tui.runtime', 'ikigai_tui.llm.providers',\n"
        "             'ikigai_tui.llm.errors', 'ikigai_tui.llm.offline',\n"
        "             'ikigai_tui.llm.litellm_provider'):\n"
        "    importlib.import_module(name)\n"
        "print('litellm' in sys.modules, len([m for m in sys.modules if m.startswith('ikigai_tui.core.')]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    flag, count = done.stdout.split()
    assert flag == "False"
    assert int(count) >= 10  # the modules were really imported
