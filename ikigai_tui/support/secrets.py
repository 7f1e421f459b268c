"""Secrets: which environment variables hold them, what a key looks like, and masking.

One implementation for every place that keeps secrets out: the diagnostics log
(support/diagnostics.py, replacing with "[redacted]"), the tools' child processes (their
environment leaves the secrets out, `child_environment`) and every tool result (masked with
"[secret]" before it is stored or sent to a model, `mask`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

# A variable whose name says it holds a secret: *_API_KEY, *_TOKEN, *_SECRET, *PASSWORD*,
# and a database URL (which may carry a password).
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|DATABASE_UR[LI]|DB_UR[LI]|_DSN$",
                          re.IGNORECASE)
# Strings shaped like a credential, wherever they come from.
_SHAPES = re.compile(
    r"(sk-[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|(?i:x-api-key|api[_-]?key)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9._-]{8,})")
MIN_LENGTH = 6  # shorter values ("true", "0") are not masked wherever they appear
SECRET = "[secret]"


def secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return bool(_SECRET_NAME.search(name))


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the environment's secret-like variables, longest first (so a secret
    that contains another is masked whole)."""
    environ = os.environ if environ is None else environ
    found = {value for name, value in environ.items()
             if secret_name(name) and len(value) >= MIN_LENGTH}
    return sorted(found, key=len, reverse=True)


def mask(text: str, secrets: Iterable[str] | None = None, replacement: str = SECRET) -> str:
    """`text` with the secrets' values (default: the environment's) and anything shaped
    like a key replaced."""
    for secret in secrets if secrets is not None else secret_values():
        text = text.replace(secret, replacement)
    return _SHAPES.sub(replacement, text)


def withheld(name: str) -> bool:
    """Whether a tool's child process goes without this variable by default: secrets,
    the database URL, and the program's own settings (IKIGAI_*)."""
    return secret_name(name) or name.upper().startswith("IKIGAI_")


def child_environment(environ: Mapping[str, str] | None = None,
                      passed: Iterable[str] = ()) -> dict[str, str]:
    """The environment a tool's child process gets: the parent's without what is
    `withheld`, except the names the user lets through (the setting `tool_env_pass`)."""
    environ = os.environ if environ is None else environ
    allowed = set(passed)
    return {name: value for name, value in environ.items()
            if name in allowed or not withheld(name)}
