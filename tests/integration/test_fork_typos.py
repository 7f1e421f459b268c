"""/fork typos (issue 13, item 7): a first word that looks like a mark but is not a valid
one is an error naming it and listing the valid marks, never the prompt; options are
never swallowed into the prompt; a prompt that starts with such a word goes after --."""

from __future__ import annotations

import pytest

from ikigai_tui.core.errors import CommandError
from tests.integration.session_helpers import fork, msgs, talk


async def _prompt_of(session, child: str) -> list[str]:
    return [content for _i, kind, content in await msgs(session, child) if kind == "user"]


@pytest.mark.parametrize("args, expected", [
    ("nosuchmark hello", "no mark named 'nosuchmark'. Valid marks: alpha, brief."),
    ("R --name kiwis Study kiwis", "no mark named 'R'. Valid marks: alpha, brief."),
    ("R", "no mark named 'R'"),
    ("R --model offline", "no mark named 'R'"),
    ("brif do the research", "no mark named 'brif'. Valid marks: alpha, brief. Did you mean 'brief'?"),
    ("Alpha go on then", "Did you mean 'alpha'?"),
    ("Study kiwis --name kiwis", "'--name' inside the prompt: options go before it"),
    ("brief write it up --model offline", "'--model' inside the prompt"),
])
async def test_mistyped_marks_and_stray_options_are_errors(session, args, expected):
    root = session.tree.root.id
    await talk(session, root, "hello")
    await session.command(root, "/mark alpha")
    await talk(session, root, "the brief")
    await session.command(root, "/mark brief")
    count, agents = await session.store.count_events(), len(session.tree)
    with pytest.raises(CommandError) as err:
        await session.command(root, f"/fork {args}")
    assert expected in str(err.value)
    assert await session.store.count_events() == count and len(session.tree) == agents


async def test_without_marks_the_error_says_so_and_how_to_send_the_words(session):
    root = session.tree.root.id
    with pytest.raises(CommandError, match=r"no mark named 'nosuchmark'\. There are no valid "
                                           r"marks\. To give a prompt that starts with "
                                           r"'nosuchmark', put -- before it"):
        await session.command(root, "/fork nosuchmark hello")
    child = await fork(session, root, "-- nosuchmark hello")
    await session.wait_idle()
    assert await _prompt_of(session, child) == ["nosuchmark hello"]


@pytest.mark.parametrize("args, prompt", [
    ("Study the kiwis of New Zealand", "Study the kiwis of New Zealand"),
    ("--name kiwis Study kiwis", "Study kiwis"),
    ("brief --name k2 Study kiwis", "Study kiwis"),
    ("don't stop", "don't stop"),
    ("-- --name is text here", "--name is text here"),
])
async def test_prompts_that_read_as_prompts_still_fork(session, args, prompt):
    root = session.tree.root.id
    await talk(session, root, "hello")
    await session.command(root, "/mark brief")
    await talk(session, root, "the brief")
    child = await fork(session, root, args)
    await session.wait_idle()
    assert (await _prompt_of(session, child))[-1] == prompt


async def test_run_reports_a_mistyped_mark_and_starts_nothing(ikigai, tmp_path):
    db = tmp_path / "f.db"
    script = tmp_path / "s.txt"
    script.write_text("hello\n/mark R1\n/fork R --name kiwis Study kiwis\n/agents\n")
    done = ikigai("--db", str(db), "run", "--script", str(script))
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("Error: no mark named 'R'. Valid marks: R1. ")
    assert "kiwis" not in done.stdout
    assert len(ikigai("--db", str(db), "agents").stdout.strip().splitlines()) == 1
