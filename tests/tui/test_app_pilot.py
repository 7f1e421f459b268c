"""The whole app driven by keys (Textual's Pilot), asserting on behaviour: the log, the
replayed contexts, which agent each pane shows and the text it renders."""

from __future__ import annotations

import asyncio

from ikigai_tui.core.tokens.window import CONTEXT_FULL
from ikigai_tui.runtime import open_session
from ikigai_tui.runtime import create_app

from .conftest import (
    DB_LABEL, SIZE, agent_named, all_lines, conversation, events_of, id_counter, idle,
    make_config, root_id, say, screen_lines, set_limit, settle, type_text,
)


async def _wait_for(pilot, condition, *, timeout: float = 5.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.02)


# ---- commands --------------------------------------------------------------------------


async def test_mark_typed_in_the_input_creates_the_mark(bench):
    async with bench.prep() as session:
        await conversation(session, "First question.")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        await type_text(pilot, "/mark A")
        await pilot.press("enter")
        await idle(pilot)

        replayer = await app.session.replayer(root)
        assert [m.name for m in replayer.valid_marks()] == ["A"]
        marks = await events_of(app, root, "mark")
        assert [e.payload["name"] for e in marks] == ["A"]
        commands = await events_of(app, root, "command")
        assert commands[-1].payload["text"] == "/mark A"
        assert commands[-1].payload["output"] == ["Checkpoint 'A' created."]
        assert marks[0].id > max(e.id for e in await events_of(app, root, "assistant"))
        lines = all_lines(app.panes.active.scrollback)
        assert "/mark A" in lines
        assert any("Checkpoint 'A' created." in line for line in lines)
        assert app.prompt_input.text == ""


