"""The first frame waits for Markdown's import (a thread, tui/warmup.py) only when it
draws replies: an empty conversation's first frame (the cold start figure) does not."""

from __future__ import annotations

import ikigai_tui.tui.app as app_module

from .conftest import conversation, settle

SIZE = (120, 40)


async def _waited(bench, monkeypatch) -> list[bool]:
    waited: list[bool] = []
    real = app_module.markdown_ready

    async def recorded(*args, **kwargs):
        waited.append(True)
        await real(*args, **kwargs)

    monkeypatch.setattr(app_module, "markdown_ready", recorded)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    return waited


async def test_an_empty_page_does_not_wait_for_markdown(bench, monkeypatch):
    assert await _waited(bench, monkeypatch) == []


async def test_a_page_with_replies_waits_for_markdown(bench, monkeypatch):
    async with bench.prep() as session:
        await conversation(session, "a question")
    assert await _waited(bench, monkeypatch) == [True]
