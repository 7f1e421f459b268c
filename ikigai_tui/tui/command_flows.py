"""The commands whose way through the full screen is more than a line of output: /wait
(beside the screen, Esc stops it), /recall (its hits, then a dialog to bring some back)
and /history (its changes, then a list to undo back to one). A mixin of tui/submit.py's
SubmitController (its host, session, screens, progress and review)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.commands.bus import Pending
from ikigai_tui.core.errors import CommandError

if TYPE_CHECKING:
    from ikigai_tui.core.commands.parse import CommandResult, ParsedCommand

__all__ = ["CommandFlows"]


class CommandFlows:
    """Needs SubmitController's `host`, `session`, `screens`, `_progressed`, `review` and
    `_failed`."""

    host: Any
    session: Any
    screens: Any

    _progressed: Callable[[str, ParsedCommand], Awaitable[CommandResult | Pending | None]]
    review: Callable[[Pending], None]
    _failed: Callable[[str, CommandError], None]

    async def _wait(self, agent_id: str, parsed: ParsedCommand) -> None:
        """/wait: its replies arrive as its logged output; Esc in the input stops it
        (nothing is written then)."""
        host = self.host
        await host.show_end()
        host.note("note", f"{parsed.text}: waiting (Esc stops it)")
        try:
            await self.session.propose(agent_id, parsed)
        except CommandError as exc:
            host.note("error", f"Error: {exc}")
        except asyncio.CancelledError:
            host.note("note", "Wait stopped.")
            raise

    async def _recall(self, agent_id: str, parsed: ParsedCommand) -> None:
        """/recall QUERY (its progress as /forget's): the hits in the scrollback, then a dialog
        to bring back those out of the context (screens/recall.py) through `/restore IDS`."""
        await self.host.show_end()
        outcome = await self._progressed(agent_id, parsed)
        if outcome is None:
            return
        if isinstance(outcome, Pending):
            self.review(outcome)
            return
        screen = await self.screens.recall(self.session, agent_id, parsed.args, outcome)
        if screen is None:
            return

        def done(ids: list[int] | None) -> None:
            if ids:
                self.host.run_worker(self._restore(agent_id, ids), group="preview")

        self.host.push_screen(screen, done)

    async def _history(self, agent_id: str, parsed: ParsedCommand) -> None:
        """/history: its lines in the scrollback, then the list (screens/history.py) to
        take the context back to just before one change, through `/undo --to ID`."""
        await self.host.show_end()
        try:
            outcome = await self.session.propose(agent_id, parsed)
            screen = self.screens.history and self.screens.history(self.session, agent_id, outcome)
        except CommandError as exc:
            self._failed(parsed.text, exc)
            return
        def done(change: int | None) -> None:
            if change is not None:
                self.host.run_worker(self._run(agent_id, f"/undo --to {change}"), group="preview")

        if screen is not None:
            self.host.push_screen(screen, done)

    async def _run(self, agent_id: str, text: str) -> None:
        """A command a dialog chose, as typed; its failure a note in the scrollback."""
        try:
            await self.session.command(agent_id, text)
        except CommandError as exc:
            self.host.note("error", f"Error: {exc}")

    async def _restore(self, agent_id: str, ids: list[int]) -> None:
        """What /recall's dialog brings back: exactly what `/restore IDS` writes."""
        from ikigai_tui.core.tools.filter_context import id_ranges

        await self._run(agent_id, f"/restore {id_ranges(sorted(ids))}")

