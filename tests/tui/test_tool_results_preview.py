"""/forget --tool-results in the full screen (issue 25 item 5): the preview dialog lists
the older tool results with the tokens clearing them saves; Enter clears exactly the
ticked ones (one `tool_output` event); nothing is written before."""

from __future__ import annotations

from ikigai_tui.core.events import EventRef, WriteBatch
from ikigai_tui.tui.screens.preview import PreviewScreen

from .conftest import SIZE, conversation, events_of, idle, root_id, settle, type_text

LOG = "\n".join(f"step {i}: compiling module {i} of the project" for i in range(80))


async def tool_steps(session, n: int) -> None:
    """n tool calls, each with a long result, written as a turn would write them."""
    root = root_id(session)
    for i in range(n):
        batch = WriteBatch()
        call = batch.add(root, "tool_call", {"call_id": f"c{i}", "name": "bash",
                                             "arguments": '{"command": "make"}'})
        batch.add(root, "tool_result", {"call_id": f"c{i}", "call_event": EventRef(call),
                                        "content": LOG})
        await session.commit(batch)


async def test_the_preview_lists_the_results_and_enter_clears_the_ticked(bench):
    async with bench.prep() as session:
        await conversation(session, "Build it.")
        await tool_steps(session, 3)
        await conversation(session, "Thanks.")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        results = [e.id for e in await events_of(app, root, "tool_result")]
        await type_text(pilot, "/forget --tool-results --keep 1")
        await pilot.press("enter")
        await idle(pilot)
        assert isinstance(app.screen, PreviewScreen)
        assert await events_of(app, root, "tool_output") == []
        await pilot.press("space")  # untick the first (the oldest result)
        await idle(pilot)
        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        [event] = await events_of(app, root, "tool_output")
        assert event.payload["ids"] == [results[1]]
        assert set((await app.session.replayer(root)).cleared) == {results[1]}
