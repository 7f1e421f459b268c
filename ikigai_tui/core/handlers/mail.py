"""Mail that acts (issue 27): /mail [wake|manual], /wait AGENT... [--timeout SECONDS].
The rules are core/mailbox.py's; the runtime (wakes, reports, waiting) core/mailwake.py's."""

from __future__ import annotations

import math

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.errors import CommandError, UsageError
from ikigai_tui.core.mailbox import MODES

REPLY_CHARS = 2_000  # of each reply /wait returns; the rest is named by its id


async def mail(c: CommandContext) -> CommandResult:
    """/mail shows the agent's mail mode and why; /mail MODE sets it (an event: it
    survives restarts; children forked afterwards inherit it)."""
    word = c.args.take()
    c.args.done()
    waker = c.services.mail()
    label = c.tree.label(c.agent.id)
    if word is None:
        mode = await waker.mode(c.agent)
        does = ("mail wakes it: it reads its mail and takes a turn by itself"
                if mode.mode == "wake" else "its mail waits for /check-mail")
        return CommandResult([f"Mail of {label}: {mode.mode} ({mode.why}); {does}."])
    if word not in MODES:
        raise UsageError(f"'{word}' is not a mail mode (wake or manual)")
    c.add("mail_mode", {"mode": word})
    c.after_commit.append(lambda: waker.poke(c.agent.id))  # mail waiting wakes it now
    return CommandResult([f"Mail of {label}: {word}. Children forked from now on inherit it."])


def _wait_args(c: CommandContext) -> tuple[list[str], float | None]:
    refs: list[str] = []
    timeout: float | None = None
    while (token := c.args.take()) is not None:
        if token == "--timeout" or token.startswith("--timeout="):
            raw = token.partition("=")[2] if "=" in token else c.args.require("SECONDS after --timeout")
            try:
                timeout = float(raw)
            except ValueError:
                raise UsageError(f"--timeout takes seconds, not '{raw}'") from None
            if not math.isfinite(timeout) or timeout <= 0:
                raise UsageError("--timeout takes more than 0 seconds")
        elif token.startswith("--"):
            raise UsageError(f"unknown option '{token}'")
        else:
            refs.append(token)
    if not refs:
        raise UsageError("missing AGENT")
    return refs, timeout


async def wait(c: CommandContext) -> CommandResult:
    """/wait AGENT... waits until every agent named is idle (or dead), then gives their
    latest replies. Waiting for itself or an ancestor would never end: refused."""
    refs, timeout = _wait_args(c)
    tree, me = c.tree, c.agent.id
    targets = list({(a := tree.resolve(ref)).id: a for ref in refs}.values())
    for target in targets:
        if target.id == me:
            raise CommandError("an agent cannot wait for itself (it would wait forever)")
        if tree.is_descendant(me, target.id):
            raise CommandError(f"{tree.label(target.id)} is an ancestor of this agent: waiting "
                               "for it would never end")
    waker = c.services.mail()
    if timeout is None and c.source == "llm":
        timeout = waker.settings().wait_timeout
    left = await waker.wait(me, [t.id for t in targets], timeout, c.services.elsewhere)
    lines = [f"Timed out after {timeout:g} s: {len(left)} of {len(targets)} still working."
             ] if left else []
    for target in targets:
        state = "still working" if target.id in left else "dead" if target.dead else "idle"
        lines.append(f"{tree.label(target.id)} ({state}):")
        reply = await waker.reply_of(target.id)
        if reply is None:
            lines.append("  (no reply yet)")
            continue
        key, text = reply
        if len(text) > REPLY_CHARS:
            text = (f"{text[:REPLY_CHARS]}\n[... {len(text) - REPLY_CHARS} more characters: "
                    f"the whole reply is message #{key} of {tree.label(target.id)}]")
        lines.extend(f"  {line}" for line in text.splitlines() or [""])
    if c.source == "llm":
        # Their reports are in this result: read, they do not wake this agent again.
        reports = await waker.reports_from(me, {t.id for t in targets if t.id not in left})
        if reports:
            c.add("mail_read", {"ids": reports})
    return CommandResult(lines)
