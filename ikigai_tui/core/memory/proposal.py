"""A memory write as a proposal: reviewed (the diff) before it is made, then made and
recorded in one step through the command bus (`CommandBus.submit`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.memory.change import Change
from ikigai_tui.core.memory.sandbox import MemoryRefused, Sandbox
from ikigai_tui.core.commands.proposals import Presentation, Proposal, Verdict

if TYPE_CHECKING:
    from ikigai_tui.core.commands.context import CommandContext


class MemoryProposal(Proposal):
    title = "Memory: the LLM proposes a change"
    presentation = Presentation.MEMORY  # type: ignore[assignment]

    def __init__(self, change: Change, box: Sandbox) -> None:
        self.change = change
        self.box = box
        self.made = False

    @property
    def command(self) -> str:
        """The command record's text for it."""
        change = self.change
        if change.command == "rename":
            return f"/memory rename {change.path} {change.new_where.path}"  # type: ignore[union-attr]
        return f"/memory {change.command} {change.path}"

    def preview_lines(self) -> list[str]:
        return [f"Memory change: {self.change.summary()}", *self.change.diff()]

    def apply(self, c: CommandContext, verdict: Verdict) -> CommandResult:
        try:
            self.change.make(self.box)
        except MemoryRefused as exc:
            raise CommandError(str(exc)) from None
        self.made = True
        c.add("memory", self.change.payload())
        return CommandResult([self.change.result])

    def take_back(self) -> None:
        """Its record could not be written: the folder goes back as it was."""
        if self.made:
            self.change.undo_make(self.box)
            self.made = False
