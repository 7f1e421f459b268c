"""The questions an agent's turn waits on, asked in the full screen: a tool the permission
rules ask about (its modal: the agent, the tool, what will run) and a change of its
context the LLM asks for (llm_context_changes = "ask": the preview of what leaves, titled
with the agent whose LLM asks). Each kind one at a time, the others waiting in the order
they asked. A mixin of tui/submit.py's SubmitController (its host, screens and `ask`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.commands.proposals import Verdict
from ikigai_tui.core.tools.context_review import LlmChange
from ikigai_tui.core.tools.permissions import REFUSE as REFUSED
from ikigai_tui.core.tools.permissions import PermissionAnswer, PermissionRequest

if TYPE_CHECKING:
    from ikigai_tui.core.commands.proposals import Proposal
    from ikigai_tui.tui.agent_state import Doings

__all__ = ["TurnQuestions"]


class TurnQuestions:
    """Needs `host`, `screens`, `ask` and the locks SubmitController makes."""

    host: Any
    screens: Any
    _permission_turn: asyncio.Lock
    _permission_waiting: int
    _change_turn: asyncio.Lock
    doings: Doings  # what the agents wait on (tui/agent_state.py): the tree's "needs you"

    ask: Callable[[Proposal, str], Awaitable[Verdict]]  # SubmitController's

    async def ask_context_change(self, change: LlmChange) -> Verdict:
        """llm_context_changes = "ask": the preview of what a change the LLM asks for
        takes out (its title names the agent whose LLM asks), the same dialog as the
        user's own command; one at a time, the others waiting in the order they asked."""
        self.doings.waiting(self.doings.reviews, change.agent_id, 1)  # it needs the user
        try:
            async with self._change_turn:
                return await self.ask(change.proposal, change.agent_id)
        finally:
            self.doings.waiting(self.doings.reviews, change.agent_id, -1)

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """The reviewer of the permission rules' `ask` (from inside an agent's turn): its
        modal, one at a time (each names its agent), the answer; refused when the app
        has no such dialog."""
        if self.screens.permission is None:
            return PermissionAnswer(REFUSED, "the screen cannot ask")
        self._permission_waiting += 1
        self.doings.waiting(self.doings.asks, request.agent_id, 1)  # the agent needs the user
        entered = False
        try:
            async with self._permission_turn:
                entered = True
                self._permission_waiting -= 1
                return PermissionAnswer(await self._permission_modal(request))
        finally:
            self.doings.waiting(self.doings.asks, request.agent_id, -1)
            if not entered:  # stopped while waiting its turn
                self._permission_waiting -= 1

    async def _permission_modal(self, request: PermissionRequest) -> str:
        screen = self.screens.permission(request, self._permission_waiting)  # type: ignore[misc]
        answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def done(choice: Any) -> None:
            if not answered.done():
                answered.set_result(str(choice or REFUSED))

        self.host.push_screen(screen, done)
        try:
            return await answered
        except asyncio.CancelledError:  # the turn was stopped: the question goes with it
            if getattr(screen, "is_current", False):  # (the app may be closing: no screens)
                screen.dismiss(REFUSED)
            raise
