"""The acceptance tests drive `ikigai` as a user does: `run` scripts fed on stdin, then
`context --json`, `log --json` and `agents --json` read back, and, for what a provider
receives, the loopback fake (tests/fakes) reached through real litellm."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import run_ikigai
from tests.fakes.server import FakeProvider

KEY_ENV = {"OPENAI_API_KEY": "test-key"}
MODEL = "openai/gpt-4o"


@dataclass
class Cli:
    """`ikigai --db DB ...`, offline or against the fake (openai format)."""

    db: Path
    fake: FakeProvider | None = None
    env: dict = field(default_factory=dict)

    def __call__(self, *args: str, input: str | None = None, env: dict | None = None,
                 timeout: float = 90) -> subprocess.CompletedProcess:
        # No key offline: with a key the default model would be that provider's.
        merged = {**(KEY_ENV if self.fake else {}), **self.env, **(env or {})}
        return run_ikigai("--db", str(self.db), *args, input=input, env=merged, timeout=timeout)

    def run(self, *lines: str, agent: str | None = None, env: dict | None = None
            ) -> subprocess.CompletedProcess:
        where = ["--model", MODEL, "--api-base", self.fake.openai_base] if self.fake else []
        who = ["--agent", agent] if agent else []
        return self(*where, "run", *who, input="".join(f"{line}\n" for line in lines), env=env)

    def ok(self, *lines: str, agent: str | None = None, env: dict | None = None) -> list[str]:
        done = self.run(*lines, agent=agent, env=env)
        assert done.returncode == 0, (done.returncode, done.stderr)
        # Notices may go to stderr (the compaction warning: test_acceptance_gaps); errors not.
        assert not [line for line in done.stderr.splitlines() if line.startswith("Error")], done.stderr
        return done.stdout.splitlines()

    def json(self, *args: str, env: dict | None = None):
        done = self(*args, "--json", env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def context(self, agent: str | None = None, env: dict | None = None) -> dict:
        return self.json("context", *(["--agent", agent] if agent else []), env=env)

    def log(self, agent: str | None = None) -> list[dict]:
        return self.json("log", *(["--agent", agent] if agent else []))

    def all_events(self) -> list[dict]:
        """Every event of every agent, by id."""
        events = {e["id"]: e for a in self.json("agents") for e in self.log(a["id"])}
        return [events[i] for i in sorted(events)]

    def contents(self, agent: str | None = None) -> list[str]:
        return [m["content"] for m in self.context(agent)["messages"]]

    def marks(self, agent: str | None = None) -> list[str]:
        return [m["name"] for m in self.context(agent)["marks"]]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def assert_one_error(done: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 1, nothing on stdout, exactly one line on stderr, starting `Error:`."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == "", done.stdout
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def conversation(body: dict) -> list[tuple[str, str]]:
    """(role, text) of an OpenAI request's messages, the system prompt left out."""
    out = []
    for m in body["messages"]:
        if m["role"] in ("system", "developer"):
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
        out.append((m["role"], content or ""))
    return out
