"""What the tests of the preview of matches share: a few matches grouped by exchange,
their full texts, and the preview opened over a harness."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from textual.screen import Screen
from textual.widgets import Static

from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen

from .harness import Harness

SIZE = (120, 40)
BEFORE = 20_000

MATCHES = [
    PreviewItem(40, "user", "Can you sketch the database schema for orders?", 31,
                reason="asks for the schema", exchange=40),
    PreviewItem(41, "assistant", "Here is a first schema:\nCREATE TABLE orders (...)", 420,
                reason="proposes the tables", exchange=40),
    PreviewItem(57, "tool_call", 'run_sql("ALTER TABLE orders ADD shipped_at")', 45,
                reason="migrates the schema", exchange=55),
    PreviewItem(58, "tool_result", "OK", 3, exchange=55),  # the call's partner: no reason
    PreviewItem(90, "user", "Should the schema use UUIDs?", 12, reason="a schema question",
                exchange=90, checked=False),
]
FULL_TEXT = {41: "Here is a first schema:\n\nCREATE TABLE orders (\n  id integer\n)\n\x1b[2Jdone"}


async def load_text(message_id: int) -> str:
    return FULL_TEXT[message_id]


def matches(**kwargs) -> PreviewScreen:
    kwargs.setdefault("matcher", "local (words + meaning)")
    kwargs.setdefault("criteria", "database schema")
    return PreviewScreen("Forget: review the messages", MATCHES, BEFORE, **kwargs)


@contextlib.asynccontextmanager
async def opened(screen: PreviewScreen) -> AsyncIterator[tuple[Harness, object]]:
    """The preview open and drawn: (its app, the pilot)."""
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot


def lines(screen: PreviewScreen) -> list[str]:
    items = screen.preview_list
    return [items.line_text(i).rstrip() for i in range(items.line_count)]


def text_of(screen: Screen, selector: str) -> str:
    return screen.query_one(selector, Static).render().plain
