"""tui/submit.py's SubmitController over a small host, without Textual: the dialog of a
proposal is the one its presentation kind names in the table the app hands in
(tui/screens/dialogs.py); ids the user named apply at once; a kind with no dialog is
refused; the core's awaited reviewer (memory_writes = "ask") gets the dialog's answer."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from ikigai_tui.core.commands.bus import Pending
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, REFUSE, Presentation, Proposal, Verdict
from ikigai_tui.tui.screens.dialogs import SCREENS
from ikigai_tui.tui.submit import Dialog, Screens, SubmitController


class Shown(Proposal):
    def __init__(self, kind: Presentation) -> None:
        self.kind = kind

    @property
    def presentation(self) -> Presentation:
        return self.kind


class Host:
    """Records what the controller asks of the app."""

    def __init__(self) -> None:
        self.pushed: list[tuple[Any, Any]] = []
        self.work: list[Any] = []
        self.screen = None

    def push_screen(self, screen, callback=None):
        self.pushed.append((screen, callback))
        self.screen = screen

    def run_worker(self, work, *, group: str):
        self.work.append(work)


class Session:
    def __init__(self) -> None:
        self.answers: list[Verdict] = []

    async def answer(self, pending: Pending, verdict: Verdict) -> None:
        self.answers.append(verdict)


def _controller(dialogs) -> tuple[SubmitController, Host, Session]:
    host, session = Host(), Session()
    screens = Screens(dialogs=dialogs, progress=None, memory=None, recall=None)  # type: ignore[arg-type]
    return SubmitController(host, session, screens), host, session  # type: ignore[arg-type]


def _pending(kind: Presentation) -> Pending:
    return Pending(Shown(kind), SimpleNamespace(agent=SimpleNamespace(id="a1")), "/x")  # type: ignore[arg-type]


async def _drain(host: Host) -> None:
    while host.work:
        await host.work.pop(0)


def test_every_kind_shown_has_a_dialog_in_the_app_s_table():
    assert set(SCREENS.dialogs) == set(Presentation) - {Presentation.NONE}


async def test_a_proposal_opens_the_dialog_of_its_kind_and_its_answer_is_the_verdict():
    made: list[tuple] = []

    def summary(proposal, session, agent_id):
        made.append((proposal, agent_id))
        return Dialog("summary screen", lambda answer: Verdict.accept([answer]))

    controller, host, session = _controller({Presentation.SUMMARY: summary})
    pending = _pending(Presentation.SUMMARY)
    controller.review(pending)
    assert made == [(pending.proposal, "a1")]
    ((screen, done),) = host.pushed
    assert screen == "summary screen" and session.answers == []  # nothing before the answer
    done(7)
    await _drain(host)
    assert session.answers == [Verdict.accept([7])]


@pytest.mark.parametrize("kind,verdict", [
    (Presentation.NONE, Verdict.accept()),  # the user named the ids: applied at once
    (Presentation.RESTORE, REFUSE),  # no dialog for it in this table: refused
])
async def test_no_dialog_answers_at_once(kind, verdict):
    controller, host, session = _controller({})
    controller.review(_pending(kind))
    await _drain(host)
    assert host.pushed == [] and session.answers == [verdict]


async def test_the_core_s_reviewer_awaits_the_dialog_s_answer():
    controller, host, _session = _controller(
        {Presentation.MEMORY: lambda p, s, a: Dialog("diff", lambda yes: ACCEPT_ALL if yes else REFUSE)})
    asked = asyncio.ensure_future(controller.ask(Shown(Presentation.MEMORY)))
    await asyncio.sleep(0)
    ((screen, done),) = host.pushed
    assert screen == "diff" and not asked.done()
    done(True)
    assert await asked == ACCEPT_ALL
    assert await controller.ask(Shown(Presentation.SUMMARY)) == REFUSE  # no dialog: refused
