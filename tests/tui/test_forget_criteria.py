"""/forget CRITERIA in the full screen (issue 12): the matcher's progress, then the
preview of its matches; untick one, apply, and the context is right. The matcher is an
LLM reached through real litellm on the loopback fake."""

from __future__ import annotations

import pytest

from ikigai_tui import config as config_module
from ikigai_tui.runtime import open_session
from ikigai_tui.runtime import create_app
from ikigai_tui.tui.screens.matching import MatchingScreen
from ikigai_tui.tui.screens.preview import PreviewScreen
from tests.fakes.server import Fault, FakeProvider
from tests.integration.matcher_helpers import answer_by_word

from .conftest import DB_LABEL, SIZE, all_lines, conversation, events_of, idle, settle, type_text

FORGET = "/forget --matcher-model openai/x the Lisbon weather"


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeProvider() as running:
        yield running


def app_on(bench, fake, **env):
    config = config_module.load(db=str(bench.db), api_base=fake.openai_base,
                                config_path=str(bench.tmp_path / "none.toml"), env=env)
    return create_app(config, db_label=DB_LABEL,
                      session_factory=lambda config: open_session(config, new_id=bench.new_id))


async def lisbon_conversation(bench) -> None:
    async with bench.prep() as session:
        await conversation(session, "What is the weather in Lisbon?", "Recommend a jazz album.",
                           "Is Lisbon rainy in November?")


async def wait_for(pilot, kind, timeout=5.0):
    for _ in range(int(timeout / 0.02)):
        if isinstance(pilot.app.screen, kind):
            return pilot.app.screen
        await pilot.pause(0.02)
    raise AssertionError(f"no {kind.__name__} (screen is {pilot.app.screen!r})")


async def test_forget_by_criteria_untick_one_and_apply(bench, fake):
    await lisbon_conversation(bench)
    fake.respond(answer_by_word("lisbon"))
    app = app_on(bench, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        before = list((await app.session.replayer(root)).ctx)
        await type_text(pilot, FORGET)
        await pilot.press("enter")
        screen = await wait_for(pilot, PreviewScreen)
        await idle(pilot)
        assert await events_of(app, root, "filter") == []
        texts = {i: p.get("content", "") for i, _k, p in await app.session.messages(root)}
        matched = [i for i in before if "lisbon" in str(texts[i]).lower()]
        assert len(matched) >= 2
        await pilot.press("space")  # untick the first match
        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen) and screen is not app.screen
        (event,) = await events_of(app, root, "filter")
        assert event.payload["ids"] == matched[1:]
        assert event.payload["criteria"] == "the Lisbon weather"
        after = list((await app.session.replayer(root)).ctx)
        assert after == [i for i in before if i not in matched[1:]]


async def test_progress_shows_while_matching_and_escape_cancels_writing_nothing(bench, fake):
    await lisbon_conversation(bench)
    fake.respond(answer_by_word("lisbon", delay=3))
    app = app_on(bench, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        commands = len(await events_of(app, root))
        await type_text(pilot, FORGET)
        await pilot.press("enter")
        progress = await wait_for(pilot, MatchingScreen)
        assert progress.total == 1 and progress.done == 0
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, (MatchingScreen, PreviewScreen))
        assert len(await events_of(app, root)) == commands  # nothing written, not even the record
        assert any("nothing was written" in line for line in all_lines(app.panes.active.scrollback))


async def test_a_failing_matcher_is_one_error_line_in_the_pane(bench, fake):
    await lisbon_conversation(bench)
    fake.respond(lambda received: Fault.auth())
    app = app_on(bench, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, FORGET)
        await pilot.press("enter")
        await idle(pilot)
        shown = " ".join(line.strip() for line in all_lines(app.panes.active.scrollback))
        assert shown.count("Error: the matcher failed") == 1 and "nothing was changed" in shown
        assert await events_of(app, app.focused_agent, "filter") == []
