"""The status line and the gauge (widgets/one_line.py): the app's refresh setting them to
what they already say does nothing, and a new text repaints the line without a layout
of the whole screen (five streaming agents refresh the app several times a second)."""

from __future__ import annotations

import contextlib

from .conftest import SIZE, idle, settle


def _watch_refreshes(widget) -> list[bool]:
    """Each refresh the widget asks for from now on: whether with a layout."""
    asked: list[bool] = []
    refresh = widget.refresh

    def recorded(*regions, **options):
        asked.append(bool(options.get("layout")))
        return refresh(*regions, **options)

    widget.refresh = recorded
    return asked


@contextlib.asynccontextmanager
async def _settled(bench):
    async with bench.prep():
        pass
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        yield app, pilot


async def test_a_refresh_that_changes_nothing_repaints_neither_line(bench):
    async with _settled(bench) as (app, _pilot):
        status, gauge = _watch_refreshes(app.status_line), _watch_refreshes(app.gauge)
        before = app.status_line.render()
        app._show_status()
        await app._refresh()
        assert status == [] and gauge == []
        assert app.status_line.render() == before


async def test_a_new_status_is_shown_without_a_layout(bench):
    async with _settled(bench) as (app, pilot):
        status = _watch_refreshes(app.status_line)
        app.store_trouble = "the database server is lost"
        app._show_status()
        assert status == [False]
        await idle(pilot)
        assert "the database server is lost" in app.status_line.render().plain
