"""The automatic rule for old tool output (issue 25 item 5; `tool_results_trigger`, off
by default): after a turn that takes the history past the trigger, the output of all
but the latest `tool_results_keep` tool results is cleared without review, said in the
scrollback, undone by /undo; once per crossing, again only after the history fell
below the trigger and crossed it again."""

from __future__ import annotations

import pytest

from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.tool_results import ToolResultsSettings
from tests.integration.tool_results_helpers import dump, next_request, run_tools, tooled

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)
BUDGET = 8_000  # the tools' schemas ~1,350 tokens; a dump of 60 lines ~690


@pytest.fixture
def hw(make, tmp_path, monkeypatch):
    return tooled(make, tmp_path, monkeypatch)


async def opened(hw, **rule):
    return await hw(settings_of_session={"budget": BUDGET,
                                         "tool_results": ToolResultsSettings(**rule)})


def said(h) -> list[str]:
    return [n.text for n in h.of(CompactionNotice)]


async def clearings(h) -> list:
    return await h.events(kind="tool_output")


async def test_it_fires_once_at_the_trigger_is_shown_and_undoable(hw, fake):
    h = await opened(hw, keep=3, trigger=0.4)  # 3,200 tokens
    ids = await run_tools(h, fake, dump("a"))  # ~2,100
    assert not await clearings(h) and not said(h)  # below the trigger
    ids |= await run_tools(h, fake, dump("b"), dump("c"), dump("d"))  # ~4,150
    [event] = await clearings(h)
    assert event.payload["ids"] == [ids["a"]]  # all but the latest 3
    [line] = said(h)
    assert "passed 40% of the window" in line and "cleared the output of 1 tool result" in line
    body = await next_request(h, fake)  # still above (~3,500: three whole outputs): not again
    assert "a line 5 of" not in body and f"/restore {ids['a']}]" in body
    ids |= await run_tools(h, fake, dump("e"))
    assert len(await clearings(h)) == 1 and len(said(h)) == 1
    undone = await h.session.command(h.root, "/undo")
    assert "sent whole again" in undone.lines[0]
    body = await next_request(h, fake)
    assert "a line 5 of" in body and "[output cleared" not in body


async def test_it_fires_again_only_after_falling_below(hw, fake):
    h = await opened(hw, keep=1, trigger=0.4)
    await run_tools(h, fake, dump("a"), dump("b"), dump("c"))  # ~3,450: a and b cleared
    assert len(await clearings(h)) == 1
    await next_request(h, fake)  # a turn that ends below (~2,200): armed again
    await run_tools(h, fake, dump("d"), dump("e"))  # ~3,600
    assert len(await clearings(h)) == 2
    assert len(said(h)) == 2


async def test_off_by_default_and_memory_excluded(hw, fake):
    h = await opened(hw, keep=0)
    await run_tools(h, fake, dump("a"), dump("b"), dump("c"), dump("d"))
    assert not await clearings(h) and not said(h)
    h2 = await opened(hw, keep=0, trigger=0.1, exclude=("dump",))
    await run_tools(h2, fake, dump("a"), dump("b"))
    assert not await clearings(h2)  # only excluded tools' output: nothing to clear
