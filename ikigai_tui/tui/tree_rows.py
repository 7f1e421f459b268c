"""The agent tree's rows (tui/widgets/agent_tree.py draws them): what a row says of an
agent (status, name, usage, spending, unread mail, news) and how it fits the tree's
width, its usage whole: the name gives way first (its id, then the spending, then the
name's end); only then are fields dropped from the end, whole, ending with ``…``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from ikigai_tui.core.tokens.limits import format_percent, format_tokens, usage_state
from ikigai_tui.tui.fit import cut, fit
from ikigai_tui.tui.safe_text import sanitize

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.tui.agent_state import AgentState
    from ikigai_tui.core.usage.ledger import UsageTotals
    from ikigai_tui.core.tokens.window import Window

STATUS_GLYPHS = {"idle": "○", "working": "●", "dead": "✕"}
FOCUS_MARKER = "▶ "


class AgentRow(NamedTuple):
    id: str
    label: str
    status: str
    unread: int
    percent: float | None  # of the model's input limit; None while not measured
    parent_id: str | None
    tokens: int | None = None  # the request's size, against...
    budget: int = 0  # ... the window's budget (0: no window)
    spent: str = ""  # tokens in and out so far, and their cost when known
    new: bool = False  # news the user has not seen yet (tui/unseen.py)
    state: AgentState | None = None  # its one state (tui/agent_state.py): words after the name
    under: int = 0  # agents hidden under it (its subtree collapsed)
    under_needs: bool = False  # ... and whether any of them needs the user


def spent_text(totals: UsageTotals | None) -> str:
    """``spent 12K $0.04``: the agent's tokens so far (in and out) and their cost; no cost when
    a model it used has no price, nor when it is nothing (the offline model is free);
    empty before its first request."""
    if totals is None or totals.input_tokens + totals.output_tokens == 0:
        return ""
    text = f"spent {format_tokens(totals.input_tokens + totals.output_tokens)}"
    return f"{text} {totals.cost_text()}" if totals.cost_known and totals.cost > 0 else text


def agent_row(agent: AgentRuntime, label: str, window: Window | None,
              totals: UsageTotals | None = None, new: bool = False,
              state: AgentState | None = None) -> AgentRow:
    """The row of an agent, with its usage once its window was measured."""
    spent = spent_text(totals)
    if window is None:
        return AgentRow(agent.id, label, agent.status, agent.unread, None, agent.parent_id,
                        spent=spent, new=new, state=state)
    return AgentRow(agent.id, label, agent.status, agent.unread, window.percent,
                    agent.parent_id, window.tokens, window.budget, spent, new, state)


class TreeStyles(NamedTuple):
    """The tree's colours, from the theme (AgentTreeView's component classes in
    styles/widgets.tcss); the defaults name no colour."""

    working: Style = Style()
    dead: Style = Style()
    mail: Style = Style(bold=True)
    normal: Style = Style(dim=True)  # the usage, below 80%
    warning: Style = Style(bold=True)
    critical: Style = Style(bold=True)  # 95% and more
    fill: Style = Style(dim=True)  # the window's fill


PLAIN_TREE = TreeStyles()
TREE_COMPONENTS = {name: f"agent-tree--{name}" for name in TreeStyles._fields}


def _usage_style(percent: float, styles: TreeStyles) -> Style:
    state = usage_state(percent / 100)
    return {"warning": styles.warning, "critical": styles.critical,
            "full": styles.critical}.get(state, styles.normal)


BADGE_MOST = 14  # cells of a state's words at most (a tool's name can be long)
MORE = " …"  # ends a row whose last fields did not fit


def _name(row: AgentRow) -> str:
    return sanitize(row.label).replace("\n", " ").replace("\t", " ") or row.id


def _head(row: AgentRow, focused: bool, styles: TreeStyles, name: str) -> Text:
    """The focus marker, the status glyph and `name`."""
    head = Text()
    if focused:
        head.append(FOCUS_MARKER, style="bold")
    glyph_style = styles.working if row.status == "working" else (
        styles.dead if row.status == "dead" else "")
    head.append(STATUS_GLYPHS.get(row.status, "·"), style=glyph_style)
    head.append(" ")
    head.append(name, style="bold" if focused else "")
    return head


def _short_head(row: AgentRow, focused: bool, styles: TreeStyles, badge: Text,
                width: int) -> Text:
    """A row whose name does not fit with its fields: the id in parentheses goes first
    (never cut mid-id), then the badge, then the name's end (never all of it)."""
    name = _name(row)
    room = width - _head(row, focused, styles, "").cell_len
    if name.endswith(")") and " (" in name and cell_len(name) + badge.cell_len > room:
        name = name[:name.rindex(" (")]
    if cell_len(name) + badge.cell_len > room:
        if row.state is not None and room - badge.cell_len >= min(MIN_NAME, cell_len(name)):
            name = cut(name, room - badge.cell_len)  # a state's words before the name's end
        else:
            badge = Text()  # the whole name before the `new` badge
    text = _head(row, focused, styles, fit((name,), max(2, room)))
    text.append_text(badge)
    text.truncate(width, overflow="ellipsis")
    return text


