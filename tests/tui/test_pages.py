"""Paging a child's transcript: what it inherited at fork, then its own messages.

A page never holds more than `limit` entries of either part; walking back (before=) or
forth (after=) from any page visits the head note, every inherited message, the
separator and every own message exactly once, in order. And in the app, a child forked
from a long conversation opens with one page, not its whole inheritance.
"""

from __future__ import annotations

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.session import Session
from ikigai_tui.tui.pages import AgentPages
from ikigai_tui.tui.widgets.scrollback import PAGE_ITEMS

from tests.tui.conftest import agent_named, idle, root_id, say, settle

LIMIT = 10


async def write_turns(session: Session, agent_id: str, turns: int, tag: str = "") -> None:
    batch = WriteBatch()
    for n in range(turns):
        batch.add(agent_id, "user", {"content": f"{tag}question {n}"})
        batch.add(agent_id, "assistant", {"content": f"{tag}answer {n}"})
    await session.commit(batch)


def texts(items) -> list[str]:
    return [item.text for item in items]


async def walk_back(pages: AgentPages) -> list:
    """From the newest page back to the start, as the scrollback pages (first key > 0)."""
    shown = await pages(limit=LIMIT)
    assert len([i for i in shown if i.key > 0 and i.kind != "note"]) <= LIMIT
    while True:
        first = next(i.key for i in shown if i.key > 0)
        older = await pages(before=first, limit=LIMIT)
        if not older:
            return shown
        assert len([i for i in older if i.kind != "note"]) <= LIMIT
        shown = older + shown


async def walk_forth(pages: AgentPages) -> list:
    shown = await pages(oldest=True, limit=LIMIT)
    while True:
        last = next(i.key for i in reversed(shown) if i.key > 0)
        newer = await pages(after=last, limit=LIMIT)
        if not newer:
            return shown
        assert len([i for i in newer if i.kind != "note"]) <= LIMIT
        shown = shown + newer


async def assert_walks(pages: AgentPages, expected: list[str]) -> None:
    assert texts(await walk_back(pages)) == expected
    assert texts(await walk_forth(pages)) == expected


async def test_a_child_pages_through_its_inheritance_and_its_own_messages(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await write_turns(session, root, 23)  # 46 messages: several pages
        await session.command(root, "/fork --name kid")
        kid = agent_named(session, "kid")
        await write_turns(session, kid, 2, tag="kid ")
        pages = AgentPages(session, kid)

        newest = await pages(limit=LIMIT)
        assert texts(newest)[-4:] == ["kid question 0", "kid answer 0", "kid question 1",
                                      "kid answer 1"]
        assert texts(newest)[-5] == "(this agent's own messages follow)"
        assert len(newest) == LIMIT + 1  # 4 own, the separator, the last 6 inherited
        assert texts(newest)[0] == "question 20"

        expected = (["Forked from root (a1b2c1): 46 inherited messages"]
                    + [t for n in range(23) for t in (f"question {n}", f"answer {n}")]
                    + ["(this agent's own messages follow)"]
                    + [t for n in range(2) for t in (f"kid question {n}", f"kid answer {n}")])
        await assert_walks(pages, expected)


async def test_a_child_that_inherited_nothing(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await write_turns(session, root, 3)
        await session.command(root, "/mark fresh")
        await session.command(root, "/fork fresh --name kid")
        kid = agent_named(session, "kid")
        await write_turns(session, kid, 1, tag="kid ")
        pages = AgentPages(session, kid)
        expected = ["Forked from root (a1b2c1): 0 inherited messages",
                    "(this agent's own messages follow)", "kid question 0", "kid answer 0"]
        assert texts(await pages(limit=LIMIT)) == expected
        await assert_walks(pages, expected)


async def test_the_root_pages_only_its_own_log(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await write_turns(session, root, 12)
        pages = AgentPages(session, root)
        expected = [t for n in range(12) for t in (f"question {n}", f"answer {n}")]
        await assert_walks(pages, expected)


async def test_the_app_opens_a_child_of_a_long_conversation_with_one_page(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await write_turns(session, root, 1500)  # 3,000 inherited messages
        await session.command(root, "/fork --name kid")
        kid = agent_named(session, "kid")
        await say(session, kid, "what do you see?")
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f2")  # split: the kid beside the root
        await idle(pilot)
        [pane] = app.panes.showing(kid)
        scrollback = pane.scrollback
        # A page or a few (short items: the next page is read near an edge), never the
        # whole inheritance (3,000 messages).
        assert len(scrollback.items) <= 3 * PAGE_ITEMS
        shown = "\n".join(scrollback.render_line(y).text for y in range(scrollback.size.height))
        assert "what do you see?" in shown and "I can see 3001 messages" in shown
        assert scrollback.scroll_y == scrollback.max_scroll_y
