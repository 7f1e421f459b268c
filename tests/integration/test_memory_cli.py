"""The memory tool from the real command line, against the loopback fake provider:
`memory_writes = "ask"` refuses the LLM's writes in headless `run` unless `--yes`
(which prints each change); IKIGAI_MEMORIES_DIR and the config keys choose the folder
and its limits; `/memory` prints the files; `log` says who changed what."""

from __future__ import annotations

import json

import pytest

from tests.fakes.server import FakeProvider, Reply

KEY_ENV = {"OPENAI_API_KEY": "test-key"}


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def create(path: str, text: str) -> Reply:
    return Reply(tool_calls=[("memory", {"command": "create", "path": path, "file_text": text})])


def run(ikigai, tmp_path, fake, script: str, *extra: str, config: str = "", env=None):
    (tmp_path / "script.txt").write_text(script)
    (tmp_path / "config.toml").write_text(config)
    return ikigai("--db", str(tmp_path / "m.db"), "--model", "openai/x", "--api-base",
                  fake.openai_base, "--config", str(tmp_path / "config.toml"), "run",
                  "--script", str(tmp_path / "script.txt"), *extra,
                  env={**KEY_ENV, "IKIGAI_MEMORIES_DIR": str(tmp_path / "mem"), **(env or {})})


def test_ask_mode_refuses_headless_writes_without_yes(ikigai, tmp_path, fake):
    fake.queue(create("/memories/a.md", "hello\n"), Reply(text="I could not save it."))
    done = run(ikigai, tmp_path, fake, "remember hello\n", config='memory_writes = "ask"\n')
    assert done.returncode == 0, done.stderr
    assert "<- Error: memory writes wait for the user's approval" in done.stdout
    assert "--yes" in done.stdout
    assert not (tmp_path / "mem" / "a.md").exists()
    log = json.loads(ikigai("--db", str(tmp_path / "m.db"), "log", "--json").stdout)
    assert not [e for e in log if e["kind"] == "memory"]


def test_ask_mode_with_yes_prints_the_change_and_writes_it(ikigai, tmp_path, fake):
    fake.queue(create("/memories/a.md", "hello\n"), Reply(text="Saved."))
    done = run(ikigai, tmp_path, fake, "remember hello\n/memory\n/memory /memories/a.md\n",
               "--yes", config='memory_writes = "ask"\n')
    assert done.returncode == 0, done.stderr
    assert "Memory change: create /memories/a.md (6 bytes)" in done.stderr
    assert "+hello" in done.stderr
    assert (tmp_path / "mem" / "a.md").read_text() == "hello\n"
    out = done.stdout.splitlines()
    assert "<- File created successfully at: /memories/a.md" in out
    head = next(line for line in out if line.startswith("Memory: "))
    assert head.startswith("Memory: 1 file, 6 bytes (limits: 200 files, 20,000,000 bytes, "
                           "1,000,000 a file)")
    assert "          6  /memories/a.md" in out
    assert "     1\thello" in out
    log = ikigai("--db", str(tmp_path / "m.db"), "log").stdout.splitlines()
    assert any(line.endswith("command: /memory create /memories/a.md") for line in log)
    assert any(line.endswith("memory: memory create /memories/a.md (6 bytes)") for line in log)
    export = ikigai("--db", str(tmp_path / "m.db"), "export").stdout
    assert "> Memory change: memory create /memories/a.md (6 bytes)." in export


def test_auto_mode_writes_and_the_limits_come_from_the_config(ikigai, tmp_path, fake):
    fake.queue(create("/memories/big.md", "x" * 50), create("/memories/ok.md", "small"),
               Reply(text="done"))
    done = run(ikigai, tmp_path, fake, "save\n", config="memory_file_bytes = 20\n")
    assert done.returncode == 0, done.stderr
    assert "<- Error: /memories/big.md would be 50 bytes, over the limit of 20 bytes" in done.stdout
    assert sorted(p.name for p in (tmp_path / "mem").iterdir()) == ["ok.md"]


@pytest.mark.parametrize("config, problem", [
    ('memory_writes = "sometimes"\n', "'memory_writes' must be \"auto\" or \"ask\""),
    ("memory_files = 0\n", "'memory_files' must be 1 or more"),
    ('memories_dir = ""\n', "'memories_dir' must not be empty"),
])
def test_bad_memory_settings_are_refused(ikigai, tmp_path, fake, config, problem):
    done = run(ikigai, tmp_path, fake, "hello\n", config=config)
    assert done.returncode == 2 and problem in done.stderr
    assert fake.requests == []
