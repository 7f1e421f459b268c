"""The /forget preview driven by keys: nothing is written before the answer; Enter
applies, Escape cancels, unticking leaves a message in the context."""

from __future__ import annotations

from ikigai_tui.tui.screens.preview import PreviewScreen

from .conftest import SIZE, all_lines, conversation, events_of, idle, settle, type_text


async def _open_forget_preview(bench):
    async with bench.prep() as session:
        await conversation(session, "One.", "Two.", "Three.")
    app = bench.app()
    return app


async def _typed(app, pilot, command: str) -> tuple[str, list[int]]:
    """Type `command` and send it; (root id, context before)."""
    await settle(pilot)
    root = app.focused_agent
    before = list((await app.session.replayer(root)).ctx)
    await type_text(pilot, command)
    await pilot.press("enter")
    await idle(pilot)
    return root, before


async def _preview_forget_4_5(app, pilot) -> tuple[str, list[int]]:
    """Type `/forget --ids 4,5 --preview` and wait for its preview; (root id, context before)."""
    root, before = await _typed(app, pilot, "/forget --ids 4,5 --preview")
    assert isinstance(app.screen, PreviewScreen)
    return root, before


async def test_forget_preview_applies_on_enter(bench):
    app = await _open_forget_preview(bench)
    async with app.run_test(size=SIZE) as pilot:
        root, before = await _preview_forget_4_5(app, pilot)
        assert 4 in before and 5 in before
        assert await events_of(app, root, "filter") == []  # nothing before the confirmation

        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        filters = await events_of(app, root, "filter")
        assert [(e.payload["mode"], sorted(e.payload["ids"])) for e in filters] == [("forget", [4, 5])]
        after = list((await app.session.replayer(root)).ctx)
        assert after == [i for i in before if i not in (4, 5)]
        commands = await events_of(app, root, "command")
        assert commands[-1].payload["text"].startswith("/forget --ids 4,5")


async def test_forget_preview_cancels_on_escape(bench):
    app = await _open_forget_preview(bench)
    async with app.run_test(size=SIZE) as pilot:
        root, before = await _preview_forget_4_5(app, pilot)

        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        assert await events_of(app, root, "filter") == []
        assert list((await app.session.replayer(root)).ctx) == before
        commands = await events_of(app, root, "command")
        assert [(c.payload["text"], c.payload["output"]) for c in commands] == [
            ("/forget --ids 4,5 --preview", ["Cancelled."])
        ]
        assert any("Cancelled." in line for line in all_lines(app.panes.active.scrollback))


async def test_forget_preview_applies_exactly_the_ticked_subset(bench):
    """The modal is driven by the core's proposal: unticking a message leaves it in the
    context, and the filter written carries exactly the ticked ids."""
    app = await _open_forget_preview(bench)
    async with app.run_test(size=SIZE) as pilot:
        root, before = await _preview_forget_4_5(app, pilot)
        await pilot.press("space")  # untick the first item (#4)
        await idle(pilot)
        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        filters = await events_of(app, root, "filter")
        assert [(e.payload["mode"], e.payload["ids"]) for e in filters] == [("forget", [5])]
        assert list((await app.session.replayer(root)).ctx) == [i for i in before if i != 5]


async def test_explicit_ids_apply_at_once_without_a_preview(bench):
    """SPEC §5: `/forget --ids LIST` needs no matcher and no preview; keys typed next go
    to the input, not to a modal (a preview here swallowed the next command)."""
    app = await _open_forget_preview(bench)
    async with app.run_test(size=SIZE) as pilot:
        root, before = await _typed(app, pilot, "/forget --ids 4,5")
        assert not isinstance(app.screen, PreviewScreen)
        filters = await events_of(app, root, "filter")
        assert [(e.payload["mode"], sorted(e.payload["ids"])) for e in filters] == [("forget", [4, 5])]
        assert list((await app.session.replayer(root)).ctx) == [i for i in before if i not in (4, 5)]
        assert any("Forgot 2 messages." in line for line in all_lines(app.panes.active.scrollback))

        await type_text(pilot, "/remember --ids 1-3 --dry-run")
        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        assert len(await events_of(app, root, "filter")) == 1  # a dry run writes no filter
