"""The preview dialog keeps one size from the moment it opens (issue 23, review item 3):
at 80x24 it opened with five list rows and the first Space grew it over the tree, the
gauge and the input's top border; at 120x40 it overlapped that border from the start.
It takes the free rows (the conversation panes'), leaving the gauge and the input whole,
and ticking (a whole exchange, one message of it, all, none) never changes its size."""

from __future__ import annotations

import pytest

from ikigai_tui.tui.screens.preview import PreviewScreen

from .conftest import conversation, idle, root_id, settle, type_text

TALK = [f"message number {n} about cooking and other things" for n in range(1, 13)]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_dialog_keeps_its_size_and_the_free_rows(bench, size):
    async with bench.prep() as session:
        await conversation(session, *TALK)
        root = root_id(session)
        ids = [e.id for e in await session.store.events(root) if e.kind in ("user", "assistant")]
    app = bench.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await type_text(pilot, f"/forget --ids {','.join(map(str, ids))} --preview")
        await pilot.press("enter")
        await idle(pilot)
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        dialog = screen.query_one(".dialog")
        opened = dialog.region
        panes = app.panes.region
        # In the free rows, all of them used (the list is longer than they are) ...
        assert (opened.y, opened.bottom) == (panes.y, panes.bottom)
        # ... above the gauge and the input, whose borders stay whole.
        assert opened.bottom <= app.gauge.region.y < app.prompt_input.region.y
        assert screen.preview_list.size.height > 3
        for key in ["space", "down", "down", "space", "space", "n", "a", "end", "space", "home"]:
            await pilot.press(key)
            await idle(pilot)
            assert dialog.region == opened, f"after {key}"
