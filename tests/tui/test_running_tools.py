"""A running tool in the scrollback (issue 25 item 4): while a call runs, its one line
says for how long and that Esc stops it, redrawn about once a second by one timer that
draws that line only (not the transcript), stopped when no call runs; when the result
comes the line is the usual finished one. Real turns: the fake provider behind real
litellm asks for a fake `slow` tool that waits until the test lets it finish.
Snapshot (<root>/snapshots/test_running_tools/): a scrollback with a call running for
12 s (the clock frozen)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ikigai_tui.core.tools import TURN, ToolContext, ToolResult
from ikigai_tui.tui import render
from ikigai_tui.tui.widgets import running_tools
from ikigai_tui.tui.widgets.running_tools import running_calls
from ikigai_tui.tui.transcript import Item
from tests.fakes.server import Reply
from tests.fakes.tools import install

from .conftest import SIZE, settle, type_text
from .test_memory_screens import _wait_for
from .test_permission_modal import app_on, fake  # noqa: F401  (the fake provider, a fixture)


class Slow:
    """`slow` STEP: a read-only tool (allowed without asking) that runs until released."""

    name = "slow"
    callers = frozenset({TURN})
    access = "read"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": "A slow step.",
            "parameters": {"type": "object", "required": ["step"],
                           "properties": {"step": {"type": "string"}}}}}

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        return f"slow {arguments.get('step')}"

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        self.started.set()
        await self.release.wait()
        return ToolResult("done\n")


@pytest.fixture
def slow(monkeypatch) -> Slow:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    tool = Slow()
    install(monkeypatch, tool)
    return tool


def _call_line(app) -> str:
    lines = [line.strip() for line in _shown(app) if line.strip().startswith("▸ slow")]
    return lines[-1] if lines else ""


def _shown(app) -> list[str]:
    scrollback = app.panes.active.scrollback
    return [strip.text.rstrip() for strip in scrollback._lines]


async def _start(app, pilot, slow: Slow) -> Item:
    """Ask, wait for the call to run and its line to show; the call's item."""
    await settle(pilot)
    await type_text(pilot, "Build it.")
    await pilot.press("enter")
    await _wait_for(pilot, slow.started.is_set, "the tool to start", timeout=90)
    await _wait_for(pilot, lambda: "running" in _call_line(app), "the running line")
    scrollback = app.panes.active.scrollback
    return next(i for i in scrollback.items if i.kind == "tool_call")


async def test_a_running_call_shows_its_time_then_how_it_ended(bench, tmp_path, fake, slow,
                                                               monkeypatch):
    fake.queue(Reply(tool_calls=[("slow", {"step": "build everything"})]), Reply(text="Built."))
    app = app_on(bench, tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        call = await _start(app, pilot, slow)
        scrollback = app.panes.active.scrollback
        assert _call_line(app) in ("▸ slow build everything · running 0s · Esc stops",
                                   "▸ slow build everything · running 1s · Esc stops")
        assert scrollback._ticker is not None
        drawn: list[int] = []
        draw = scrollback._draw_item
        monkeypatch.setattr(scrollback, "_draw_item", lambda item: drawn.append(item.key) or draw(item))
        refreshed: list[tuple[int, int]] = []
        refresh_lines = scrollback.refresh_lines
        monkeypatch.setattr(scrollback, "refresh_lines",
                            lambda y, n=1: refreshed.append((y, n)) or refresh_lines(y, n))
        monkeypatch.setattr(render, "clock", lambda: call.meta["at"] + 12.4)
        await _wait_for(pilot, lambda: "running 12s" in _call_line(app), "the next second")
        assert _call_line(app) == "▸ slow build everything · running 12s · Esc stops"
        assert set(drawn) == {call.key}  # that line alone is drawn again...
        at = scrollback._starts[scrollback.items.index(call)]
        assert set(refreshed) == {(at, 1)}  # ... and repainted
        monkeypatch.setattr(render, "clock", lambda: call.meta["at"] + 185)
        await _wait_for(pilot, lambda: "running 3m 05s" in _call_line(app), "the next tick")
        slow.release.set()
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end")
        await _wait_for(pilot, lambda: "Built." in "\n".join(_shown(app)), "the reply")
        assert _call_line(app) == "▸ slow build everything · 1 line · 5 chars"
        assert scrollback._ticker is None  # no call runs: no timer


async def test_escape_stops_the_running_call(bench, tmp_path, fake, slow):
    fake.queue(Reply(tool_calls=[("slow", {"step": "wait"})]))
    app = app_on(bench, tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await _start(app, pilot, slow)
        await pilot.press("escape")
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end")
        await _wait_for(pilot, lambda: "stopped" in _call_line(app), "the stopped line")
        assert _call_line(app).startswith("▸ slow wait · stopped")
        assert app.panes.active.scrollback._ticker is None


def test_only_the_calls_after_the_turns_last_message_without_a_result_run():
    call = lambda key: Item(key, "tool_call", "{}", {"name": "bash"})  # noqa: E731
    result = Item(5, "tool_result", "ok", {"call_event": 4})
    items = [call(1), Item(2, "user", "go"), Item(3, "assistant", "on it"), call(4), result,
             call(6), Item(-1, "note", "retrying"), call(7)]
    assert running_calls(items, {4: result, 5: call(4)}) == {6, 7}  # 1: an older turn's
    assert running_calls(items + [Item(8, "error", "failed")], {}) == frozenset()
    assert running_tools.STOP_ID == "stop-reply"


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=["120x40", "80x24"])
def test_running_call_snapshot(bench, tmp_path, fake, slow, snap_compare, monkeypatch, size):
    """A call running for 12 s (the clock frozen): its line says so, and that Esc stops it."""
    fake.queue(Reply(text="Let me build it.", tool_calls=[("slow", {"step": "make test"})]))
    app = app_on(bench, tmp_path, fake)

    async def run_before(pilot):
        call = await _start(app, pilot, slow)
        monkeypatch.setattr(render, "clock", lambda: call.meta["at"] + 12.0)
        app.panes.active.scrollback._tick()
        await pilot.pause(0.1)
        assert _call_line(app) == "▸ slow make test · running 12s · Esc stops"

    assert snap_compare(app, terminal_size=size, run_before=run_before)