class _Fields(NamedTuple):
    head: Text  # marker, status, name
    badge: Text
    rest: list[Text]  # the other fields in the order shown, each with its leading separator
    spent: int | None  # the index in `rest` of what the agent spent (the first let go)


def _fields(row: AgentRow, focused: bool, styles: TreeStyles, budget: bool = True) -> _Fields:
    """`budget`: the fill over the window's budget ("1.9K/2K"), else the fill alone."""
    head = _head(row, focused, styles, _name(row))
    badge = _badge(row, styles)
    rest: list[Text] = []
    spent: int | None = None
    measured = row.percent is not None and math.isfinite(row.percent)
    if measured:
        percent = max(0.0, row.percent)
        rest.append(Text.assemble(" ", (format_percent(percent), _usage_style(percent, styles))))
    if row.unread > 0:
        rest.append(Text(f" ✉{row.unread}", style=styles.mail))
    if row.spent:  # what it cost before the fill, which the gauge shows too
        spent = len(rest)
        rest.append(Text(f" · {row.spent}", style=styles.fill))
    if measured and row.tokens is not None:
        window = f"/{format_tokens(row.budget)}" if row.budget > 0 and budget else ""
        rest.append(Text(f" · {format_tokens(row.tokens)}{window}", style=styles.fill))
    return _Fields(head, badge, rest, spent)


def _badge(row: AgentRow, styles: TreeStyles) -> Text:
    """After the name, kept whatever the width: the state's words (what needs the user in
    reverse, what works in the working colour; the `new` badge of a row without a state),
    then a collapsed subtree's count of agents, ``+3``, with ``!`` when one needs the user."""
    badge = Text()
    words = row.state.badge if row.state is not None else ("new" if row.new else "")
    words = cut(sanitize(words).replace("\n", " "), BADGE_MOST) if words else ""
    if words and (row.state is None or row.state.needs_you):
        badge.append(" ")
        badge.append(f" {words} ", style=styles.mail + Style(reverse=True))
    elif words:
        badge.append(f" {words}", style=styles.working)
    if row.under:
        badge.append(f" +{row.under}", style=styles.fill)
        if row.under_needs:
            badge.append("!", style=styles.mail + Style(reverse=True))
    return badge


def _joined(*parts: Text) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    for part in parts:
        text.append_text(part)
    return text


def agent_label(row: AgentRow, focused: bool, styles: TreeStyles = PLAIN_TREE,
                width: int | None = None) -> Text:
    """The one-line label of a node (never parsed as markup), fitted to `width` cells when
    given. The usage (its share and the window's fill) is what the row is for: the name
    gives way first (its id, then what it spent, then the name's end, down to
    MIN_NAME cells), then the window's budget after the fill (the gauge says it); only
    then are whole fields dropped from the end, ``…`` in their place; a name too long
    for even that loses its end (_short_head)."""
    head, badge, rest, spent = _fields(row, focused, styles)
    text = _joined(head, badge, *rest)
    if width is not None and text.cell_len > width:
        text = _fitted(row, focused, styles, _Fields(head, badge, rest, spent), width)
    if row.status == "dead":
        text.stylize("dim")
    return text


MIN_NAME = 6  # cells of a name cut to keep the usage whole ("resea…")


def _fitted(row: AgentRow, focused: bool, styles: TreeStyles, fields: _Fields,
            width: int) -> Text:
    head, badge, rest, spent = fields
    name = _name(row)
    if name.endswith(")") and " (" in name:  # the id goes first, whole
        name = name[:name.rindex(" (")]
        head = _head(row, focused, styles, name)
        if (text := _joined(head, badge, *rest)).cell_len <= width:
            return text
    for shown in (rest, _fields(row, focused, styles, budget=False).rest):
        kept = [field for index, field in enumerate(shown) if index != spent]
        more = [Text(MORE, style=styles.fill)] if len(kept) < len(shown) else []
        fields_len = sum(field.cell_len for field in (*kept, *more))
        room = width - _head(row, focused, styles, "").cell_len - badge.cell_len - fields_len
        if room >= min(MIN_NAME, cell_len(name)):  # the name's end gives way to the usage
            return _joined(_head(row, focused, styles, cut(name, room)), badge, *kept, *more)
    text = _joined(head, badge)
    dropped = 0
    while dropped < len(rest) and (text.cell_len + rest[dropped].cell_len + len(MORE) <= width):
        text.append_text(rest[dropped])
        dropped += 1
    if text.cell_len + len(MORE) > width:  # the name itself is too long
        return _short_head(row, focused, styles, badge, width)
    text.append(MORE, style=styles.fill)
    return text
