"""The context's history (issue 28, item 4): /history lists every context change of the
agent (who, when, what, the sizes before and after, what is undone), `/undo --to ID` takes
the context back to just before one in one step, and /context and `context --json` say how
the context got where it is (the oldest message, the compactions, the restores, the
changes the LLM asked for and how many were applied)."""

from __future__ import annotations

import json
import re

import pytest

from ikigai_tui.core.errors import CommandError
from tests.integration.session_helpers import ids, talk


async def _chat(session, n: int) -> tuple[str, list[int]]:
    root = session.tree.root.id
    for i in range(n):
        await talk(session, root, f"message {i}")
    return root, await ids(session, root)


async def test_history_lists_each_change_with_who_sizes_and_undone(session):
    root, before = await _chat(session, 3)  # 6 messages
    await session.command(root, "/mark A")
    await session.command(root, f"/forget --ids {before[0]}")
    await session.command(root, "/clear", source="llm")
    await session.command(root, "/undo")
    out = await session.command(root, "/history")
    changes = out.data
    assert [(c.kind, c.who, c.before, c.after) for c in changes] == [
        ("filter", "you", 6, 5), ("clear", "the LLM", 5, 0)]
    assert changes[0].undone_by is None and changes[1].undone_by is not None
    assert changes[0].text == f"/forget --ids {before[0]}" and changes[1].text == "/clear"
    assert re.search(rf"#{changes[1].id} .* the LLM +/clear +· 5 -> 0 messages +\(undone by #\d+\)",
                     "\n".join(out.lines)), out.lines
    assert all(c.created_at for c in changes)


async def test_undo_to_takes_the_context_back_to_just_before_a_change(session):
    root, before = await _chat(session, 3)
    await session.command(root, f"/forget --ids {before[0]}")
    first = (await session.command(root, "/history")).data[0].id
    await session.command(root, "/pin keep")
    await talk(session, root, "later")  # messages after the change stay
    await session.command(root, "/clear")
    out = await session.command(root, f"/undo --to {first}")
    assert out.lines[0].startswith(f"Undid 3 changes back to /forget --ids {before[0]}")
    after = await ids(session, root)
    assert after[:6] == before and len(after) == 8  # all back, and the later exchange
    replayer = await session.replayer(root)
    assert replayer.pins == []
    listed = (await session.command(root, "/history")).data
    assert all(c.undone_by is not None for c in listed)
    # nothing to take back to: one line, nothing written
    count = len(replayer.history)
    for bad, said in ((f"/undo --to {first}", "already undone"),
                      (f"/undo --to {before[1]}", "is not a context change"),
                      ("/undo --to x", "--to takes the id")):
        with pytest.raises(CommandError, match=said):
            await session.command(root, bad)
    assert len((await session.replayer(root)).history) == count


async def test_context_says_how_the_context_got_here(session):
    root, before = await _chat(session, 4)
    await session.command(root, "/compact --keep 1")
    await session.command(root, "/forget --ids " + str((await ids(session, root))[-1]))
    await session.command(root, "/undo")
    await session.command(root, "/clear", source="llm")
    await session.command(root, "/undo")
    lines = (await session.command(root, "/context")).lines
    text = "\n".join(lines)
    assert re.search(r"oldest message +#\d+, made at \d\d:\d\d, just now", text), text
    assert re.search(r"compactions +1 in effect: #\d+ at \d\d:\d\d, just now, [\d,]+ -> [\d,]+ "
                     r"tokens \(ratio [\d.]+\)", text), text
    assert re.search(r"the LLM's asks +1 context change asked for, 1 applied", text), text


def test_context_json_has_the_history(ikigai, tmp_path):
    db = ("--db", str(tmp_path / "h.db"))
    done = ikigai(*db, "run", input="one\ntwo\nthree\n/compact --keep 1\n/restore 1\n", env={})
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(ikigai(*db, "context", "--json").stdout)["context_history"]
    assert len(data["compactions"]) == 1 and data["compactions"][0]["before"] > 0
    assert data["oldest"] is not None and data["oldest_at"] > 0
    assert (data["llm_asked"], data["llm_accepted"]) == (0, 0)
