"""An independent model of the replay rules (SPEC §4, not the product's Replayer), for the
kinds gen.py generates: it tracks each agent's context while generating, picks valid
rewind targets and filter ids, and gives the grandchild's expected context."""

from __future__ import annotations

import random


class Model:
    """An agent's context as SPEC §4 defines it, for the subset of kinds generated here."""

    def __init__(self) -> None:
        self.ctx: dict[int, str] = {}  # id -> kind, in id order
        self.call_of: dict[int, int] = {}  # tool_result id -> its call's id
        self.result_of: dict[int, int] = {}  # tool_call id -> its result's id
        self.marks: dict[object, int] = {}  # key -> mark event id, in mark order
        self.msg_ids: list[int] = []  # every message id ever in ctx, for sampling

    def child(self, after_mark: int | None) -> Model:
        m = Model()
        kept = {k for k in self.ctx if after_mark is None or k > after_mark}
        # A tool result whose call is before the mark is not inherited.
        m.ctx = {k: v for k, v in self.ctx.items() if k in kept
                 and not (v == "tool_result" and self.call_of[k] not in kept)}
        m.call_of = {r: c for r, c in self.call_of.items() if r in m.ctx}
        m.result_of = {c: r for c, r in self.result_of.items() if c in m.ctx and r in m.ctx}
        m.msg_ids = list(m.ctx)
        return m

    def message(self, i: int, kind: str, call: int | None = None) -> None:
        self.ctx[i] = kind
        self.msg_ids.append(i)
        if kind == "tool_result":
            self.call_of[i] = call
            self.result_of[call] = i

    def mark(self, i: int, name: str | None) -> None:
        key = name if name is not None else ("#", i)
        self.marks.pop(key, None)
        self.marks[key] = i

    def rewind(self, target: int) -> None:
        while self.marks[next(reversed(self.marks))] != target:
            self.marks.popitem()
        ctx = self.ctx
        removed = []
        while ctx:
            last = next(reversed(ctx))
            if last <= target:
                break
            if ctx.pop(last) == "tool_result":
                removed.append(last)
        for r in removed:
            ctx.pop(self.call_of[r], None)

    def partners(self, ids: set[int]) -> set[int]:
        out = set(ids)
        for i in ids:
            kind = self.ctx[i]
            if kind == "tool_result":
                p = self.call_of[i]
            elif kind == "tool_call":
                p = self.result_of.get(i)
            else:
                continue
            if p in self.ctx:
                out.add(p)
        return out

    def drop(self, ids: set[int]) -> None:
        for i in self.partners(ids):
            del self.ctx[i]

    def sample_ids(self, rng: random.Random, k: int) -> list[int]:
        """Up to k distinct ids drawn uniformly from the context."""
        if len(self.msg_ids) > 4 * len(self.ctx) + 64:
            self.msg_ids = list(self.ctx)  # amortised: keeps the hit rate above 1/4
        found: set[int] = set()
        for _ in range(8 * k):
            i = self.msg_ids[rng.randrange(len(self.msg_ids))] if self.msg_ids else None
            if i in self.ctx:
                found.add(i)
                if len(found) == k:
                    break
        return sorted(found)
