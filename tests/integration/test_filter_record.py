"""What a filter records (issue 13, item 22): besides its ids, the command that made it and
the context's size before and after (messages and tokens); `/undo`, `log` and `export`
show them."""

from __future__ import annotations

import json
import re

from tests.integration.session_helpers import ids, talk


async def test_the_event_keeps_the_command_and_the_sizes(session):
    root = session.tree.root.id
    for text in ("one", "two", "three"):
        await talk(session, root, text)
    before = await ids(session, root)
    tokens = (await session.measure(root)).tokens
    await session.command(root, f"/remember --ids {before[0]}-{before[1]}")
    [filt] = [e for e in await session.store.events(root) if e.kind == "filter"]
    assert filt.payload["command"] == f"/remember --ids {before[0]}-{before[1]}"
    assert filt.payload["before"] == {"messages": 6, "tokens": tokens}
    assert filt.payload["after"]["messages"] == 2
    # the tokens after are those of the request that is sent now
    assert abs(filt.payload["after"]["tokens"] - (await session.measure(root)).tokens) <= 4


def test_log_and_export_show_the_record(ikigai, tmp_path):
    db = tmp_path / "l.db"
    script = tmp_path / "s.txt"
    script.write_text("one\ntwo\nthree\n/forget --ids 4-5\n/undo\n")
    done = ikigai("--db", str(db), "run", "--script", str(script))
    assert done.returncode == 0, done.stderr
    undo_line = done.stdout.splitlines()[-1]
    assert re.fullmatch(r"Undid /forget --ids 4-5 \(made \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\): 2 messages are "
                        r"back in the context \(4 -> 6 messages\)\. It had taken the context from "
                        r"6 messages \(~[\d,]+ tokens\) to 4 \(~[\d,]+\)\.", undo_line), undo_line

    log = ikigai("--db", str(db), "log").stdout.splitlines()
    [filter_line] = [line for line in log if " filter: " in line]
    assert re.fullmatch(r"#\d+ filter: forgot 2 messages by /forget --ids 4-5; context 6 -> 4 "
                        r"messages, ~[\d,]+ -> ~[\d,]+ tokens \(ids 4-5\)", filter_line), filter_line
    filter_id = filter_line.split()[0]
    [undo_event] = [line for line in log if " undo: " in line]
    assert undo_event.endswith(f"undo: reverses filter {filter_id}: forgot 2 messages by "
                               f"/forget --ids 4-5; " + filter_line.split("; ", 1)[1].split(" (ids")[0])

    events = json.loads(ikigai("--db", str(db), "log", "--json").stdout)
    [payload] = [e["payload"] for e in events if e["kind"] == "filter"]
    assert payload["command"] == "/forget --ids 4-5" and payload["ids"] == [4, 5]
    assert payload["before"]["messages"] == 6 and payload["after"]["messages"] == 4

    export = ikigai("--db", str(db), "export").stdout
    assert re.search(r"> Context change: forgot 2 messages by /forget --ids 4-5; context 6 -> 4 "
                     r"messages, ~[\d,]+ -> ~[\d,]+ tokens\.", export), export
    assert "> `/undo` — Undid /forget --ids 4-5 (made 20" in export
    data = json.loads(ikigai("--db", str(db), "export", "--format", "json").stdout)
    [exported] = [e for e in data["events"] if e["kind"] == "filter"]
    assert exported["payload"] == payload
