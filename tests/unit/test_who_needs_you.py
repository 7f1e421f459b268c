"""Who needs you (issue 27 item 1): one agent's one state from plain facts, what the full
screen follows of the notices, the desktop notification's choice and its safety, and
the tree's hidden dead and collapsed subtrees."""

from __future__ import annotations

import pytest

from ikigai_tui.core.events import Event
from ikigai_tui.core.notices import EventsCommitted, MatchingNotice, StreamDelta, TurnFinished
from ikigai_tui.tui import desktop
from ikigai_tui.tui.agent_state import DEAD, IDLE, AgentState, Doings, Facts, agent_state
from ikigai_tui.tui.tree_rows import AgentRow, agent_label
from ikigai_tui.tui.widgets.agent_tree import shown_rows


@pytest.mark.parametrize(("facts", "state"), [
    (Facts(), IDLE),
    (Facts(dead=True, news="finished its turn", asks=True), DEAD),
    (Facts(working=True, asks=True, tool="bash"), AgentState("needs", "asks")),
    (Facts(review=True, news="failed: boom"), AgentState("needs", "review")),
    (Facts(news="failed: rate limited"), AgentState("needs", "failed")),
    (Facts(news="finished its turn"), AgentState("needs", "new")),
    (Facts(news="got mail from root"), AgentState("needs", "new")),
    (Facts(matching=True), AgentState("working", "matching")),
    (Facts(working=True, streaming=True, tool="bash"), AgentState("working", "bash")),
    (Facts(working=True, streaming=True), AgentState("working", "streaming")),
    (Facts(working=True), AgentState("working", "thinking")),
    (Facts(working=True, news="finished its turn"), AgentState("working", "thinking")),
])
def test_each_agent_has_one_state_most_pressing_first(facts, state):
    assert agent_state(facts) == state


def test_a_state_reads_in_words():
    assert AgentState("needs", "asks").words == "needs you: asks"
    assert AgentState("working", "bash").words == "working: bash"
    assert IDLE.words == "idle" and DEAD.words == "dead"
    assert AgentState("needs", "new").needs_you and not AgentState("working", "x").needs_you
    assert IDLE.badge == "" and DEAD.badge == "" and AgentState("working", "bash").badge == "bash"


def _event(number: int, agent: str, kind: str, **payload) -> Event:
    return Event(number, agent, kind, payload, 0.0)


def test_doings_follow_tools_matchers_questions_and_previews():
    told = []
    doings = Doings(changed=lambda: told.append(1))
    assert doings.heard(EventsCommitted([_event(1, "a", "assistant", content="x"),
                                         _event(2, "a", "tool_call", name="bash")]))
    assert doings.facts("a", dead=False, working=True, streaming=False, news=None).tool == "bash"
    assert doings.heard(EventsCommitted([_event(3, "a", "tool_result")]))
    assert "a" not in doings.tools
    doings.heard(EventsCommitted([_event(4, "a", "tool_call", name="grep")]))
    assert doings.heard(TurnFinished("a", False, "boom")) and "a" not in doings.tools
    assert not doings.heard(StreamDelta("a", "x", 1))

    assert doings.heard(MatchingNotice("b", 1, 4, "local")) and "b" in doings.matching
    assert not doings.heard(MatchingNotice("b", 2, 4, "local"))  # nothing new to show
    doings.matched("b")
    assert "b" not in doings.matching and told == [1]

    asked = []
    doings.asked = asked.append
    doings.waiting(doings.asks, "c", 1)
    doings.waiting(doings.asks, "c", 1)
    assert asked == ["c"]  # its first question only
    doings.waiting(doings.asks, "c", -1)
    assert doings.facts("c", dead=False, working=True, streaming=False, news=None).asks
    doings.waiting(doings.asks, "c", -1)
    assert "c" not in doings.asks and len(told) == 5
    doings.waiting(doings.reviews, "d", 1)
    assert agent_state(doings.facts("d", dead=False, working=False, streaming=False,
                                    news=None)) == AgentState("needs", "review")


def _row(agent_id: str, parent: str | None, status: str = "idle",
         state: AgentState | None = None) -> AgentRow:
    return AgentRow(agent_id, agent_id, status, 0, None, parent, state=state)


