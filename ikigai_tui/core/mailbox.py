"""Mail that acts (issue 27), the rules: each a pure function of an agent's own events.

- Its mail mode, "wake" or "manual": the latest `mail_mode` event (/mail MODE), else
  what its `fork` event recorded (/fork --mail MODE, or the parent's mode when the
  parent's was set), else the config's `mail`, else "wake" for a child and "manual" for
  the root.
- How many turns woken by mail it took in a row: the `/check-mail` commands run by a
  wake since the latest message typed to it (a user message that is not a read mail).
- Whether a turn's end reports home: the child was forked with --report and the turn
  answered its fork prompt or mail it read.
"""

from __future__ import annotations

from typing import NamedTuple

from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.replay.rows import kind_code

MODES = ("wake", "manual")
WAKE = "wake"  # the `source` of the /check-mail a wake runs


class MailSettings(NamedTuple):
    mode: str | None = None  # the config's `mail` (None: wake for a child, manual for the root)
    wake_limit: int = 10  # turns woken by mail in a row, without a message typed to the agent
    wait_timeout: float = 600.0  # the LLM's /wait, when it gives no --timeout (seconds)


class Mode(NamedTuple):
    mode: str
    why: str  # where it comes from, in a few words


_MODE_KINDS = frozenset({kind_code("mail_mode"), kind_code("fork")})


def explicit_mode(replayer: Replayer) -> Mode | None:
    """The mode this agent's own events set (/mail, or its fork), or None."""
    found = None
    for _key, kind, payload in replayer.history.of_kinds(_MODE_KINDS):
        if kind == "mail_mode":
            found = Mode(payload["mode"], "set by /mail")
        elif "parent" in payload and payload.get("mail") in MODES:  # the child's side of its fork
            found = Mode(payload["mail"], "set at its fork")
    return found


def mail_mode(replayer: Replayer, is_root: bool, settings: MailSettings) -> Mode:
    """The agent's mail mode and why (the rule in the module's docstring)."""
    if (mode := explicit_mode(replayer)) is not None:
        return mode
    if settings.mode in MODES:
        return Mode(settings.mode, "the config's mail")
    return Mode("manual", "the default for the root") if is_root else Mode(
        "wake", "the default for a child")


def woken_in_a_row(replayer: Replayer, limit: int) -> int:
    """The turns woken by mail since the latest message typed to the agent (counted up
    to `limit`: enough to know the limit is reached)."""
    count = 0
    for _key, kind, payload in reversed(replayer.history):
        if kind == "user" and "mail" not in payload:
            break
        if kind == "command" and payload.get("source") == WAKE:
            count += 1
            if count >= limit:
                break
    return count


def reports_home(replayer: Replayer) -> bool:
    """Forked with --report (its fork event says so)."""
    history = replayer.history
    return bool(history) and history[0][1] == "fork" and bool(history[0][2].get("report"))


class TurnEnd(NamedTuple):
    """What the latest turn answered and gave: the user message, the final reply's id
    (None: no reply), and whether it was stopped (cancelled or failed)."""

    answered: int
    reply: int | None
    stopped: bool


def last_turn(replayer: Replayer) -> TurnEnd | None:
    """The latest turn of the agent's own history, or None when it has none."""
    reply = None
    stopped = False
    for key, kind, payload in reversed(replayer.history):
        if kind == "user":
            return TurnEnd(key, reply, stopped)
        if kind == "assistant" and reply is None:
            reply = key
            stopped = stopped or bool(payload.get("interrupted"))
        elif kind in ("interrupted", "error"):
            stopped = True
    return None


def from_fork_or_mail(replayer: Replayer, user_key: int) -> bool:
    """Whether the user message `user_key` is the fork prompt or mail the agent read (not
    a message typed to it)."""
    history = replayer.history
    if len(history) > 1 and history[0][1] == "fork" and history[1][0] == user_key:
        return history[1][1] == "user"
    index = history.position(user_key)
    return index < len(history) and "mail" in history[index][2]


def last_reply(replayer: Replayer) -> int | None:
    """The id of the agent's latest reply (its own or, with none yet, None)."""
    for key, kind, _payload in reversed(replayer.history):
        if kind == "assistant":
            return key
    return None
