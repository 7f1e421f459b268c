"""The local matcher's evaluation set, run through the real matcher (benchmarks/matching.py
reports it, benchmarks/matching_tune.py tunes on its other half).

The sets (benchmarks/eval/matching_set.json, topics of 4-12 exchanges, and
matching_set_digressions.json, topics of 2-12) are generated from chatterbot-corpus
dialogs: see benchmarks/eval/make_matching_set.py for where they come from and how they
are mixed.
Each conversation becomes one agent of a temporary database (so words go through the
log's full-text index and vectors through the message_vectors table, as in the program);
each criterion is matched by LocalMatcher over that agent's messages.

Ground truth is per exchange: an exchange belongs to a topic when its messages came from
that topic's file. A criterion's precision and recall count exchanges (the matcher
returns whole exchanges); its F1 is 0 when it returns nothing. Figures are macro averages
over the criteria of present topics; absent-topic criteria count as right when they
return nothing.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ikigai_tui.core.events import AgentRecord, WriteBatch
from ikigai_tui.core.matching import Candidate, exchanges
from ikigai_tui.core.matching.local import LocalMatcher
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.embed import default_embedder

EVAL = Path(__file__).resolve().parent / "eval"
SET = EVAL / "matching_set.json"  # topics of 4-12 exchanges: the figure with the goal
DIGRESSIONS = EVAL / "matching_set_digressions.json"  # topics of 2-12 exchanges
SETS = (SET, DIGRESSIONS)
# Issue 29's sets (benchmarks/eval/make_eval_sets.py): thresholds are chosen on TUNE only;
# the others are reported, never tuned on.
TUNE = EVAL / "sets" / "tune.json"
REPORTED = (EVAL / "sets" / "chatter.json", EVAL / "sets" / "star.json")


@dataclass
class Scored:
    """Per-criterion results of one half."""

    f1: list[float] = field(default_factory=list)
    precision: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    absent_empty: list[bool] = field(default_factory=list)
    by_kind: dict[str, list[float]] = field(default_factory=dict)

    def add(self, kind: str, picked: set[int], truth: set[int] | None) -> None:
        if truth is None:
            self.absent_empty.append(not picked)
            return
        hit = len(picked & truth)
        p = hit / len(picked) if picked else 0.0
        r = hit / len(truth) if truth else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        self.precision.append(p)
        self.recall.append(r)
        self.f1.append(f)
        self.by_kind.setdefault(kind, []).append(f)

    def summary(self) -> dict[str, Any]:
        mean = statistics.fmean
        return {"precision": mean(self.precision), "recall": mean(self.recall),
                "f1": mean(self.f1), "absent": mean(self.absent_empty),
                "criteria": len(self.f1), "absent_criteria": len(self.absent_empty),
                "by_kind": {k: mean(v) for k, v in self.by_kind.items()}}


@dataclass
class Conversation:
    half: str | None
    candidates: list[Candidate]
    topics: list[str | None]  # per candidate
    criteria: list[dict]
    either: list[bool] = field(default_factory=list)  # per candidate: content-free (STAR)

    def exchange_truth(self, topic: str) -> set[int]:
        """The exchanges (indices) whose messages came from `topic`'s file."""
        out = set()
        position = 0
        for e, group in enumerate(exchanges(self.candidates)):
            if any(self.topics[position + k] == topic for k in range(len(group))):
                out.add(e)
            position += len(group)
        return out

    def either_exchanges(self) -> set[int]:
        """Exchanges that count neither way (a content-free one: "Thank you", "Tuesday")."""
        out = set()
        position = 0
        for e, group in enumerate(exchanges(self.candidates)):
            if any(self.either[position:position + len(group)]):
                out.add(e)
            position += len(group)
        return out

    def truth(self, crit: dict) -> set[int] | None:
        """The criterion's exchanges, None for an absent topic; either-exchanges left out."""
        if crit["kind"] == "absent":
            return None
        return self.exchange_truth(crit["topic"]) - self.either_exchanges()


def load_set(path: Path = SET, offline: bool = False) -> list[dict]:
    """The set's conversations; `offline`: each assistant reply replaced by what the
    program's offline model answers there (a template quoting the user's message and the
    first one: what the local matcher sees when the offline model is used)."""
    conversations = json.loads(path.read_text(encoding="utf-8"))["conversations"]
    return [offline_replies(c) for c in conversations] if offline else conversations


def offline_replies(conversation: dict) -> dict:
    from ikigai_tui.core.provider import Request
    from ikigai_tui.llm.offline import respond

    messages: list[dict] = []
    for m in conversation["messages"]:
        if m["role"] == "assistant":
            seen = [{"role": x["role"], "content": x["text"]} for x in messages]
            m = dict(m, text=respond(Request("offline", "", seen))[0])
        messages.append(m)
    return dict(conversation, messages=messages)


async def stored(store: Store, conversations: list[dict]) -> list[Conversation]:
    """Each conversation written as one agent's messages; its candidates in order."""
    out = []
    for n, conv in enumerate(conversations):
        agent = f"eval{n}"
        batch = WriteBatch()
        batch.new_agents.append(AgentRecord(agent, None, agent, "offline", "idle", 0.0, None))
        for m in conv["messages"]:
            batch.add(agent, m["role"], {"content": m["text"]})
        events = await store.write(batch)
        cands = [Candidate(e.id, e.kind, e.payload["content"]) for e in events]
        out.append(Conversation(conv.get("half"), cands, [m["topic"] for m in conv["messages"]],
                                conv["criteria"], [bool(m.get("either")) for m in conv["messages"]]))
    return out


def picked_exchanges(conv: Conversation, ids: set[int]) -> set[int]:
    """The exchanges all of whose messages were returned (a partial one counts as not)."""
    out = set()
    for e, group in enumerate(exchanges(conv.candidates)):
        members = {c.id for c in group}
        if members <= ids:
            out.add(e)
        elif members & ids:
            raise AssertionError(f"exchange {e} returned in part: not whole exchanges")
    return out


async def evaluate(half: str | None, params=None, path: Path = SET,
                   offline: bool = False, embedder=None) -> dict[str, Any]:
    """Run the matcher over every criterion of one half of a set (None: the whole set),
    with the program's embedder or `embedder`."""
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp) / "eval.db")
        try:
            convs = [c for c in await stored(store, load_set(path, offline)) if c.half == half]
            matcher = LocalMatcher(store, embedder or default_embedder(), params=params)
            scored = Scored()
            for conv in convs:
                either = conv.either_exchanges()
                for crit in conv.criteria:
                    report = await matcher.match(crit["text"], "forget", conv.candidates)
                    picked = picked_exchanges(conv, {m.id for m in report.matches})
                    scored.add(crit["kind"], picked - either, conv.truth(crit))
            return scored.summary()
        finally:
            await store.close()


async def inputs(half: str | None = None, path: Path = SET, embedder=None) -> list[tuple]:
    """For tuning: per criterion (half, kind, Scoring, truth, either-exchanges), prepared
    once by the matcher itself; local_score.select is then run with each candidate Params."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp) / "eval.db")
        try:
            convs = await stored(store, load_set(path))
            matcher = LocalMatcher(store, embedder or default_embedder())
            for conv in convs:
                if half is not None and conv.half != half:
                    continue
                either = conv.either_exchanges()
                for crit in conv.criteria:
                    scoring = await matcher.prepare(crit["text"], conv.candidates)
                    out.append((conv.half, crit["kind"], scoring, conv.truth(crit), either))
        finally:
            await store.close()
    return out
