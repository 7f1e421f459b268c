"""Per-agent settings and the rest: /model /system /budget /pin /unpin /pins /help /exit."""

from __future__ import annotations

import re

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.replay.request import DEFAULT_SYSTEM_PROMPT
from ikigai_tui.core.tokens.limits import limit_words


async def model(c: CommandContext) -> CommandResult:
    name = c.args.take()
    c.args.done()
    current = c.replayer.model or c.agent.model
    if name is None:
        return _with_key_warning(c, f"Model: {current}", current)
    given, name = name, c.services.check_model(name)  # an alias or a bare name: its full name
    said = name if given == name else f"{name} ({given})"
    if name == current:
        return _with_key_warning(c, f"Model is already {said}.", name)
    c.add("model", {"model": name})
    c.batch.agent_updates.append((c.agent.id, "model", name))
    return _with_key_warning(c, f"Model set to {said}.", name)


def _with_key_warning(c: CommandContext, line: str, model: str) -> CommandResult:
    """The line, then a warning when messages to `model` will fail for want of its key:
    said when the model is chosen, not at the first message."""
    warning = c.services.key_warning(model) if c.services.key_warning is not None else None
    return CommandResult([line, *(w for w in (warning, limit_warning(c, model)) if w)])


def limit_warning(c: CommandContext, model: str) -> str | None:
    """A line warning that `model`'s input limit is assumed (nothing lists the model)."""
    if c.services.limits is None or (limits := c.services.limits(model)).source != "assumed":
        return None
    return f"Warning: its input limit of {limit_words(limits, model)}."


async def system(c: CommandContext) -> CommandResult:
    text = c.args.rest()
    if not text:
        shown = c.replayer.system
        return CommandResult([f"System prompt: {shown}" if shown else
                              f"System prompt (default): {DEFAULT_SYSTEM_PROMPT}"])
    c.add("system", {"content": text})
    return CommandResult(["System prompt set."])


_TOKENS = re.compile(r"(\d[\d_,]*)(\.\d+)?([kKmM]?)")
MAX_BUDGET = 100_000_000


def parse_budget(text: str) -> int:
    """`50000`, `50,000`, `50K`, `1.5M` -> tokens; `off` or 0 -> 0 (the window is off)."""
    if text.lower() == "off":
        return 0
    found = _TOKENS.fullmatch(text)
    if found is None or (found.group(2) and not found.group(3)):
        raise UsageError(f"'{text}' is not a number of tokens (like 50000 or 50K) or 'off'")
    whole, fraction, unit = found.groups()
    number = float(whole.replace("_", "").replace(",", "") + (fraction or ""))
    tokens = round(number * {"": 1, "k": 1_000, "m": 1_000_000}[unit.lower()])
    if tokens > MAX_BUDGET:
        raise UsageError(f"{tokens:,} tokens is more than any model takes (at most {MAX_BUDGET:,})")
    return tokens


def budget_source(c: CommandContext) -> str:
    if c.replayer.budget_event is not None:
        return "set with /budget"
    return "inherited at fork" if c.agent.parent_id is not None else "the configured default"


def _budget_words(tokens: int) -> str:
    return f"{tokens:,} tokens" if tokens > 0 else "off (the sliding window is disabled)"


async def budget(c: CommandContext) -> CommandResult:
    token = c.args.take()
    c.args.done()
    current = c.services.budget_of(c.agent)
    window = await c.services.measure(c.agent.id)
    if token is None:
        line = f"Window budget: {_budget_words(current)} ({budget_source(c)})"
        if 0 < window.budget < current:
            line += f"; capped to {window.budget:,} by {c.services.model_of(c.agent)}'s input limit"
        return CommandResult([line + "."], data=current)
    value = parse_budget(token)
    if value == current:
        return CommandResult([f"Window budget is already {_budget_words(value)}."], data=value)
    c.add("budget", {"budget": value, "previous": current})
    was = f"was {current:,} tokens" if current > 0 else "was off"
    line = (f"Window budget set to {value:,} tokens ({was})" if value > 0 else
            f"Window budget off: the sliding window is disabled ({was})")
    if value >= window.limit > 0:
        line += (f"; {c.services.model_of(c.agent)} takes at most {window.limit:,} tokens, so the "
                 "window stays below that")
    return CommandResult([line + "."], data=value)


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


def pin_tokens(c: CommandContext) -> list[int]:
    """Each pin's tokens as counted for this agent's model (the pins are sent in the
    system prompt: always, never pruned nor compacted, since they are not messages)."""
    counter = c.services.meter(c.agent).counter
    return [counter.scale(counter.text(text)) for text in c.replayer.pins]


def _token_words(n: int) -> str:
    return f"{n:,} token{'' if n == 1 else 's'}"


async def pins(c: CommandContext) -> CommandResult:
    c.args.done()
    items = c.replayer.pins
    if not items:
        return CommandResult(["No pins."])
    tokens = pin_tokens(c)
    return CommandResult([f"{i}. {text}  ({_token_words(n)})"
                          for i, (text, n) in enumerate(zip(items, tokens), 1)], data=tokens)


def pin_lines(c: CommandContext) -> list[str]:
    """/context's list of the pins: always sent, never pruned nor compacted."""
    items = c.replayer.pins
    if not items:
        return []
    lines = ["Pins (always sent, never pruned nor compacted):"]
    for i, (text, n) in enumerate(zip(items, pin_tokens(c)), 1):
        shown = " ".join(text.split())
        shown = shown if len(shown) <= 60 else shown[:59] + "…"
        lines.append(f"  {i}. {n:>9,}  {shown}")
    return lines


async def help_(c: CommandContext) -> CommandResult:
    from ikigai_tui.core.commands.registry import REGISTRY

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
