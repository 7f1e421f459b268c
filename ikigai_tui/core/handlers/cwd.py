"""/cwd: show or set the agent's workspace, the folder its file tools work in."""

from __future__ import annotations

import os
from pathlib import Path

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.replay.replayer import Replayer


def current(c: CommandContext) -> Path:
    if c.replayer.cwd:
        return Path(c.replayer.cwd)
    if c.services.workspace is not None:
        return c.services.workspace(c.agent.id)
    return Path(os.getcwd())


SOURCES = {"start": "the folder ikigai was started in", "fork": "inherited at fork",
           "cwd": "set with /cwd or --cwd"}


def source(replayer: Replayer, is_child: bool) -> str:
    """Where an agent's workspace comes from: "start", "fork" or "cwd" (SOURCES)."""
    if replayer.cwd is None:
        return "start"
    return "fork" if is_child and replayer.cwd == replayer.base.cwd else "cwd"


def workspace_line(c: CommandContext) -> str:
    return f"Workspace: {current(c)} ({SOURCES[source(c.replayer, c.agent.parent_id is not None)]})"


async def cwd(c: CommandContext) -> CommandResult:
    text = c.args.rest()
    now = current(c)
    if not text:
        return CommandResult([workspace_line(c)], data=str(now))
    folder = Path(os.path.expanduser(text))
    if not folder.is_absolute():
        folder = now / folder
    folder = Path(os.path.normpath(folder))
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise CommandError(f"{folder} {what}; the workspace stays {now}")
    if folder == now and c.replayer.cwd is not None:
        return CommandResult([f"The workspace is already {folder}."], data=str(folder))
    c.add("cwd", {"path": str(folder), "previous": str(now)})
    return CommandResult([f"Workspace set to {folder} (was {now})."], data=str(folder))