def test_the_tree_hides_dead_agents_without_living_ones_under_them():
    rows = [_row("r", None), _row("d1", "r", "dead"), _row("d2", "d1", "dead"),
            _row("d3", "r", "dead"), _row("live", "d3")]
    shown, hidden = shown_rows(rows, True, set())
    assert [row.id for row in shown] == ["r", "d3", "live"] and hidden == 2
    shown, hidden = shown_rows(rows, False, set())
    assert [row.id for row in shown] == ["r", "d1", "d2", "d3", "live"] and hidden == 0


def test_a_collapsed_row_counts_what_it_holds_and_whether_one_needs_you():
    needs = AgentState("needs", "asks")
    rows = [_row("r", None), _row("k", "r"), _row("g", "k", state=needs), _row("k2", "r")]
    shown, _ = shown_rows(rows, False, {"k"})
    assert [(row.id, row.under, row.under_needs) for row in shown] == [
        ("r", 0, False), ("k", 1, True), ("k2", 0, False)]
    shown, _ = shown_rows(rows, False, {"r", "k"})
    assert [(row.id, row.under, row.under_needs) for row in shown] == [("r", 3, True)]
    label = agent_label(shown[0], False).plain
    assert label.endswith(" +3!"), label


def test_the_rows_say_the_state_and_fit_80_and_120_columns():
    asks = AgentRow("a1", "researcher (a1b2c3)", "working", 2, 12.0, None, 1_000, 2_000,
                    "spent 12K $0.04", state=AgentState("needs", "asks"))
    tool = asks._replace(state=AgentState("working", "a-very-long-tool-name-from-mcp"))
    for width in (21, 31):  # the tree's room at 80 and 120 columns
        for row in (asks, tool):
            text = agent_label(row, True, width=width)
            assert text.cell_len <= width, (text.plain, width)
    assert " asks " in agent_label(asks, False, width=21).plain
    narrow = AgentRow("r", "reviewer", "idle", 0, 1.0, "a", 1_400, 100_000,
                      state=AgentState("needs", "review"))
    assert agent_label(narrow, False, width=18).plain == "○ review…  review "  # the name gives way
    assert "a-very-long-t…" in agent_label(tool, False).plain  # a tool's name is cut
    evil = asks._replace(state=AgentState("working", "x\x1b]52;c;AA\x07"))
    assert "\x1b" not in agent_label(evil, False).plain


@pytest.mark.parametrize(("env", "expected"), [
    ({"TERM_PROGRAM": "iTerm.app"}, ("osc9", False)),
    ({"TERM_PROGRAM": "WezTerm"}, ("osc777", False)),
    ({"TERM_PROGRAM": "ghostty"}, ("osc777", False)),
    ({"TERM": "foot-extra"}, ("osc777", False)),
    ({"VTE_VERSION": "7600", "TERM": "xterm-256color"}, ("osc777", False)),
    ({"VTE_VERSION": "3800"}, None),
    ({"TERM_PROGRAM": "Apple_Terminal"}, None),
    ({"TERM": "xterm-kitty"}, None),
    ({"TERM": "xterm-256color"}, None),
    ({"TERM_PROGRAM": "tmux", "TMUX": "/tmp/tmux-0/default,1,0"}, None),
])
def test_auto_notifies_only_terminals_known_to_show_it(env, expected):
    assert desktop.protocol("auto", env, passes=lambda env: True) == expected
    assert desktop.protocol("off", env) is None


def test_inside_tmux_a_named_protocol_is_wrapped_only_when_tmux_lets_it_through():
    env = {"TMUX": "/tmp/tmux-0/default,1,0"}
    assert desktop.protocol("osc9", env, passes=lambda env: True) == ("osc9", True)
    assert desktop.protocol("osc777", env, passes=lambda env: False) is None
    assert desktop.protocol("osc777", {}, passes=lambda env: False) == ("osc777", False)
    wrapped = desktop.sequence("osc9", "kid finished its turn", tmux=True)
    assert wrapped == "\x1bPtmux;\x1b\x1b]9;ikigai: kid finished its turn\x07\x1b\\"


def test_the_notification_carries_no_control_character_from_an_agent():
    body = "evil\x1b]52;c;AAAA\x07 name; more\nlines\x9b"
    for kind in ("osc9", "osc777"):
        text = desktop.sequence(kind, body)
        inner = text[len("\x1b]"):-1]
        assert not any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in inner), repr(text)
    assert desktop.sequence("osc777", "a;b").startswith("\x1b]777;notify;ikigai;a,b")
