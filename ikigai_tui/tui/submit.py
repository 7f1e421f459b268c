"""What Enter does: a message to the agent, or a command; a command that proposes a
change (/forget, /remember) opens the preview, driven by the proposal the core returns;
explicit ids (`--ids`) apply at once, as SPEC §5 has it, unless `--preview` asks to see them.

`SubmitController` does it over a small host (`SubmitHost`: what it needs of the app)
and the dialogs the app hands it (`Screens`, built in tui/screens/dialogs.py): the
dialog of a proposal is the one of its presentation kind (core/commands/proposals.py, the rule
`run` and stream-json follow too), so this module imports neither the app nor a screen.

/forget, /remember and /compact run in a worker: a matcher or a summary may take a while
(side requests in chunks), and the screen shows its progress once the core reports any;
Esc there cancels the side requests and writes nothing. A /compact opens its own preview
(the summary, editable; what it replaces; the saving); so does an automatic compaction
with auto_compact = "ask". A tool the permission rules ask about opens its own modal
(the agent, the tool, what will run); several agents asking at once wait their turn.
A change of its context the LLM asks for (llm_context_changes = "ask") opens the preview
of what leaves, titled with the agent whose LLM asks; those too one at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ikigai_tui.core.commands.bus import Pending
from ikigai_tui.core.commands.registry import REGISTRY
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import CommandResult, ParsedCommand
from ikigai_tui.core.notices import CompactingNotice, MatchingNotice, Notice
from ikigai_tui.core.commands.proposals import REFUSE, Presentation, Proposal, Verdict
from ikigai_tui.core.session import Session
from ikigai_tui.core.tools.permissions import PermissionRequest
from ikigai_tui.tui.agent_state import Doings
from ikigai_tui.tui.asking import TurnQuestions
from ikigai_tui.tui.command_flows import CommandFlows

FILTERS = ("forget", "remember", "compact")


@dataclass(frozen=True)
class Dialog:
    """A proposal's dialog: the screen to push, and the verdict its answer stands for."""

    screen: Any
    verdict: Callable[[Any], Verdict]


# A proposal's dialog, made from the proposal, the session and the agent it is for.
DialogFactory = Callable[[Proposal, Session, str], Dialog]


def picked(ids: list[int] | None) -> Verdict:
    """The verdict of a dialog that dismisses with the ids ticked (None: cancelled)."""
    return REFUSE if ids is None else Verdict.accept(ids)


class Progress(Protocol):
    """The progress dialog of a matcher or a summary (it dismisses with False on Esc)."""

    def progress(self, done: int, total: int | None) -> None: ...

    def finish(self) -> None: ...


@dataclass(frozen=True)
class Screens:
    """The dialogs the submit path opens, handed in by the app: a proposal's by its
    presentation kind (a kind with none is refused), the progress of a matcher or a
    summary (title, model), /memory's (of the memory service), /recall's hits that
    may come back (None: no such hit; it dismisses with the ids to restore), and a
    tool's permission request (the request, how many wait behind it; it dismisses with
    the answer: once, always or refuse)."""

    dialogs: Mapping[Presentation, DialogFactory]
    progress: Callable[[str, str | None], Progress]
    memory: Callable[[Any], Any]
    recall: Callable[[Session, str, str, CommandResult], Awaitable[Any | None]]
    permission: Callable[[PermissionRequest, int], Any] | None = None
    history: Callable[[Session, str, Any], Any | None] | None = None  # /history's list
    side: Callable[[str, str], Any] | None = None  # /btw's panel: (question, model)


class Outbox(Protocol):
    def put(self, agent_id: str, text: str) -> None: ...

    def take(self, agent_id: str) -> str | None: ...


class Input(Protocol):
    def put_back(self, text: str) -> None: ...


class SubmitHost(Protocol):
    """What the controller needs of the app (tui/app.py's IkigaiApp is one)."""

    @property
    def outbox(self) -> Outbox: ...

    @property
    def prompt_input(self) -> Input: ...

    @property
    def screen(self) -> Any: ...

    def push_screen(self, screen: Any, callback: Callable[[Any], Any] | None = None) -> Any: ...

    def run_worker(self, work: Awaitable[Any], *, group: str) -> Any: ...

    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool: ...

    def note(self, kind: str, text: str) -> None: ...

    async def show_end(self) -> None: ...

    def show_queued(self) -> None: ...

    def action_help(self) -> None: ...

    def exit(self) -> None: ...

    def submitter(self, session: Session) -> SubmitController: ...


