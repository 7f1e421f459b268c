"""The proposal a /compact makes: a summary, the messages it would replace, the saving.

The reviewer accepts it as made, accepts an edited summary (`CompactVerdict`), or
refuses it (only the command record is written). Accepted, it is one `compact` event:
the replay puts the summary in place of the first replaced message (a tool call and its
result always go together) and /undo brings the messages back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, Presentation, Proposal, ProposalItem, Verdict

if TYPE_CHECKING:
    from ikigai_tui.core.commands.context import CommandContext

PREVIEW_ROWS = 20  # replaced messages listed in a printed preview


@dataclass(frozen=True)
class CompactVerdict(Verdict):
    """Accept with the summary as the reviewer edited it (None: as proposed)."""

    summary: str | None = None


@dataclass(frozen=True)
class CompactProposal(Proposal):
    ids: tuple[int, ...]  # the context entries replaced, in order
    items: tuple[ProposalItem, ...]
    summary: str
    tokens_before: int  # the whole context (the window's pruned turns included)
    replaced_tokens: int
    model: str  # who summarised: a model name, or "offline (extractive)"
    count: Callable[[str], int] = field(repr=False, compare=False)  # a summary's tokens
    extractive: bool = False
    focus: str | None = None
    pieces: int = 1
    dry_run: bool = False
    auto: bool = False

    title = "Compact: review the summary"
    presentation = Presentation.SUMMARY  # type: ignore[assignment]

    def summary_tokens(self, summary: str | None = None) -> int:
        return self.count(self.summary if summary is None else summary)

    def tokens_after(self, summary: str | None = None) -> int:
        return max(0, self.tokens_before - self.replaced_tokens + self.summary_tokens(summary))

    def saving(self, summary: str | None = None) -> int:
        return self.tokens_before - self.tokens_after(summary)

    def saving_line(self, summary: str | None = None) -> str:
        saved = self.saving(summary)
        effect = (f"saves {format_tokens(saved)}" if saved > 0
                  else f"adds {format_tokens(-saved)}: the summary is longer than what it replaces")
        return (f"{len(self.ids):,} message{'s' if len(self.ids) != 1 else ''} "
                f"(#{self.ids[0]}-#{self.ids[-1]}, {format_tokens(self.replaced_tokens)} tokens) "
                f"-> a summary of {format_tokens(self.summary_tokens(summary))}: context "
                f"{format_tokens(self.tokens_before)} -> {format_tokens(self.tokens_after(summary))} "
                f"tokens ({effect})")

    def by_line(self) -> str:
        pieces = f", in {self.pieces} pieces then merged" if self.pieces > 1 else ""
        focus = f"; focus: {self.focus}" if self.focus else ""
        return f"Summary by {self.model}{pieces}{focus}:"

    def preview_lines(self) -> list[str]:
        verb = "Would replace" if self.dry_run else "Replacing"
        lines = [f"{verb} {self.saving_line()}", self.by_line()]
        lines += [f"  {line}" if line else "" for line in self.summary.splitlines()]
        if not self.dry_run:
            return lines  # applied at once: its result line names the range
        lines.append("Replaced messages:")
        for item in self.items[:PREVIEW_ROWS]:
            lines.append(f"  #{item.id}  {item.role}  {item.tokens:,}  {item.first_line[:100]}")
        if len(self.items) > PREVIEW_ROWS:
            lines.append(f"  ... and {len(self.items) - PREVIEW_ROWS:,} more")
        return lines

    def apply(self, c: CommandContext, verdict: Verdict = ACCEPT_ALL) -> CommandResult:
        edited = verdict.summary if isinstance(verdict, CompactVerdict) else None
        summary = self.summary if edited is None else edited
        if not summary.strip():
            raise CommandError("the summary is empty; nothing was written")
        r = c.replayer
        ids = [i for i in self.ids if i in r.ctx]
        if not ids:
            raise CommandError("the messages it would replace have left the context; "
                               "nothing was written")
        payload: dict = {"ids": ids, "summary": summary, "model": self.model,
                         "before": self.tokens_before, "after": self.tokens_after(summary)}
        if self.focus:
            payload["focus"] = self.focus
        if self.extractive:
            payload["extractive"] = True
        if edited is not None and edited != self.summary:
            payload["edited"] = True
        if self.auto:
            payload["auto"] = True
        c.add("compact", payload)
        compactor = getattr(c.services, "compactor", None)
        if compactor is not None and not self.auto:
            agent_id = c.agent.id
            c.after_commit.append(lambda: compactor.user_acted(agent_id))
        what = "Auto-compacted" if self.auto else "Compacted"
        return CommandResult([f"{what} {self.saving_line(summary)}. /undo restores them."])
