"""Several processes append to one database at once: nothing is lost, nothing doubled."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid

from ikigai_tui.core.events import AgentRecord, WriteBatch
from ikigai_tui.store.sqlite.store import Store
from tests.integration.processes import (
    APPENDER, agent_rows, check_conversation, finish_proc, finish_with_input, log_rows, proc_env,
    start_ikigai,
)

MESSAGES = 30


def test_two_cli_runs_on_root_and_a_forked_child_at_once_lose_nothing(tmp_path):
    db = tmp_path / "shared.db"
    setup = start_ikigai(db, "run", stdin=subprocess.PIPE)
    out, err = setup.communicate("first words before the fork\n/fork --name side\n", timeout=60)
    assert setup.returncode == 0, err
    agents = agent_rows(db)
    root_id, side_id = agents["root"][0], agents["side"][0]
    assert agents["side"][1] == root_id

    alpha = [f"alpha message {i} {uuid.uuid4().hex[:8]}" for i in range(MESSAGES)]
    beta = [f"beta message {i} {uuid.uuid4().hex[:8]}" for i in range(MESSAGES)]
    (tmp_path / "alpha.txt").write_text("\n".join(alpha) + "\n")
    (tmp_path / "beta.txt").write_text("\n".join(beta) + "\n")
    # A small delay per streamed word keeps both processes writing at the same time.
    env = proc_env(IKIGAI_OFFLINE_DELAY="0.001")
    procs = [
        start_ikigai(db, "run", "--script", str(tmp_path / "alpha.txt"), env=env),
        start_ikigai(db, "run", "--agent", "side", "--script", str(tmp_path / "beta.txt"), env=env),
    ]
    results = [finish_proc(p) for p in procs]
    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 0, err[-3000:]
        assert "Traceback" not in err and "Error" not in err, err[-3000:]
        assert out.count("Offline model here.") == MESSAGES

    rows = log_rows(db)
    check_conversation(rows, root_id, alpha)
    check_conversation(rows, side_id, beta)
    # Each agent's messages are its own: none of alpha went to side or the other way.
    root_users = {p["content"] for _, a, k, p in rows if a == root_id and k == "user"}
    side_users = {p["content"] for _, a, k, p in rows if a == side_id and k == "user"}
    assert not root_users & set(beta) and not side_users & set(alpha)
    assert agent_rows(db).keys() == {"root", "side"}

    # The two writers really overlapped in time (otherwise this test proves little).
    alpha_ids = [i for i, a, k, p in rows if a == root_id and p.get("content") in set(alpha)]
    beta_ids = [i for i, a, k, p in rows if a == side_id and p.get("content") in set(beta)]
    assert min(alpha_ids) < max(beta_ids) and min(beta_ids) < max(alpha_ids)

    # Both contexts read back through the CLI, each with all of its conversation.
    for agent, texts in (("root", alpha), ("side", beta)):
        proc = start_ikigai(db, "context", "--agent", agent, "--json")
        out, err = finish_proc(proc)
        assert proc.returncode == 0, err
        contents = [m["content"] for m in json.loads(out)["messages"] if m["role"] == "user"]
        assert contents[0] == "first words before the fork"
        assert [c for c in contents if c in set(texts)] == texts


def test_two_appender_processes_group_committing_to_one_agent_lose_nothing(tmp_path):
    db = tmp_path / "shared.db"

    async def setup() -> str:
        store = await Store.open(db)
        batch = WriteBatch()
        batch.new_agents.append(AgentRecord("shared", None, "shared", "offline", "idle",
                                            time.time(), None, None))
        await store.write(batch)
        await store.close()
        return "shared"

    agent = asyncio.run(setup())
    writers, count = 4, 40
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, str(APPENDER), "batches", str(db), tag, "--agent", agent,
             "--writers", str(writers), "--count", str(count), "--go", str(go),
             "--pause", "0.002"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in ("P", "Q")
    ]
    try:
        for proc in procs:  # both have the database open before either writes
            assert proc.stdout is not None
            assert proc.stdout.readline() == "READY\n", finish_proc(proc)[1][-3000:]
        go.touch()
        reported: dict[str, dict[int, tuple[str, str]]] = {}
        for tag, proc in zip(("P", "Q"), procs):
            out, err = finish_proc(proc)
            assert proc.returncode == 0, err[-3000:]
            lines = out.splitlines()
            assert lines[-1] == "DONE"
            reported[tag] = {}
            for line in lines[:-1]:
                _, event_id, agent_id, kind, _digest = line.split(" ")
                assert agent_id == agent
                reported[tag][int(event_id)] = (agent_id, kind)
            assert len(reported[tag]) == 2 * writers * count
    finally:
        for proc in procs:  # never leave a writer waiting for the go file
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    assert not set(reported["P"]) & set(reported["Q"]), "the processes got the same ids"
    rows = log_rows(db)
    assert len(rows) == 4 * writers * count
    by_id = {i: (a, k, p) for i, a, k, p in rows}
    for tag in ("P", "Q"):
        for event_id, (agent_id, kind) in reported[tag].items():
            assert by_id[event_id][:2] == (agent_id, kind)
    # Every question exactly once, immediately followed by its own answer.
    contents = [p["content"] for _, _, _, p in rows]
    assert len(contents) == len(set(contents))
    for n, (_, _, kind, payload) in enumerate(rows):
        if kind == "user":
            answer = payload["content"].replace("question", "answer")
            assert rows[n + 1][2] == "assistant" and rows[n + 1][3]["content"] == answer
    for tag in ("P", "Q"):
        for w in range(writers):
            for j in range(count):
                assert f"{tag} writer {w} question {j}" in contents
    # The two processes interleaved.
    p_ids, q_ids = sorted(reported["P"]), sorted(reported["Q"])
    assert p_ids[0] < q_ids[-1] and q_ids[0] < p_ids[-1]


def test_cli_runs_started_together_on_a_brand_new_database_all_succeed(tmp_path):
    """`ikigai run` started several times at once on a database that does not exist yet
    (a race, so tried several times): the file is created and migrated once, one root
    agent is created, every input is answered."""
    starters = 4
    for attempt in range(10):
        db = tmp_path / f"new{attempt}.db"
        procs = [start_ikigai(db, "run", stdin=subprocess.PIPE) for _ in range(starters)]
        outs = [finish_with_input(p, f"hello from process {k} try {attempt}\n")
                for k, p in enumerate(procs)]
        for proc, (out, err) in zip(procs, outs):
            assert proc.returncode == 0, f"attempt {attempt}: {err[-3000:]}"
            assert "Offline model here." in out
        agents = agent_rows(db)
        assert list(agents) == ["root"], f"attempt {attempt}: agents {agents}"
        rows = log_rows(db)
        users = sorted(p["content"] for _, _, k, p in rows if k == "user")
        assert users == [f"hello from process {k} try {attempt}" for k in range(starters)]