async def test_context_full_blocks_sending_until_a_context_command(bench):
    async with bench.prep(budget=0) as session:
        # Long enough that the fixed part (system prompt, tool definitions) alone is far
        # from the limit once the context is cleared.
        await conversation(session, *[f"Message {n}: " + "words " * 400 for n in range(3)])
    app = bench.app(budget=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        tokens = (await app.session.measure(root)).tokens
        set_limit(app, tokens - 1)
        await idle(pilot)
        assert app.prompt_input.blocked == CONTEXT_FULL
        users = len(await events_of(app, root, "user"))

        await type_text(pilot, "Still there?")
        await pilot.press("enter")
        await idle(pilot)
        assert len(await events_of(app, root, "user")) == users  # nothing written
        assert f"Error: {CONTEXT_FULL}" in all_lines(app.panes.active.scrollback)
        assert app.prompt_input.text == "Still there?"  # refused: kept to send again
        app.prompt_input.clear()

        await type_text(pilot, "/clear")
        await pilot.press("enter")
        await idle(pilot)
        assert app.prompt_input.blocked is None
        assert app.gauge.state == "normal"

        await type_text(pilot, "Fresh start.")
        await pilot.press("enter")
        await idle(pilot)
        assert len(await events_of(app, root, "user")) == users + 1
        assert any('You said: "Fresh start."' in line for line in all_lines(app.panes.active.scrollback))


# ---- switching agents --------------------------------------------------------------------


async def _parent_and_child(session) -> None:
    root = root_id(session)
    await say(session, root, "Parent talk about apples.")
    await session.command(root, "/fork --name kid Child work on bananas.")
    await session.wait_idle()


def _shown(app) -> str:
    return "\n".join(screen_lines(app.panes.active.scrollback))


async def test_alt_down_and_alt_up_switch_the_scrollback(bench):
    async with bench.prep() as session:
        await _parent_and_child(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_id(app.session)
        kid = agent_named(app.session, "kid")
        assert app.panes.active.agent_id == root
        assert "/fork --name kid" in _shown(app)
        assert "Forked from root" not in _shown(app)

        await pilot.press("alt+down")
        await idle(pilot)
        assert app.focused_agent == kid
        assert app.panes.active.agent_id == kid
        assert len(app.panes.all()) == 1
        shown = _shown(app)
        assert "Forked from root" in shown
        assert "› Child work on bananas." in shown
        assert 'You said: "Child work on bananas."' in shown
        assert "/fork --name kid" not in shown
        assert "kid (" in app.panes.active.title.render().plain

        await pilot.press("alt+up")
        await idle(pilot)
        assert app.focused_agent == root
        assert app.panes.active.agent_id == root
        shown = _shown(app)
        assert "/fork --name kid" in shown
        assert "Forked from root" not in shown


async def test_selecting_in_the_tree_switches_the_scrollback(bench):
    async with bench.prep() as session:
        await _parent_and_child(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        kid = agent_named(app.session, "kid")
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.focused is app.agent_tree
        await pilot.press("down", "enter")
        await idle(pilot)
        assert app.focused_agent == kid
        assert app.panes.active.agent_id == kid
        assert "› Child work on bananas." in _shown(app)
        assert app.gauge.render().plain.startswith("Sent:")

        # chosen: the input has the focus again (issue 13 item 8); and back to the root
        assert app.focused is app.prompt_input
        await pilot.press("ctrl+t", "up", "enter")
        await idle(pilot)
        assert app.focused_agent == root_id(app.session)
        assert app.focused is app.prompt_input
        assert "/fork --name kid" in _shown(app)


# ---- interrupting a reply ----------------------------------------------------------------


async def test_escape_during_a_slow_reply_keeps_the_partial_reply_flagged(bench):
    message = "Tell me a long story."
    full = (f'Offline model here. You said: "{message}". I can see 1 message (1 from you); '
            f'the first reads: "{message}".')
    app = bench.app(delay=0.2)  # 0.2 s between words: the reply takes ~5 s
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        await type_text(pilot, message)
        await pilot.press("enter")
        scrollback = app.panes.active.scrollback
        await _wait_for(pilot, lambda: scrollback._stream is not None
                        and len(scrollback._stream.text.split()) >= 3, what="the reply to stream")
        assert app.session.tree[root].status == "working"

        await pilot.press("escape")
        await idle(pilot)
        assert app.session.tree[root].status == "idle"
        replies = await events_of(app, root, "assistant")
        assert len(replies) == 1
        payload = replies[0].payload
        assert payload["interrupted"] is True
        assert payload["content"].startswith("Offline model here.")
        assert full.startswith(payload["content"].rstrip())
        assert payload["content"].rstrip() != full
        lines = all_lines(scrollback)
        assert any(line.startswith("[interrupted") for line in lines)
        assert any(line.startswith("Offline model here.") for line in lines)
        # the partial reply is in the context (what arrived is kept)
        assert replies[0].id in (await app.session.replayer(root)).ctx


# ---- completion ----------------------------------------------------------------------------


async def test_tab_completes_slash_commands_and_mark_names(bench):
    async with bench.prep() as session:
        await session.command(root_id(session), "/mark Alpha")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        prompt = app.prompt_input

        # /mar is ambiguous (/mark, /marks): it extends to the common prefix, lists both
        await type_text(pilot, "/mar")
        await pilot.press("tab")
        assert prompt.text == "/mark"
        assert prompt.border_subtitle is not None
        assert str(prompt.border_subtitle).split() == ["/mark", "/marks"]
        assert app.focused is prompt  # Tab completed; it did not move the focus

        prompt.clear()
        await type_text(pilot, "/forg")
        await pilot.press("tab")
        assert prompt.text == "/forget "

        prompt.clear()
        await type_text(pilot, "/clear Al")
        await pilot.press("tab")
        assert prompt.text == "/clear Alpha "


# ---- control sequences are inert ------------------------------------------------------------


EVIL = "look \x1b[2J\x1b]52;c;SGVsbG8=\x07 here"


def _has_controls(text: str) -> bool:
    return any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in text)


def _segments(scrollback) -> list[str]:
    return [segment.text for strip in scrollback._lines for segment in strip]


async def test_escape_sequences_are_shown_as_inert_placeholders(bench):
    async with bench.prep() as session:
        await conversation(session, EVIL)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scrollback = app.panes.active.scrollback
        lines = all_lines(scrollback)
        text = "\n".join(lines)
        # the user's message and the model's two quotes of it
        assert text.count("␛[2J␛]52;c;SGVsbG8=␇") == 3
        assert not any(_has_controls(segment) for segment in _segments(scrollback))
        assert not any(_has_controls(line) for line in screen_lines(scrollback))

        # typed live: the streamed lines and the committed ones are inert too
        app.prompt_input.text = EVIL.replace("look", "again")
        await pilot.press("enter")
        await idle(pilot)
        lines = all_lines(scrollback)
        assert "› again ␛[2J␛]52;c;SGVsbG8=␇ here" in lines
        assert "\n".join(lines).count("␛]52;c;SGVsbG8=␇") == 6
        assert not any(_has_controls(segment) for segment in _segments(scrollback))
        assert "\x1b" not in app.export_screenshot()


# ---- determinism hook ------------------------------------------------------------------------


async def test_new_id_of_create_app_also_names_the_root_on_first_start(tmp_path):
    """`create_app(config, new_id=...)` exists so snapshot tests get the same ids every
    run; on an empty database the root is an agent too and must take its id from it."""
    expected = id_counter()()  # the counter's first id: a1b2c1 and zeros
    config = make_config(tmp_path / "ikigai.db", tmp_path)
    app = create_app(config, new_id=id_counter(), db_label=DB_LABEL)  # Session not patched
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.tree.root.id == expected


async def test_keys_are_handled_while_the_focused_agent_is_still_loading(bench, monkeypatch):
    """The first refresh waits for the focused agent's replay (a second for a long log);
    it runs in a worker, so typing is not held up meanwhile."""
    from ikigai_tui.core.replays import Replays

    gate, entered = asyncio.Event(), asyncio.Event()
    original = Replays._load

    async def slow_load(self, agent_id):
        entered.set()
        await gate.wait()
        return await original(self, agent_id)

    monkeypatch.setattr(Replays, "_load", slow_load)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await _wait_for(pilot, entered.is_set, what="the first replay to start")
        await pilot.press("h", "i")
        await pilot.pause()
        assert app.prompt_input.text == "hi"
        assert app.gauge.render().plain == "Sent: …"  # still loading
        gate.set()
        await idle(pilot)
        assert app.gauge.render().plain.startswith("Sent: ~")


async def test_the_app_shows_the_session_its_factory_opens(tmp_path):
    """Tests and other front-ends hand the app a session factory instead of patching the
    runtime: it is called with the app's config, and what it opened is what is shown."""
    config = make_config(tmp_path / "ikigai.db", tmp_path)
    calls, closed = [], []

    async def factory(given):
        calls.append(given)
        session = await open_session(given, new_id=id_counter())
        await session.command(session.tree.root.id, "/mark from-the-factory")
        close = session.close

        async def recorded_close() -> None:
            closed.append(True)
            await close()

        session.close = recorded_close
        return session

    app = create_app(config, db_label=DB_LABEL, session_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert calls == [config]
        shown = "\n".join(screen_lines(app.panes.active.scrollback))
        assert "Checkpoint 'from-the-factory' created." in shown
    assert closed == [True]  # the app closed what the factory opened


async def test_model_option_naming_the_roots_model_changes_nothing(bench):
    # `ikigai --model quick` where quick is an alias of the model the root already has
    # (as `--model gpt-4o` on a root on openai/gpt-4o): no /model is run nor shown.
    import dataclasses

    from .conftest import DB_LABEL, make_config

    async with bench.prep() as session:
        await conversation(session, "First question.")
    config = dataclasses.replace(make_config(bench.db, bench.tmp_path), aliases={"quick": "offline"})
    app = create_app(config, db_label=DB_LABEL, model_override="quick",
                     session_factory=lambda c: open_session(c, new_id=bench.new_id))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        assert await events_of(app, root, "command") == []
        assert not any("/model" in line for line in all_lines(app.panes.active.scrollback))
        assert app.session.model_of(app.session.tree[root]) == "offline"
