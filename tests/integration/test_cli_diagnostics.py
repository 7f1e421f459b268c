"""Diagnostics (issue 16, item 6): `--debug` writes a log under the user log folder with
requests' timings and sizes, retries and errors with tracebacks, never a key and never
message text (unless --debug-content); `ikigai paths`; a defect is one line naming the
log, its traceback in the log."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ikigai_tui.support import diagnostics
from tests.fakes.server import Fault, FakeProvider, Reply

KEY = "sk-live-0123456789abcdefSECRET"
MESSAGE = "the plum orchard password is purple-giraffe-42"


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def _log_dir() -> Path:
    return Path(os.environ["HOME"]) / ".local" / "state" / "ikigai" / "log"


def _paths(ikigai) -> dict:
    done = ikigai("paths", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_paths(ikigai, tmp_path):
    home = Path(os.environ["HOME"])
    found = _paths(ikigai)
    assert found == {"config": str(home / "config" / "ikigai" / "config.toml"),
                     "database": str(home / "data" / "ikigai" / "ikigai.db"),
                     "memories": str(home / "data" / "ikigai" / "memories"),
                     "logs": str(_log_dir())}
    text = ikigai("--db", str(tmp_path / "x.db"), "paths")
    assert text.returncode == 0
    assert text.stdout.splitlines()[1] == f"database: {tmp_path / 'x.db'}"
    assert [line.split(":")[0] for line in text.stdout.splitlines()] == [
        "config", "database", "memories", "logs"]
    assert not (tmp_path / "x.db").exists()  # naming a file creates nothing


def test_debug_log_has_timings_retries_errors_and_no_key_nor_text(ikigai, tmp_path, fake):
    fake.queue(Fault.server_error(), Reply(text="The orchard reply " * 5),
               Fault.auth())
    env = {"OPENAI_API_KEY": KEY, "IKIGAI_MAX_RETRIES": "1"}
    base = ("--db", str(tmp_path / "d.db"), "--model", "openai/x", "--api-base", fake.openai_base)
    done = ikigai(*base, "--debug", "-p", MESSAGE, env=env, timeout=90)
    assert done.returncode == 0, done.stderr
    failed = ikigai(*base, "ask", "--debug", MESSAGE + " again", env=env, timeout=90)
    assert failed.returncode == 1
    log_file = _log_dir() / "ikigai.log"
    text = log_file.read_text()
    assert (log_file.stat().st_mode & 0o777) == 0o600
    assert (_log_dir().stat().st_mode & 0o777) == 0o700
    # what the program did
    assert "start: ikigai" in text and "message text not logged" in text
    assert "request openai/x: 1 messages" in text
    assert "first piece after" in text and "reply openai/x:" in text
    assert "may be retried" in text and "retries in" in text
    assert "usage openai/x:" in text and "turn of agent" in text
    assert "Traceback (most recent call last)" in text  # the auth error, with its traceback
    # what it must never hold; the fake echoes the key in its 401 body, so it was offered
    assert fake.requests[-1].headers.get("authorization") == f"Bearer {KEY}"
    assert KEY not in text and KEY[10:] not in text
    assert "[redacted]" in text
    assert "purple-giraffe" not in text and "orchard reply" not in text


def test_debug_content_logs_message_text(ikigai, tmp_path):
    done = ikigai("--db", str(tmp_path / "c.db"), "-p", MESSAGE, "--debug-content")
    assert done.returncode == 0, done.stderr
    text = (_log_dir() / "ikigai.log").read_text()
    assert "message text logged" in text and "purple-giraffe-42" in text


def test_no_debug_no_log_file(ikigai, tmp_path):
    assert ikigai("--db", str(tmp_path / "n.db"), "-p", "hello").returncode == 0
    assert not (_log_dir() / "ikigai.log").exists()


def test_a_defect_is_one_line_naming_the_log(tmp_path, monkeypatch, capsys):
    from ikigai_tui import cli
    from ikigai_tui.cli import output as cli_output

    async def broken(args, config):
        raise RuntimeError("boom in the report")

    monkeypatch.setattr(cli_output, "report", broken)
    diagnostics.stop()
    try:
        status = cli.main(["--db", str(tmp_path / "b.db"), "agents"])
    finally:
        diagnostics.stop()
    err = capsys.readouterr().err
    assert status == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    log_file = _log_dir() / "ikigai.log"
    assert err == (f"Error: internal error (RuntimeError: boom in the report); the traceback "
                   f"is in {log_file}\n")
    text = log_file.read_text()
    assert "unexpected error in ikigai agents: RuntimeError" in text
    assert "Traceback (most recent call last)" in text and "boom in the report" in text


def test_redact_can_fail():
    secrets = ["abcdef123456"]
    assert diagnostics.redact("key abcdef123456 here", secrets) == "key [redacted] here"
    assert diagnostics.redact("Authorization: Bearer sk-abcdefghijkl", []) == \
        "Authorization: [redacted]"
    assert diagnostics.redact("x-api-key: 'abcdefgh1234'", []) == "[redacted]'"
    assert diagnostics.redact("nothing secret", secrets) == "nothing secret"
