"""Mail that acts and results that come home in the full screen (issue 27 items 2, 3):
a woken agent's turn shows in its pane after the mail line; /wait shows the replies
without holding up the screen, and Esc stops it, writing nothing."""

from __future__ import annotations

from ikigai_tui.tui.completion import completions

from .conftest import SIZE, agent_named, all_lines, events_of, root_id, say, send_text, settle, type_text


async def test_a_woken_agents_turn_shows_in_its_pane(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Parent talk.")
        await session.command(root, "/fork --name kid")  # a child: mail wakes it
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        kid = agent_named(app.session, "kid")
        await send_text(pilot, "/send kid look at the plums")
        await pilot.press("alt+down")  # focus the child
        await settle(pilot)
        assert app.focused_agent == kid
        text = " ".join(line.strip() for line in all_lines(app.panes.active.scrollback))
        mail_line = text.index(f"✉ mail from root ({root[:6]})")
        assert "/check-mail · woken by mail 1 mail read into the context." in text
        read = text.index(f"Mail from root ({root[:6]}): look at the plums")
        reply = text.index('Offline model here. You said: "Mail from root')
        assert mail_line < read < reply, text
        assert app.session.tree[kid].unread == 0


async def test_wait_shows_the_replies_and_esc_stops_it(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await session.command(root, "/fork --name quick say hi")
    app = bench.app(delay=0.2)  # the offline model streams one word every 0.2 s
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        quick = agent_named(session, "quick")
        await send_text(pilot, "/wait quick")
        text = [line.strip() for line in all_lines(app.panes.active.scrollback)]
        head = text.index(f"quick ({quick[:6]}) (idle):")
        assert text[head + 1].startswith('Offline model here. You said: "say hi"'), text
        await type_text(pilot, "/fork --name slow take your time")
        await pilot.press("enter")  # not send_text: that waits for the turn to end
        await pilot.pause(0.2)
        before = len(await session.store.events())
        await type_text(pilot, "/wait slow")
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert session.tree[agent_named(session, "slow")].busy
        assert app.prompt_input.has_focus  # the screen is free while it waits
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert not [w for w in app.workers if w.group == "wait" and not w.is_finished]
        notes = " ".join(line.strip() for line in all_lines(app.panes.active.scrollback))
        assert "/wait slow: waiting (Esc stops it)" in notes and "Wait stopped." in notes
        commands = [e.payload["text"] for e in await events_of(app, root_id(session), "command")]
        assert "/wait slow" not in commands
        assert len([e for e in await session.store.events() if e.agent_id == root_id(session)
                    and e.id > before]) == 0
        await session.cancel_turns([agent_named(session, "slow")])


async def test_tab_offers_live_agents_to_wait_for_and_dead_ones_to_revive(bench):
    async with bench.prep() as session:
        root = root_id(session)
        for name in ("kid", "gone", "ghost"):
            await session.command(root, f"/fork --name {name}")
        await session.command(root, "/kill gone")
        await session.command(root, "/kill ghost")
        assert completions(session, root, "/wait ") == ["kid"]
        assert completions(session, root, "/revive g") == ["gone", "ghost"]
        assert completions(session, root, "/send ") == ["kid"]


async def test_a_report_arriving_is_a_line_marked_as_one(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await session.command(root, "/fork --name kid --report count the plums")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        kid = agent_named(app.session, "kid")
        text = " ".join(line.strip() for line in all_lines(app.panes.active.scrollback))
        assert f"✉ report from kid ({kid[:6]}) · 1 line," in text, text
        assert app.session.tree[root_id(app.session)].unread == 1  # the root is on manual