class SubmitController(TurnQuestions, CommandFlows):
    """Enter and the reviews of one session's proposals, for one host."""

    def __init__(self, host: SubmitHost, session: Session, screens: Screens,
                 doings: Doings | None = None) -> None:
        self.host = host
        self.session = session
        self.screens = screens
        # What waits on the user, per agent (the tree's states, tui/agent_state.py).
        self.doings = doings if doings is not None else Doings()
        # One permission modal at a time: the others wait here, in the order they asked.
        self._permission_turn = asyncio.Lock()
        self._permission_waiting = 0
        # One review of a change the LLM asks for at a time (asyncio.Lock: in order).
        self._change_turn = asyncio.Lock()

    async def submit(self, agent_id: str, text: str) -> None:
        """Enter: a message (queued while the agent replies; `//` at the start sends a
        text that begins with `/`), or a command. The view goes to the end, where it shows."""
        host, session = self.host, self.session
        stripped = text.strip()
        if not stripped.startswith("/") or stripped.startswith("//"):
            if stripped.startswith("//"):
                text = text.lstrip()[1:]
            await self.send(agent_id, text)
            return
        if stripped == "/help":
            host.action_help()
            return
        if stripped[1:].split() == ["exit"]:
            host.exit()
            return
        try:  # parsed once: the dialog is chosen by it, and the core runs it as parsed
            parsed = REGISTRY.parse(stripped)
            name = parsed.spec.name
            if name == "memory" and not parsed.args:
                self._show_memory()
            elif name in FILTERS:
                host.run_worker(self._filter(agent_id, parsed), group="filter")
            elif name == "recall":
                host.run_worker(self._recall(agent_id, parsed), group="filter")
            elif name == "history":
                host.run_worker(self._history(agent_id, parsed), group="filter")
            elif name == "btw" and self.screens.side is not None:  # its panel (tui/side.py)
                from ikigai_tui.tui.side import ask

                host.run_worker(ask(host, session, agent_id, parsed, self.screens.side),
                                group="btw")
            elif name == "wait":  # waits beside the screen; Esc stops it (cancel_turns)
                host.run_worker(self._wait(agent_id, parsed), group="wait")
            else:
                await host.show_end()
                # Its output arrives as a logged event; a proposal waits for the preview.
                self._proposed(await session.propose(agent_id, parsed))
        except CommandError as exc:
            self._failed(stripped, exc)

    async def send(self, agent_id: str, text: str) -> None:
        """A message to the agent, or queued for it while its reply runs. Refused before
        it is written (too long, no key for the model, a dead or busy agent, a full
        context), it goes back to the input, to fix what was said and send again."""
        host = self.host
        await host.show_end()
        agent = self.session.tree[agent_id]
        if agent.task is not None and not agent.task.done():
            host.outbox.put(agent_id, text)
            host.show_queued()
            return
        queued = host.outbox.take(agent_id)  # left by a reply that failed: it goes first
        if queued is not None:
            text = f"{queued}\n\n{text}"
            host.show_queued()
        try:
            await self.session.say(agent_id, text)
        except CommandError as exc:  # nothing was written: the text is the user's still
            host.prompt_input.put_back(text)
            host.note("error", f"Error: {exc}")

    def review(self, pending: Pending) -> None:
        """Show what would change, in the dialog of its presentation kind; write only
        what the user confirms (or only the record)."""
        proposal = pending.proposal
        kind = proposal.presentation
        if kind is Presentation.NONE:  # the user named the ids
            self._answer(pending, Verdict.accept())
            return
        factory = self.screens.dialogs.get(kind)
        if factory is None:  # no dialog for it: refuse, say why
            self._answer(pending, REFUSE)
            return
        agent_id = pending.context.agent.id
        dialog = factory(proposal, self.session, agent_id)
        self.doings.waiting(self.doings.reviews, agent_id, 1)  # the agent needs the user

        def answered(result: Any) -> None:
            self.doings.waiting(self.doings.reviews, agent_id, -1)
            self._answer(pending, dialog.verdict(result))

        self.host.push_screen(dialog.screen, answered)

    async def ask(self, proposal: Proposal, agent_id: str = "") -> Verdict:
        """A reviewer the core awaits (memory_writes = "ask": from inside a turn): the
        dialog of the proposal's kind, its answer; refused when it has none."""
        factory = self.screens.dialogs.get(proposal.presentation)
        if factory is None:
            return REFUSE
        dialog = factory(proposal, self.session, agent_id)
        answered: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()

        def done(result: Any) -> None:
            if not answered.done():
                answered.set_result(dialog.verdict(result))

        self.host.push_screen(dialog.screen, done)
        try:
            return await answered
        except asyncio.CancelledError:  # the turn was stopped: the question goes with it
            if self.host.screen is dialog.screen:
                dialog.screen.dismiss()
            raise

    def attach_reviewers(self) -> None:
        """The dialogs of the "ask" settings: memory_writes (a diff of each change),
        auto_compact (an automatic compaction waits for this preview), the permission
        rules (a tool call waits for the user's yes, always or no) and
        llm_context_changes (the preview of what the LLM's change takes out)."""
        from ikigai_tui.core.memory.service import memory_of

        memory_of(self.session).reviewer = self.ask
        self.session.permissions.reviewer = self.ask_permission
        self.session.context_review.reviewer = self.ask_context_change
        self.session.compactor.reviewer = lambda pending: self.host.call_later(self.review, pending)

    # -- the ways of a command ----------------------------------------------------------

    def _show_memory(self) -> None:
        """/memory: the memory files in a dialog (`/memory PATH` prints one, as a command)."""
        from ikigai_tui.core.memory.service import memory_of

        self.host.push_screen(self.screens.memory(memory_of(self.session)))

    def _failed(self, command: str, exc: CommandError) -> None:
        """A command that wrote nothing: itself, then why (neither is in the log)."""
        self.host.note("command", command)
        self.host.note("error", f"Error: {exc}")

    def _proposed(self, outcome: CommandResult | Pending) -> None:
        if isinstance(outcome, Pending):
            self.review(outcome)

    async def _filter(self, agent_id: str, parsed: ParsedCommand) -> None:
        """Run /forget, /remember (its matcher, if any) or /compact (its summary) with a
        progress screen, then review."""
        outcome = await self._progressed(agent_id, parsed)
        if outcome is not None:
            self._proposed(outcome)

    async def _progressed(self, agent_id: str, parsed: ParsedCommand) -> CommandResult | Pending | None:
        """The command's outcome, a progress screen shown once its matcher or summary
        reports any (Esc there cancels it); None when it failed or was cancelled (said)."""
        host, session = self.host, self.session
        name = parsed.spec.name
        shown: list[Progress] = []
        task = asyncio.current_task()

        def cancelled(result: bool | None) -> None:
            if result is False and task is not None and not task.done():
                task.cancel()

        def on_notice(notice: Notice) -> None:
            if not isinstance(notice, (MatchingNotice, CompactingNotice)) or notice.agent_id != agent_id:
                return
            if not shown:
                if isinstance(notice, CompactingNotice):
                    screen = self.screens.progress("Compact: summarising", notice.model)
                else:
                    verb = {"forget": "Forget", "remember": "Remember"}.get(name, "Recall")
                    screen = self.screens.progress(f'{verb}: finding "{notice.criteria}"', notice.matcher)
                shown.append(screen)
                host.push_screen(screen, cancelled)
            shown[0].progress(notice.done, notice.total)

        session.subscribe(on_notice)
        try:
            return await session.propose(agent_id, parsed)
        except asyncio.CancelledError:
            what = "the summary" if name == "compact" else "the matcher"
            host.note("note", f"Cancelled: {what} stopped; nothing was written.")
        except CommandError as exc:
            self._failed(parsed.text, exc)
        finally:
            with contextlib.suppress(ValueError):
                session.unsubscribe(on_notice)
            self.doings.matched(agent_id)
            if shown:
                shown[0].finish()
        return None

    def _answer(self, pending: Pending, verdict: Verdict) -> None:
        self.host.run_worker(self._answered(pending, verdict), group="preview")

    async def _answered(self, pending: Pending, verdict: Verdict) -> None:
        try:
            await self.session.answer(pending, verdict)
        except CommandError as exc:
            self.host.note("error", f"Error: {exc}")


# The app's mixins that are not this module's to change reach the controller through
# these (tui/outbox.py sends a queued message, tui/startup.py attaches the reviewers).

async def send(host: SubmitHost, session: Session, agent_id: str, text: str) -> None:
    await host.submitter(session).send(agent_id, text)


def attach_reviewers(host: SubmitHost, session: Session) -> None:
    host.submitter(session).attach_reviewers()
