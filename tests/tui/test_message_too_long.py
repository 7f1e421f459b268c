"""A message that cannot fit the model's input limit is refused with one line and stays
in the input, to be shortened (issue 13, item 14)."""

from __future__ import annotations

from .conftest import SIZE, all_lines, events_of, idle, set_limit, settle, type_text


async def test_a_message_too_long_stays_in_the_input(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        fixed = (await app.session.measure(root)).tokens
        set_limit(app, fixed + 5)  # room for a word or two, not for this message
        await idle(pilot)
        text = "this message is much too long for the room left"
        await type_text(pilot, text)
        await pilot.press("enter")
        await idle(pilot)
        assert await events_of(app, root, "user") == []  # nothing written
        errors = [line for line in all_lines(app.panes.active.scrollback)
                  if "message too long" in line]
        assert errors and errors[0].lstrip().startswith("Error: message too long")
        assert app.prompt_input.text == text  # kept, to be shortened

        set_limit(app, fixed + 5_000)
        await pilot.press("enter")  # sent as it is, once it fits
        await idle(pilot)
        assert [e.payload["content"] for e in await events_of(app, root, "user")] == [text]
        assert app.prompt_input.text == ""
