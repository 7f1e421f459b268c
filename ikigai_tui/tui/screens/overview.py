"""The agent overview (F6): every agent in one full-screen table, those that need you
first (then those working, idle, dead; in tree order within each): its name, its state
(tui/agent_state.py, as the tree says it), the last line of its latest message, how long
ago that was (``now`` while it works), its tokens so far (in and out) and their cost.

Live while open: read again every second (the states at once, the last lines from the
log, one short query per agent). Enter focuses the agent of the row in the active pane
and closes it; Esc (or F6) closes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.tui.agent_state import AgentState
from ikigai_tui.tui.bindings import OVERVIEW
from ikigai_tui.tui.fit import cut
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session

__all__ = ["OverviewScreen", "OverviewRow", "overview_rows", "age_text"]

STYLES = stylesheet("screens.tcss")
COLUMNS = ("agent", "state", "last line", "age", "tokens", "cost")
ORDER = {"needs": 0, "working": 1, "idle": 2, "dead": 3}
LAST_KINDS = ("user", "assistant", "error")
TICK = 1.0  # seconds between two reads


class OverviewRow(NamedTuple):
    id: str
    name: str
    state: AgentState
    last: str  # the last line of its latest message
    age: str
    tokens: str
    cost: str


def age_text(seconds: float | None) -> str:
    """``now``, ``42s``, ``5m``, ``3h``, ``2d``; empty when nothing happened yet."""
    if seconds is None:
        return ""
    if seconds < 5:
        return "now"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _last_line(payload: dict) -> str:
    text = payload.get("content") if "content" in payload else payload.get("message", "")
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    return " ".join(sanitize(lines[-1]).split()) if lines else ""


async def overview_rows(session: Session, states: dict[str, AgentState],
                        now: float | None = None) -> list[OverviewRow]:
    """One row per agent, those that need you first, in tree order within a state."""
    now = time.time() if now is None else now
    rows = []
    for agent, _depth in session.tree.walk():
        state = states.get(agent.id, AgentState("idle"))
        latest = await session.store.page(agent.id, LAST_KINDS, limit=1)
        last = _last_line(latest[-1].payload) if latest else ""
        age = 0.0 if state.kind == "working" else (now - latest[-1].created_at if latest else None)
        totals = session.usages.now(agent.id)
        used = totals.input_tokens + totals.output_tokens if totals is not None else 0
        tokens = format_tokens(used) if used else ""
        cost = "" if totals is None or not used else totals.cost_text() if totals.cost_known else "?"
        rows.append(OverviewRow(agent.id, sanitize(session.tree.label(agent.id)), state, last,
                                age_text(age), tokens, cost))
    return sorted(rows, key=lambda row: ORDER.get(row.state.kind, 9))  # stable: tree order


class OverviewScreen(ModalScreen[str | None]):
    """Dismisses with the agent chosen (Enter), or None (Esc, F6)."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#overview-table"
    BINDINGS = OVERVIEW

    def __init__(self, session: Session, states: Callable[[], dict[str, AgentState]]) -> None:
        super().__init__(id="overview")
        self.session = session
        self.states = states
        self.rows: list[OverviewRow] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="overview"):
            yield Static("Agents: who needs you first · Enter focuses one · Esc closes",
                         id="overview-title")
            table: DataTable[Text] = DataTable(id="overview-table", cursor_type="row",
                                               zebra_stripes=False)
            table.add_columns(*COLUMNS)
            yield table
        yield KeyBar()

    async def on_mount(self) -> None:
        await self.reload()
        self.set_interval(TICK, self._tick)

    def _tick(self) -> None:
        self.run_worker(self.reload(), group="overview", exclusive=True)

    async def reload(self) -> None:
        rows = await overview_rows(self.session, self.states())
        if rows == self.rows:
            return
        table: DataTable[Text] = self.query_one(DataTable)
        chosen = self.rows[table.cursor_row].id if self.rows and table.cursor_row < len(self.rows) else None
        self.rows = rows
        table.clear()
        room = max(16, self.app.size.width - 72)  # the last line takes what the rest leaves
        for row in rows:
            style = "bold reverse" if row.state.needs_you else "dim" if row.state.kind == "dead" else ""
            table.add_row(Text(row.name, style="bold"), Text(row.state.words, style=style),
                          Text(cut(row.last, room)), Text(row.age),
                          Text(row.tokens, justify="right"), Text(row.cost, justify="right"),
                          key=row.id)
        ids = [row.id for row in rows]
        if chosen in ids:
            table.move_cursor(row=ids.index(chosen))

    def action_choose(self) -> None:
        table: DataTable[Text] = self.query_one(DataTable)
        if self.rows and 0 <= table.cursor_row < len(self.rows):
            self.dismiss(self.rows[table.cursor_row].id)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_choose()

    def action_close(self) -> None:
        self.dismiss(None)
