"""Synthetic event logs for the benchmarks, cached under benchmarks/data/.

A log is three agents, root -> child -> grandchild, as `/fork` writes them: the child is
forked from the root's whole context, the grandchild from the child's context after a
mark. Each agent's log is a realistic mix of turns (user, assistant, usage, and tool
rounds: tool_call + usage + tool_result whose `call_event` is the call's id), command
records, named marks (names re-used, which moves them), unnamed marks, rewinds to marks
that are valid at that point, and forget/remember filters of ids that are in the context
at that point. After each fork the parent keeps working, interleaved with the child.

`n` counts the rows that opening the grandchild reads: the root's rows up to and
including the first fork, the child's up to and including the second, and all of the
grandchild's. The parents' rows after their fork are extra (about 5% of n each).

The rows go through the real write path (Store.write, 10,000 events per batch) into a
schema created by Store.open, so ids are contiguous from 1 and created_at is set. A cached
log is keyed by n, GEN_VERSION and a hash of the product's migrations: a schema change
regenerates it. Bump GEN_VERSION whenever what this module writes changes (its texts: gen_text.py).

An independent model of the replay rules (gen_model.py, not the product's Replayer) tracks
each agent's context while generating: it picks valid rewind targets and filter ids, and it
gives the expected context of the grandchild, which the benchmark checks the product's
result against (ids in order).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import time
import uuid
from pathlib import Path

from gen_model import Model
from gen_text import Texts, run_of_words, vocabulary  # noqa: F401  (gen.vocabulary etc.: tui.py, preview.py)
from ikigai_tui.core.events import AgentRecord, WriteBatch
from ikigai_tui.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from ikigai_tui.store.sqlite.store import Store

GEN_VERSION = 4
DATA = Path(__file__).resolve().parent / "data"
BATCH = 10_000
EXTRA = 0.05  # each parent's rows after its fork, as a share of n
SHARES = (0.40, 0.30)  # root's and child's share of n (the grandchild has the rest)
MARK_NAMES = ("plan", "draft", "tests", "review", "spike", "fix", "ok", "before-refactor")


def schema_tag() -> str:
    """Changes whenever the product's schema does, so a cached log is never stale."""
    text = json.dumps([SCHEMA_VERSION, MIGRATIONS], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def cache_key(n: int) -> str:
    return f"log-{n}-v{GEN_VERSION}-s{schema_tag()}"


def db_path(n: int) -> Path:
    return DATA / f"{cache_key(n)}.db"


def meta_path(n: int) -> Path:
    return DATA / f"{cache_key(n)}.json"


def id_ranges(ids: list[int]) -> str:
    """[3, 5, 6, 7] -> "3,5-7": how a user would type the list."""
    parts, start, prev = [], None, None
    for i in ids:
        if start is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def ctx_digest(ids) -> str:
    h = hashlib.sha256()
    for i in ids:
        h.update(b"%d," % i)
    return h.hexdigest()


# -- the generator -----------------------------------------------------------------------


class Generator:
    def __init__(self, store: Store, seed: int) -> None:
        self.store = store
        self.rng = random.Random(seed)
        self.texts = Texts(self.rng)
        self.next_id = 1
        self.batch = WriteBatch()
        self.written = 0
        self.rows: dict[str, int] = {}
        self.models: dict[str, Model] = {}

    def new_id(self) -> str:
        return uuid.UUID(int=self.rng.getrandbits(128)).hex

    def add(self, agent: str, kind: str, payload: dict) -> int:
        i = self.next_id
        self.next_id += 1
        self.batch.add(agent, kind, payload)
        self.rows[agent] = self.rows.get(agent, 0) + 1
        return i

    async def flush(self, force: bool = False) -> None:
        if not self.batch.events and not self.batch.new_agents:
            return
        if not force and len(self.batch.events) < BATCH:
            return
        batch, self.batch = self.batch, WriteBatch()
        events = await self.store.write(batch)
        if events:
            assert events[0].id == self.written + 1 and events[-1].id == self.next_id - 1, \
                "the store assigned other ids than the generator"
            self.written = events[-1].id

    def command(self, agent: str, text: str, output: str) -> None:
        self.add(agent, "command", {"text": text, "source": "human", "output": [output]})

    # One step: a turn or a command, never more than `room` rows.
    def step(self, agent: str, room: int) -> None:
        m, rng, t = self.models[agent], self.rng, self.texts
        # Shares of the steps (the rest are turns); a command whose precondition does not
        # hold (no mark to rewind to, empty context) becomes a turn.
        x = rng.random() if room >= 2 else 1.0
        if x < 0.05:
            name = rng.choice(MARK_NAMES)
            self.command(agent, f"/mark {name}", f"Checkpoint '{name}' created.")
            m.mark(self.add(agent, "mark", {"name": name}), name)
            return
        if x < 0.08:
            self.command(agent, "/mark", "Checkpoint created.")
            m.mark(self.add(agent, "mark", {"name": None}), None)
            return
        if x < 0.095:
            if m.marks:
                valid = list(m.marks.items())
                y = rng.random()
                if y < 0.7:
                    key, target = valid[-1]
                elif y < 0.97:
                    key, target = rng.choice(valid[-5:])
                else:
                    key, target = rng.choice(valid)
                name = key if isinstance(key, str) else None
                label = name if name is not None else f"#{target}"
                self.command(agent, f"/rewind {label}", f"Rewound to '{label}'.")
                self.add(agent, "rewind", {"mark": name, "mark_event": target})
                m.rewind(target)
                return
        elif x < 0.12:
            ids = m.sample_ids(rng, rng.randint(1, 4))
            if ids:
                listed = id_ranges(ids)
                self.command(agent, f"/forget --ids {listed}", f"Forgot {len(ids)} messages.")
                self.add(agent, "filter", {"mode": "forget", "ids": ids})
                m.drop(set(ids))
                return
        elif x < 0.1201:
            if m.ctx:
                keep = [i for _, i in zip(range(rng.randint(500, 3000)), reversed(m.ctx))]
                keep = sorted(set(keep) | set(m.sample_ids(rng, 5)))
                listed = id_ranges(keep)
                self.command(agent, f"/remember --ids {listed}", f"Kept {len(keep)} messages.")
                self.add(agent, "filter", {"mode": "remember", "ids": keep})
                keep_set = set(keep)
                m.drop({i for i in m.ctx if i not in keep_set})
                return
        elif x < 0.14:
            self.command(agent, rng.choice(["/context", "/marks", "/agents"]), "ok")
            return
        # A turn: user, then maybe tool rounds, then the answer.
        m.message(self.add(agent, "user", {"content": t.pick(t.user)}), "user")
        left = room - 1
        usage = {"model": "offline", "input_tokens": rng.randint(100, 90_000),
                 "output_tokens": rng.randint(10, 2000)}
        if rng.random() < 0.35:
            for _ in range(rng.randint(1, 3)):
                k = 1 if rng.random() < 0.8 else 2
                if left < 2 * k + 1:
                    break
                calls = []
                for _ in range(k):
                    call_id = f"call_{self.rng.getrandbits(48):012x}"
                    args = t.pick(t.args)
                    i = self.add(agent, "tool_call", {"call_id": call_id, "name": "read_file",
                                                      "arguments": args})
                    m.message(i, "tool_call")
                    calls.append((i, call_id))
                self.add(agent, "usage", dict(usage))
                for i, call_id in calls:
                    r = self.add(agent, "tool_result", {"call_id": call_id, "call_event": i,
                                                        "content": t.pick(t.result),
                                                        "is_error": False})
                    m.message(r, "tool_result", call=i)
                left -= 2 * k + 1
        if left >= 2:
            m.message(self.add(agent, "assistant", {"content": t.pick(t.assistant)}), "assistant")
            self.add(agent, "usage", dict(usage))
        elif left == 1:
            m.message(self.add(agent, "assistant", {"content": t.pick(t.assistant)}), "assistant")

    async def run_until(self, target: str, count: int, others: dict[str, int]) -> None:
        """Steps for `target` until it has `count` rows; `others` keep working alongside."""
        goal = {a: self.rows.get(a, 0) + extra for a, extra in others.items()}
        while self.rows.get(target, 0) < count:
            self.step(target, count - self.rows.get(target, 0))
            for a in others:
                # Keep the others' progress proportional to the target's.
                share = self.rows[target] / count
                want = int(goal[a] - others[a] * (1 - share))
                while self.rows[a] < want:
                    self.step(a, 1_000_000)
            await self.flush()

    def fork(self, parent: str, child: str, mark: tuple[str, int] | None) -> int:
        """What /fork writes: parent's command + fork, the child record, the child's fork."""
        label, mark_event = mark if mark else (None, None)
        self.command(parent, f"/fork {label or ''}".strip(), f"Forked. Child: {child[:6]}")
        fork_id = self.add(parent, "fork", {"child": child, "mark": label, "mark_event": mark_event})
        self.batch.new_agents.append(AgentRecord(child, parent, None, "offline", "idle",
                                                 0.0, fork_id, 100_000))
        self.add(child, "fork", {"parent": parent, "parent_event": fork_id, "mark": label,
                                 "mark_event": mark_event, "model": "offline",
                                 "budget": 100_000})
        self.models[child] = self.models[parent].child(mark_event)
        return fork_id


async def _generate(n: int, path: Path, seed: int) -> dict:
    store = await Store.open(path)
    try:
        g = Generator(store, seed)
        root, child, grand = g.new_id(), g.new_id(), g.new_id()
        g.batch.new_agents.append(AgentRecord(root, None, "root", "offline", "idle",
                                              time.time(), None, 100_000))
        g.models[root] = Model()
        g.rows = {root: 0, child: 0, grand: 0}
        n_root = int(n * SHARES[0])
        n_child = int(n * SHARES[1])
        n_grand = n - n_root - n_child
        extra = int(n * EXTRA)
        # The root alone, then its fork (2 rows of the root's are the /fork itself).
        await g.run_until(root, n_root - 2, {})
        fork1 = g.fork(root, child, None)
        # The child and, alongside, the root; the child forks from its earliest valid mark.
        await g.run_until(child, n_child - 2, {root: extra})
        cm = g.models[child]
        if cm.marks:
            key, ev = next(iter(cm.marks.items()))
            mark = (key if isinstance(key, str) else f"#{ev}", ev)
        else:
            mark = None
        fork2 = g.fork(child, grand, mark)
        # The grandchild (its fork row counts) and, alongside, the child.
        await g.run_until(grand, n_grand, {child: extra})
        await g.flush(force=True)
        gm = g.models[grand]
        counted = g.rows[grand] + n_root + n_child
        assert counted == n, (counted, n)
        size = await store._db.execute_fetchall("SELECT SUM(LENGTH(payload)) FROM events")
        total = await store.count_events()
        await store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return {
            "n": n, "gen_version": GEN_VERSION, "seed": seed, "total_rows": total,
            "avg_payload_bytes": round(list(size)[0][0] / total),
            "agents": {"root": root, "child": child, "grandchild": grand},
            "lineage": [[root, fork1 + 1], [child, fork2 + 1], [grand, None]],
            "rows_read": {"root": n_root, "child": n_child, "grandchild": g.rows[grand]},
            "fork2_mark": mark,
            "expected_ctx_len": len(gm.ctx), "expected_ctx_digest": ctx_digest(gm.ctx),
        }
    finally:
        await store.close()


def ensure(n: int, seed: int = 20240601, log=print) -> dict:
    """The cached database of size n (generated when missing); returns its description."""
    path, meta = db_path(n), meta_path(n)
    if path.exists() and meta.exists():
        return json.loads(meta.read_text())
    DATA.mkdir(parents=True, exist_ok=True)
    for stale in DATA.glob(f"log-{n}-v*"):  # other generator or schema versions
        if not stale.name.startswith(f"{cache_key(n)}."):
            stale.unlink()
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    log(f"generating {n:,} events -> {path.relative_to(DATA.parent.parent)} ...")
    t0 = time.perf_counter()
    info = asyncio.run(_generate(n, tmp, seed))
    info["generated_in_s"] = round(time.perf_counter() - t0, 1)
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, path)
    meta.write_text(json.dumps(info, indent=1))
    log(f"  done in {info['generated_in_s']} s ({info['total_rows']:,} rows, "
        f"avg payload {info['avg_payload_bytes']} B)")
    return info


if __name__ == "__main__":
    import sys

    for arg in sys.argv[1:] or ["100000"]:
        ensure(int(arg))
