"""Per-agent settings and the rest: /model /system /pin /unpin /pins /help /exit."""

from __future__ import annotations

from ikigai_tui.core.command_context import CommandContext
from ikigai_tui.core.commands import CommandError, CommandResult, UsageError
from ikigai_tui.core.request import DEFAULT_SYSTEM_PROMPT


async def model(c: CommandContext) -> CommandResult:
    name = c.args.take()
    c.args.done()
    current = c.replayer.model or c.agent.model
    if name is None:
        return CommandResult([f"Model: {current}"])
    c.services.check_model(name)
    if name == current:
        return CommandResult([f"Model is already {name}."])
    c.add("model", {"model": name})
    c.batch.agent_updates.append((c.agent.id, "model", name))
    return CommandResult([f"Model set to {name}."])


async def system(c: CommandContext) -> CommandResult:
    text = c.args.rest()
    if not text:
        shown = c.replayer.system
        return CommandResult([f"System prompt: {shown}" if shown else
                              f"System prompt (default): {DEFAULT_SYSTEM_PROMPT}"])
    c.add("system", {"content": text})
    return CommandResult(["System prompt set."])


async def pin(c: CommandContext) -> CommandResult:
    text = c.args.rest()
    if not text:
        raise UsageError("missing TEXT")
    c.add("pin", {"text": text})
    return CommandResult([f"Pinned #{len(c.replayer.pins) + 1}."])


async def unpin(c: CommandContext) -> CommandResult:
    token = c.args.require("N")
    c.args.done()
    if not token.isdigit():
        raise UsageError(f"'{token}' is not a pin number")
    index = int(token)
    if not 1 <= index <= len(c.replayer.pins):
        count = len(c.replayer.pins)
        raise CommandError(f"there is no pin #{index} (this agent has {count}). See /pins.")
    c.add("unpin", {"index": index})
    return CommandResult([f"Unpinned #{index}."])


async def pins(c: CommandContext) -> CommandResult:
    c.args.done()
    items = c.replayer.pins
    if not items:
        return CommandResult(["No pins."])
    return CommandResult([f"{i}. {text}" for i, text in enumerate(items, 1)])


async def help_(c: CommandContext) -> CommandResult:
    from ikigai_tui.core.command_table import REGISTRY

    name = c.args.take()
    c.args.done()
    if name is not None:
        spec = REGISTRY.get(name.lstrip("/"))
        if spec is None:
            raise CommandError(f"unknown command '/{name.lstrip('/')}'. Type /help for the list.")
        lines = [spec.usage, f"  {spec.summary}"]
        if spec.details:
            lines.append(f"  {spec.details}")
        lines.append("  The LLM may call it." if spec.llm else "  Human only.")
        return CommandResult(lines)
    width = max(len(s.usage) for s in REGISTRY)
    return CommandResult([f"{s.usage.ljust(width)}  {s.summary}" for s in REGISTRY])


async def exit_(c: CommandContext) -> CommandResult:
    c.args.done()
    return CommandResult([], exit=True)
