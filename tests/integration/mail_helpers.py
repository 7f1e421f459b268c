"""Shared pieces of the mail tests (test_mail_wake, test_mail_reports, test_mail_revive):
a responder for the loopback fake that answers each request by the last message it holds,
and readers of what the log says about wakes and mail."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.fakes.items import Reply
from tests.integration.provider_helpers import Harness, conversation


def last_text(received) -> tuple[str, str]:
    """(role, text) of the last message of a request."""
    return conversation(received)[-1]


def answer_by(rule: Callable[[str, str], Reply | None]) -> Callable:
    """A fake responder: `rule(role, text)` of the request's last message -> its Reply
    (None: "ok")."""

    def respond(received):
        return rule(*last_text(received)) or Reply(text="ok")

    return respond


async def settled(h: Harness, timeout: float = 20) -> None:
    """Every turn, wake and report of the session has ended."""
    await asyncio.wait_for(h.session.wait_idle(), timeout)


async def wakes(h: Harness, agent_id: str) -> list[dict]:
    """The /check-mail commands a wake ran for the agent, oldest first."""
    return [e.payload for e in await h.events(agent_id, "command")
            if e.payload.get("source") == "wake"]


def child(h: Harness, name: str) -> str:
    return h.session.tree.resolve(name).id
