"""/fork --at ID and /mark --at ID (issue 27 item 4: act on any message): the child gets
the parent's context up to and including entry ID, a tool call always with its result;
a mark placed at an earlier entry rewinds to just after it. Both give the same context
live and after a restart (the fork's `at_event`, the mark's `at`, replayed)."""

from __future__ import annotations

import pytest

from ikigai_tui.core.errors import CommandError
from tests.fakes.server import Reply, validate_pairs
from tests.integration.provider_helpers import FORMATS
from tests.integration.tool_results_helpers import dump, run_tools, tooled


@pytest.fixture
def fmt(monkeypatch) -> str:
    """One wire format is enough here: what is tested is the replayed context."""
    from tests.integration.provider_helpers import KEY_VARIABLES, SECRET

    for variable in KEY_VARIABLES.values():
        monkeypatch.setenv(variable, SECRET)
    return FORMATS[0]


@pytest.fixture
def hw(make, tmp_path, monkeypatch):
    return tooled(make, tmp_path, monkeypatch)


def keys(context) -> list[int]:
    return [m[0] for m in context]


async def talked(h, *texts: str) -> list[int]:
    for text in texts:
        h.fake.queue(Reply(text=f"re {text}"))
        assert await h.say(text)
    return keys(await h.context())


async def fork_at(h, args: str) -> str:
    result = await h.session.command(h.root, f"/fork {args}")
    assert result.lines[0].startswith("Forked. Child: ")
    return result.data


async def test_fork_at_gives_the_context_up_to_the_entry_live_and_after_restart(hw):
    h = await hw()
    parent = await talked(h, "one", "two", "three")
    assert len(parent) == 6
    child = await fork_at(h, f"--at {parent[3]} --name early")
    assert keys(await h.context(child)) == parent[:4]
    child2 = await fork_at(h, f"--at #{parent[1]}")
    assert keys(await h.context(child2)) == parent[:2]
    again = await hw(path=h.path)
    assert keys(await again.context(child)) == parent[:4]
    assert keys(await again.context(child2)) == parent[:2]
    assert keys(await again.context(again.root)) == parent
    fork_events = [e for e in await h.events(kind="fork")]
    assert fork_events[0].payload["at_event"] == parent[3]


async def test_fork_at_an_entry_out_of_the_context_says_so_and_writes_nothing(hw):
    h = await hw()
    parent = await talked(h, "one", "two")
    await h.session.command(h.root, f"/forget --ids {parent[0]}-{parent[1]}")
    before = len(await h.store.events(h.root))
    for ref in (str(parent[0]), "99999"):
        with pytest.raises(CommandError, match="not in this agent's context"):
            await h.session.command(h.root, f"/fork --at {ref}")
    with pytest.raises(CommandError, match="not an entry id"):
        await h.session.command(h.root, "/fork --at x1")
    assert len(await h.store.events(h.root)) == before
    assert len(h.session.tree) == 1


async def test_fork_at_a_tool_call_takes_its_result_and_never_a_lone_call(hw, fake):
    """Two calls in one round log as call a, call b, result a, result b. --at call a gives
    call a with its result (not call b); --at result a has call b in the prefix, so its
    result comes too. The child's next request pairs every call (the fake checks)."""
    h = await hw()
    ids = await run_tools(h, fake, Reply(tool_calls=[("dump", {"tag": "a", "lines": 2}),
                                                     ("dump", {"tag": "b", "lines": 2})]))
    context = await h.context()
    calls = [m[0] for m in context if m[1] == "tool_call"]
    assert keys(context).index(calls[1]) < keys(context).index(ids["a"])  # a, b, ra, rb
    child = await fork_at(h, f"--at {calls[0]}")
    upto_user = keys(context)[:keys(context).index(calls[0])]
    assert keys(await h.context(child)) == [*upto_user, calls[0], ids["a"]]
    child2 = await fork_at(h, f"--at {ids['a']}")
    assert keys(await h.context(child2)) == [*upto_user, calls[0], calls[1], ids["a"], ids["b"]]
    again = await hw(path=h.path)
    assert keys(await again.context(child)) == [*upto_user, calls[0], ids["a"]]
    fake.queue(Reply(text="ok"))
    assert await again.say("go on", child)
    assert validate_pairs(fake.requests[-1]) == []


async def test_mark_at_an_earlier_entry_rewinds_to_just_after_it(hw):
    h = await hw()
    parent = await talked(h, "one", "two", "three")
    await h.session.command(h.root, "/mark late")
    result = await h.session.command(h.root, f"/mark early --at {parent[1]}")
    assert result.lines == [f"Checkpoint 'early' created at #{parent[1]}."]
    await h.session.command(h.root, "/rewind early")
    assert keys(await h.context()) == parent[:2]
    # The mark set before it but placed later is rewound past: no longer valid.
    marks = [m.name for m in (await h.session.replayer(h.root)).valid_marks()]
    assert marks == ["early"]
    again = await hw(path=h.path)
    assert keys(await again.context()) == parent[:2]
    assert [m.name for m in (await again.session.replayer(again.root)).valid_marks()] == ["early"]


async def test_mark_at_after_restart_then_rewind(hw):
    h = await hw()
    parent = await talked(h, "one", "two")
    await h.session.command(h.root, f"/mark --at {parent[1]}")
    again = await hw(path=h.path)
    result = await again.session.command(again.root, "/rewind")
    assert result.lines == ["Rewound to last checkpoint."]
    assert keys(await again.context()) == parent[:2]


async def test_mark_at_a_tool_call_keeps_it_with_its_result(hw, fake):
    h = await hw()
    ids = await run_tools(h, fake, dump("a", 2), dump("b", 2))
    context = await h.context()
    call_a = next(m[0] for m in context if m[1] == "tool_call")
    await h.session.command(h.root, f"/mark m --at {call_a}")
    await h.session.command(h.root, "/rewind m")
    after = keys(await h.context())
    assert after[-2:] == [call_a, ids["a"]]
    assert ids["b"] not in after
    with pytest.raises(CommandError, match="not in this agent's context"):
        await h.session.command(h.root, f"/mark n --at {ids['b']}")


def test_log_words_of_a_fork_at_and_a_mark_at():
    from ikigai_tui.cli.event_words import event_line
    from ikigai_tui.core.events import Event

    fork = Event(20, "a", "fork", {"child": "b1", "mark": None, "at_event": 7}, 0.0)
    assert event_line(fork, {}) == "#20 fork: forked child b1 up to #7"
    mark = Event(21, "a", "mark", {"name": "here", "at": 8, "entry": 7}, 0.0)
    assert event_line(mark, {}) == "#21 mark: mark here at #7"
