"""Commands (SPEC §4) on their happy paths, outputs exact: marks and moving a mark,
/rewind, /clear, /marks, /forget, /remember and /undo, /model, /system, pins, /help,
/exit, /context and /agents; every command recorded in the log; and from a script, the
outputs on stdout with /exit stopping the script.
"""

from __future__ import annotations

import json
import re

import pytest

from ikigai_tui.core.commands.registry import REGISTRY
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.core.replay.request import DEFAULT_SYSTEM_PROMPT
from tests.integration.session_helpers import ids, talk


async def kinds_of(session, agent_id: str) -> list[str]:
    return [e.kind for e in await session.store.events(agent_id)]


# -- happy paths, exact outputs ----------------------------------------------------


async def test_mark_and_remark_moves(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    assert (await session.command(root, "/mark A")).lines == ["Checkpoint 'A' created."]
    assert (await session.command(root, "/mark")).lines == ["Checkpoint created."]
    r = await session.replayer(root)
    assert [m.label for m in r.valid_marks()][0] == "A"
    assert r.mark_position(r.find_mark("A")) == 2
    await talk(session, root, "two")
    moved = await session.command(root, "/mark A")
    assert moved.lines[0].startswith("Checkpoint 'A' created")
    assert "position 2" in moved.lines[0]
    r = await session.replayer(root)
    assert r.mark_position(r.find_mark("A")) == 4
    # Only one mark named A; the unnamed one stays.
    labels = [m.label for m in r.valid_marks()]
    assert labels.count("A") == 1 and len(labels) == 2
    # Rewinding to A now keeps both turns.
    await talk(session, root, "three")
    assert (await session.command(root, "/rewind A")).lines == ["Rewound to 'A'."]
    assert len(await ids(session, root)) == 4


async def test_rewind_default_and_named(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    await session.command(root, "/mark A")
    kept = await ids(session, root)
    await talk(session, root, "two")
    await session.command(root, "/mark B")
    at_b = await ids(session, root)
    await talk(session, root, "three")
    assert (await session.command(root, "/rewind")).lines == ["Rewound to 'B'."]
    assert await ids(session, root) == at_b
    # B itself stays valid.
    r = await session.replayer(root)
    assert [m.name for m in r.valid_marks()] == ["A", "B"]
    assert (await session.command(root, "/rewind A")).lines == ["Rewound to 'A'."]
    assert await ids(session, root) == kept
    r = await session.replayer(root)
    assert [m.name for m in r.valid_marks()] == ["A"]
    assert "rewind" in await kinds_of(session, root)


async def test_clear_and_clear_mark(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    await session.command(root, "/mark A")
    kept = await ids(session, root)
    await talk(session, root, "two")
    assert (await session.command(root, "/clear A")).lines == ["Rewound to 'A'."]
    assert await ids(session, root) == kept
    assert (await session.command(root, "/clear")).lines == ["Context cleared."]
    r = await session.replayer(root)
    assert r.messages() == [] and r.valid_marks() == []
    # The history is still in the log.
    assert (await kinds_of(session, root)).count("user") == 2


async def test_marks_listing(session):
    root = session.tree.root.id
    assert (await session.command(root, "/marks")).lines == ["No marks."]
    await talk(session, root, "one")
    await session.command(root, "/mark A")
    await talk(session, root, "two")
    await session.command(root, "/mark B")
    out = await session.command(root, "/marks")
    assert len(out.lines) == 2
    assert out.lines[0].startswith("A  at position 2")
    assert out.lines[1].startswith("B  at position 4")
    assert out.data == [("A", 2), ("B", 4)]
    await session.command(root, "/rewind A")
    assert [line.split()[0] for line in (await session.command(root, "/marks")).lines] == ["A"]


async def test_forget_remember_undo(session):
    root = session.tree.root.id
    for text in ("one", "two", "three"):
        await talk(session, root, text)
    all_ids = await ids(session, root)
    assert len(all_ids) == 6
    u1, a1, u2, a2, u3, a3 = all_ids
    out = await session.command(root, f"/forget --ids {u2},{a2}")
    assert out.lines == ["Forgot 2 messages."]
    assert await ids(session, root) == [u1, a1, u3, a3]
    out = await session.command(root, f"/forget --ids {a1}")
    assert out.lines == ["Forgot 1 message."]
    out = await session.command(root, f"/remember --ids={u1},{u3}")
    assert out.lines == ["Kept 2 messages; forgot 1."]
    assert await ids(session, root) == [u1, u3]
    # /undo walks back one operation at a time.
    assert (await session.command(root, "/undo")).lines[0].startswith("Undid /remember")
    assert await ids(session, root) == [u1, u3, a3]
    assert (await session.command(root, "/undo")).lines[0].startswith("Undid /forget")
    assert await ids(session, root) == [u1, a1, u3, a3]
    await session.command(root, "/undo")
    assert await ids(session, root) == all_ids
    with pytest.raises(CommandError, match="nothing to undo"):
        await session.command(root, "/undo")


async def test_undo_clear(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    before = await ids(session, root)
    await session.command(root, "/clear")
    out = await session.command(root, "/undo")
    # Plain words: the command, when it was made, what comes back; no event ids.
    assert re.fullmatch(r"Undid /clear \(made \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\): 2 messages are back in the "
                        r"context \(0 -> 2 messages\)\.", out.lines[0]), out.lines
    assert await ids(session, root) == before


async def test_model_show_and_set_same(session):
    root = session.tree.root.id
    assert (await session.command(root, "/model")).lines == ["Model: offline"]
    before = await session.store.count_events()
    assert (await session.command(root, "/model offline")).lines == ["Model is already offline."]
    assert await session.store.count_events() == before + 1  # only the command record


async def test_system_show_and_set(session):
    root = session.tree.root.id
    out = await session.command(root, "/system")
    assert out.lines == [f"System prompt (default): {DEFAULT_SYSTEM_PROMPT}"]
    out = await session.command(root, "/system Be terse. Don't ramble.")
    assert out.lines == ["System prompt set."]
    assert (await session.command(root, "/system")).lines == ["System prompt: Be terse. Don't ramble."]
    assert (await session.replayer(root)).system == "Be terse. Don't ramble."


async def test_pin_pins_unpin(session):
    root = session.tree.root.id
    assert (await session.command(root, "/pins")).lines == ["No pins."]
    assert (await session.command(root, "/pin always answer in French")).lines == ["Pinned #1."]
    assert (await session.command(root, '/pin "second note"')).lines == ["Pinned #2."]
    listed = await session.command(root, "/pins")
    tokens = listed.data
    assert listed.lines == [f"1. always answer in French  ({tokens[0]} tokens)",
                            f"2. second note  ({tokens[1]} tokens)"]
    assert tokens[0] > tokens[1] > 0  # each counted for the agent's model
    assert (await session.command(root, "/unpin 1")).lines == ["Unpinned #1."]
    assert (await session.command(root, "/pins")).lines == [f"1. second note  ({tokens[1]} tokens)"]
    assert (await session.replayer(root)).pins == ["second note"]
    # Pins are not context messages.
    assert await ids(session, root) == []


async def test_help(session):
    root = session.tree.root.id
    out = await session.command(root, "/help")
    assert len(out.lines) == len(list(REGISTRY))
    for spec in REGISTRY:
        assert any(line.startswith(spec.usage) for line in out.lines), spec.name
    out = await session.command(root, "/help fork")
    assert out.lines[0] == ("/fork [MARK] [--at ID] [--model M] [--name N] [--mail wake|manual] [--report] "
                            "[PROMPT]")
    assert "  The LLM may call it." in out.lines
    out = await session.command(root, "/help /undo")
    assert out.lines[0] == "/undo [--to ID]"
    assert "  Human only." in out.lines


async def test_exit_and_context_and_agents(session):
    root = session.tree.root.id
    out = await session.command(root, "/exit")
    assert out.exit is True and out.lines == []
    await talk(session, root, "hi")
    out = await session.command(root, "/context")
    # Rounded as the gauge rounds (core/measure_words.sent_text), the window first.
    w = out.data
    assert out.lines[0].startswith(f"Sent: ~{format_tokens(w.tokens)} of 100K window · 1% of 200K, normal")
    assert "estimated for offline" in out.lines[0]
    assert any(line.strip().startswith("window") and "(2 messages)" in line for line in out.lines)
    assert any(line.startswith("Window: 100,000 tokens; starts at message") for line in out.lines)
    out = await session.command(root, "/agents")
    assert len(out.lines) == 1 and out.lines[0].startswith("root (")
    assert "<- you" in out.lines[0]


async def test_command_is_recorded(session):
    root = session.tree.root.id
    await session.command(root, "/mark A")
    events = await session.store.events(root)
    assert [e.kind for e in events] == ["command", "mark"]
    assert events[0].payload["text"] == "/mark A"
    assert events[0].payload["source"] == "human"
    assert events[0].payload["output"] == ["Checkpoint 'A' created."]


def test_cli_outputs_and_exit_stops_the_script(ikigai, tmp_path):
    db = str(tmp_path / "exit.db")
    script = tmp_path / "script.txt"
    script.write_text("/mark A\nhello\n/marks\n/clear A\n/clear\n/exit\n/mark B\nnever said\n")
    done = ikigai("--db", db, "run", "--script", str(script))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Checkpoint 'A' created."
    assert lines[1].startswith('Offline model here. You said: "hello"')
    assert lines[2].startswith("A  at position 0")
    assert lines[3:] == ["Rewound to 'A'.", "Context cleared."]
    events = json.loads(ikigai("--db", db, "log", "--json").stdout)
    texts = [e["payload"].get("text") or e["payload"].get("content") for e in events]
    assert "/mark B" not in texts and "never said" not in texts
    assert [e["kind"] for e in events].count("mark") == 1
