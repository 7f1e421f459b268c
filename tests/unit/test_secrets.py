"""support/secrets.py: which variables a tool's child goes without, and the masking of
every tool result (the diagnostics log's redaction is the same code)."""

from __future__ import annotations

from ikigai_tui.support import diagnostics
from ikigai_tui.support.secrets import child_environment, mask, secret_values, withheld

ENV = {"OPENAI_API_KEY": "sk-proj-abcdefgh12345678", "GITHUB_TOKEN": "tok-value-1234",
       "AWS_SECRET_ACCESS_KEY": "aws/secret+value", "PGPASSWORD": "hunter2hunter",
       "DATABASE_URL": "postgres://me:pw@db/x", "IKIGAI_DB": "/data/ikigai.db",
       "HOME": "/home/me", "PATH": "/usr/bin", "LANG": "C.UTF-8", "SHORT_TOKEN": "abc"}


def test_the_child_environment_leaves_secrets_and_ikigai_settings_out():
    assert child_environment(ENV) == {"HOME": "/home/me", "PATH": "/usr/bin", "LANG": "C.UTF-8"}
    assert child_environment(ENV, passed=["GITHUB_TOKEN", "IKIGAI_DB"]) == {
        "HOME": "/home/me", "PATH": "/usr/bin", "LANG": "C.UTF-8",
        "GITHUB_TOKEN": "tok-value-1234", "IKIGAI_DB": "/data/ikigai.db"}
    assert [n for n in ENV if withheld(n)] == [
        "OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD",
        "DATABASE_URL", "IKIGAI_DB", "SHORT_TOKEN"]


def test_mask_replaces_secret_values_and_key_shapes():
    secrets = secret_values(ENV)
    assert secrets[0] == "sk-proj-abcdefgh12345678" and "abc" not in secrets  # too short
    text = ("key sk-proj-abcdefgh12345678, token tok-value-1234, pw hunter2hunter, "
            "url postgres://me:pw@db/x, gh ghp_abcdefghijklmnopqrstuvwxyz012345, "
            "Authorization: Bearer abc.def.ghi.jkl, home /home/me, abc")
    assert mask(text, secrets) == (
        "key [secret], token [secret], pw [secret], url [secret], gh [secret], "
        "Authorization: [secret], home /home/me, abc")


def test_the_diagnostics_log_uses_the_same_masking():
    secrets = secret_values(ENV)
    assert diagnostics.redact("token tok-value-1234 and sk-otherkey12345", secrets) == \
        "token [redacted] and [redacted]"
