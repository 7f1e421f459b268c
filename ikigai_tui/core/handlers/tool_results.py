"""/forget --tool-results: clear the text sent of older tool results (issue 25 item 5).

    /forget --tool-results [--keep N] [--tool NAME] [--min-tokens T] [--dry-run]

The results of all but the latest N tool calls (N: `tool_results_keep`, 3; only those of
tool NAME if given; only those of at least T tokens) are offered: accepted, one
`tool_output` event clears them, and what the LLM is sent of each is a one-line stub
(`[output cleared: 12.4K tokens; /restore 123]`, core/replay/request.py) while the call
and the result stay in the context; the log keeps the whole text. `/restore ID` brings
one back, /undo all of them. Tools in `tool_results_exclude` (the memory tool) are
never offered unless --tool names them. The automatic rule (core/compaction/tool_output.py)
runs the same command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ikigai_tui.core.commands.parse import ArgReader, CommandResult
from ikigai_tui.core.commands.proposals import (
    ACCEPT_ALL, PREVIEW_ROWS, FilterProposal, Presentation, ProposalItem, Verdict, first_text,
)
from ikigai_tui.core.errors import CommandError, UsageError
from ikigai_tui.core.tool_results import ToolResultsSettings, cleared_stub
from ikigai_tui.core.tokens.limits import format_tokens

if TYPE_CHECKING:
    from ikigai_tui.core.commands.context import CommandContext

OPTION = "--tool-results"


class ToolResultsArgs(NamedTuple):
    keep: int
    tool: str | None = None
    min_tokens: int = 0
    dry_run: bool = False


def _count(name: str, value: str) -> int:
    if not value.isdigit():
        raise UsageError(f"{name} takes a whole number, not '{value}'")
    return int(value)


def read_args(args: ArgReader, settings: ToolResultsSettings) -> ToolResultsArgs:
    keep, tool, least, dry_run = None, None, None, False
    while (word := args.take()) is not None:
        name, eq, value = word.partition("=")
        if name == "--keep" and keep is None:
            keep = _count(name, value if eq else args.require("a number after --keep"))
        elif name == "--tool" and tool is None:
            tool = value if eq else args.require("a tool name after --tool")
        elif name == "--min-tokens" and least is None:
            least = _count(name, value if eq else args.require("a number after --min-tokens"))
        elif name == "--dry-run" and not eq and not dry_run:
            dry_run = True
        else:
            raise UsageError(f"unexpected '{word}' (/forget --tool-results [--keep N] "
                             "[--tool NAME] [--min-tokens T])")
    return ToolResultsArgs(settings.keep if keep is None else keep, tool, least or 0, dry_run)


def settings_of(c: CommandContext) -> ToolResultsSettings:
    get = c.services.tool_results
    return get() if get is not None else ToolResultsSettings()


async def forget_tool_results(c: CommandContext) -> ToolResultsProposal | CommandResult:
    settings = settings_of(c)
    ask = read_args(c.args, settings)
    r = c.replayer
    offered = []  # (result key, tool name), oldest first
    for key in r.ctx.keys_of_kind("tool_result"):
        call = r.ctx[key][2].get("call_event")
        if key in r.cleared or call not in r.ctx:
            continue
        name = str(r.ctx[call][2].get("name") or "")
        if (name == ask.tool) if ask.tool is not None else name not in settings.exclude:
            offered.append((key, name))
    offered = offered[:max(0, len(offered) - ask.keep)]
    meter = c.services.meter(c.agent)
    counter, counted = meter.counter, meter.cache
    bodies = c.services.bodies
    keys = [k for k, _ in offered]
    full = r.ctx if bodies is None else await bodies.entries(r, keys, cache=False)
    items, sizes = [], []
    for key, name in offered:
        _seq, kind, payload = full[key]
        raw = counted.get(key)
        if raw is None:
            raw = counter.message(kind, payload)
        tokens = counter.scale(raw)
        if tokens < ask.min_tokens:
            continue
        saved = raw - counter.message(kind, {**payload, "cleared": cleared_stub(key, tokens)})
        if saved <= 0:
            continue  # its stub would not be shorter
        items.append(ProposalItem(key, kind, f"{name}: {first_text(kind, payload)}",
                                  counter.scale(saved), True, f"{format_tokens(tokens)} tokens",
                                  raw=saved))
        sizes.append(tokens)
    which = f" of {ask.tool}" if ask.tool is not None else ""
    if not items:
        return CommandResult([f"No tool output{which} to clear (the latest {ask.keep} "
                              "kept, cleared ones and smaller ones left); nothing was changed."])
    tokens_before = (await c.services.measure(c.agent.id)).tokens
    least = f", of at least {ask.min_tokens:,} tokens" if ask.min_tokens else ""
    criteria = f"tool results{which} older than the latest {ask.keep}{least}"
    return ToolResultsProposal("forget", tuple(i.id for i in items), tuple(items), tokens_before,
                               ask.dry_run, criteria, "/forget --tool-results",
                               resize=meter.resize(tokens_before), sizes=tuple(sizes))


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class ToolResultsProposal(FilterProposal):
    """The tool results whose text would be cleared (their calls and results stay): a
    FilterProposal's review (untick what to keep whole), a `tool_output` event applied.
    An item's tokens are what clearing it saves; `sizes` the results' own counts."""

    sizes: tuple[int, ...] = ()

    @property
    def title(self) -> str:
        return "Clear old tool output: review the results"

    @property
    def presentation(self) -> Presentation:
        return Presentation.MATCHES

    def preview_lines(self) -> list[str]:
        cleared = self.removed()
        lines = [f"Would clear the output of {_plural(len(cleared), 'tool result')} (the calls "
                 f"stay; each sent as a one-line stub): context {self.tokens_before:,} -> "
                 f"{self.tokens_after():,} tokens"]
        lines += [f"  #{i.id}  {i.reason}  {i.first_line[:120]}" for i in cleared[:PREVIEW_ROWS]]
        if len(cleared) > PREVIEW_ROWS:
            lines.append(f"  ... and {len(cleared) - PREVIEW_ROWS} more")
        return lines

    def apply(self, c: CommandContext, verdict: Verdict = ACCEPT_ALL) -> CommandResult:
        chosen = set(self.chosen(verdict))
        if not chosen:
            raise CommandError("the reviewed selection clears nothing; nothing was written")
        size = dict(zip((i.id for i in self.items), self.sizes))
        ids = [i.id for i in self.items if i.id in chosen]
        after = self.tokens_after(verdict)
        payload: dict = {"action": "clear", "ids": ids, "tokens": [size[i] for i in ids],
                         "before": {"tokens": self.tokens_before}, "after": {"tokens": after}}
        first = c.batch.events[0] if c.batch.events else None
        if first is not None and first.kind == "command":
            payload["command"] = first.payload.get("text", "")
        c.add("tool_output", payload)
        return CommandResult([f"Cleared the output of {_plural(len(ids), 'tool result')}: context "
                              f"{self.tokens_before:,} -> {after:,} tokens (/undo brings them "
                              "back, /restore ID one)."], data=ids)
