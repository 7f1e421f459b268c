"""Tool calls in the scrollback (issue 25 item 4): one line per call, folded: the tool's
name, the argument that matters, how it ended (a command's exit status, an error,
stopped by the user) and its result's size; Ctrl+O shows calls and results whole; the
slash tool's call and result show as they always did."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.tools.running import STOPPED

from .conftest import SIZE, all_lines, idle, root_id, say, settle

BIG = "".join(f"line {n} of the file\n" for n in range(200))  # 200 lines, ~4.1K chars


async def add_calls(session, agent: str, calls: list[tuple[str, dict, str, dict]]) -> None:
    """Commit the calls of one reply (each a name, its arguments, its result's text and
    its result's other fields), then their results, in order, as the turn does."""
    batch = WriteBatch()
    for n, (name, arguments, _text, _extra) in enumerate(calls):
        batch.add(agent, "tool_call", {"call_id": f"c{n}", "name": name,
                                       "arguments": json.dumps(arguments)})
    events = await session.commit(batch)
    batch = WriteBatch()
    for n, (event, (_name, _args, text, extra)) in enumerate(zip(events, calls)):
        batch.add(agent, "tool_result", {"call_id": f"c{n}", "call_event": event.id,
                                         "content": text, "is_error": False, **extra})
    await session.commit(batch)


THREE = [
    ("read_file", {"path": "src/app.py"}, BIG, {}),
    ("bash", {"command": "make lint"}, "all clean\nexit status 0", {}),
    ("bash", {"command": "pytest -q tests/\necho done"}, "2 failed, 40 passed\nexit status 1",
     {"is_error": True}),
]


async def three_calls(session) -> None:
    """A question, then a reply's three calls: read_file, bash exit 0, bash exit 1."""
    root = root_id(session)
    await say(session, root, "Why does the build fail?")
    await add_calls(session, root, THREE)


def _tool_lines(app) -> list[str]:
    return [line.strip() for line in all_lines(app.panes.active.scrollback)
            if line.lstrip().startswith(("▸", "◂"))]


async def test_each_call_is_one_line_with_what_matters(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Look around.")
        await add_calls(session, root, [
            *THREE,
            ("list_files", {"glob": "src/**/*.py"}, "src/a.py\nsrc/b.py\n", {}),
            ("search_files", {"pattern": "def main", "glob": "**/*.py"}, "src/a.py:3:def main", {}),
            ("write_file", {"path": "notes.md", "content": "x" * 5000}, "Wrote 5000 bytes", {}),
            ("edit_file", {"path": "src/b.py", "old_text": "a", "new_text": "b"},
             "Error: the old text is not in src/b.py", {"is_error": True}),
            ("github__search", {"query": "ikigai bugs", "limit": 3}, "three issues", {}),
            ("files__list_roots", {}, "/a\n/b", {}),
            ("bash", {"command": "sleep 60"}, "tick\n" + STOPPED,
             {"is_error": True, "interrupted": True}),
            ("bash", {"command": "yes"}, "y\nkilled after 5 s (timeout)", {"is_error": True}),
        ])
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = _tool_lines(app)
        assert lines == [
            f"▸ read_file src/app.py · 200 lines · {len(BIG) / 1000:.1f}K chars",
            "▸ bash make lint · exit 0 · 1 line · 10 chars",
            "▸ bash pytest -q tests/… · exit 1 · 1 line · 20 chars",
            "▸ list_files src/**/*.py · 2 lines · 18 chars",
            "▸ search_files def main · 1 line · 19 chars",
            "▸ write_file notes.md · 1 line · 16 chars",
            "▸ edit_file src/b.py · error: the old text is not in src/b.py",
            "▸ github__search ikigai bugs · 1 line · 12 chars",
            "▸ files__list_roots · 2 lines · 5 chars",
            "▸ bash sleep 60 · stopped · 1 line · 5 chars",
            "▸ bash yes · killed after 5 s (timeout) · 1 line · 2 chars",
        ]
        shown = "\n".join(all_lines(app.panes.active.scrollback))
        assert "line 3 of the file" not in shown  # the results are folded away


async def test_ctrl_o_shows_calls_and_results_whole_and_folds_them_again(bench):
    async with bench.prep() as session:
        await three_calls(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        folded = all_lines(app.panes.active.scrollback)
        assert "▸ bash pytest -q tests/… · exit 1 · 1 line · 20 chars" in "\n".join(folded)
        assert "2 failed" not in "\n".join(folded)
        await pilot.press("ctrl+o")
        await idle(pilot)
        shown = "\n".join(all_lines(app.panes.active.scrollback))
        assert "line 199 of the file" in shown
        assert "2 failed, 40 passed" in shown and "exit status 1" in shown
        assert '"command": "pytest -q tests/\\necho done"' in shown  # the call's whole arguments
        await pilot.press("ctrl+o")
        await idle(pilot)
        assert all_lines(app.panes.active.scrollback) == folded


async def test_a_blank_line_ends_a_run_of_calls_not_each_call(bench):
    async with bench.prep() as session:
        await three_calls(session)
        await say(session, root_id(session), "And now?")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = all_lines(app.panes.active.scrollback)
        first = next(i for i, line in enumerate(lines) if "▸ read_file" in line)
        assert "▸ bash make lint" in lines[first + 1]
        assert "▸ bash pytest" in lines[first + 2]
        assert lines[first + 3] == ""
        assert "› And now?" in "\n".join(lines[first + 4:])


async def test_a_result_arriving_later_completes_its_call_line(bench):
    async with bench.prep() as session:
        await say(session, root_id(session), "Run it.")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session, root = app.session, root_id(app.session)
        batch = WriteBatch()
        batch.add(root, "tool_call", {"call_id": "c0", "name": "bash",
                                      "arguments": '{"command": "make"}'})
        [call] = await session.commit(batch)
        await idle(pilot)
        assert _tool_lines(app) == ["▸ bash make"]
        batch = WriteBatch()
        batch.add(root, "tool_result", {"call_id": "c0", "call_event": call.id,
                                        "content": "ok\nexit status 2", "is_error": True})
        await session.commit(batch)
        await idle(pilot)
        assert _tool_lines(app) == ["▸ bash make · exit 2 · 1 line · 3 chars"]


async def test_a_long_command_is_cut_so_its_status_stays_in_view(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Build.")
        await add_calls(session, root, [("bash", {"command": "make " + "target " * 40},
                                         "done\nexit status 0", {})])
    app = bench.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        [line] = _tool_lines(app)
        assert line.startswith("▸ bash make target") and "…" in line
        assert line.endswith("· exit 0 · 1 line · 5 chars")


async def test_the_slash_tool_still_shows_its_command_and_output(bench):
    async with bench.prep() as session:
        root = root_id(session)
        await say(session, root, "Fork.")
        await add_calls(session, root, [("slash", {"command": "fork", "args": "--name kid"},
                                         "Forked kid.", {})])
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert _tool_lines(app) == ["▸ slash /fork --name kid", "◂ Forked kid."]


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=["120x40", "80x24"])
@pytest.mark.parametrize("expanded", [False, True], ids=["folded", "expanded"])
def test_tool_calls_snapshot(bench, snap_compare, expanded, size):
    """Three calls of one reply: read_file, bash exit 0, bash exit 1 (its command two
    lines); folded, each is one line; with Ctrl+O, the calls and results whole."""
    bench.prepare(three_calls)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        if expanded:
            await pilot.press("ctrl+o")
            await idle(pilot)
        shown = "\n".join(all_lines(app.panes.active.scrollback))
        assert ("2 failed, 40 passed" in shown) is expanded
        assert ("▸ bash make lint · exit 0" in shown) is not expanded

    assert snap_compare(app, terminal_size=size, run_before=run_before)
