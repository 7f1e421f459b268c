"""Matchers: which messages of an agent's context match what a user described.

`/forget CRITERIA` and `/remember CRITERIA` (and the LLM's `filter_context` tool) hand a
matcher the criteria, the mode and the context as `Candidate`s, in context order. A
matcher answers with a `MatchReport`: the ids that match (with a reason where it gives
one) and which matcher it was. It writes nothing; the proposal built from the report is
what a reviewer accepts or refuses (core/commands/proposals.py).

Two kinds: the LLM matcher (core/matching/llm.py: side requests through the gateway, in
chunks split on exchanges) and the local matcher (core/matching/local.py: words and
meaning on the CPU, no network).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from ikigai_tui.core.provider import Usage

FORGET, REMEMBER = "forget", "remember"
MODES = (FORGET, REMEMBER)
RECALL = "recall"  # /recall by meaning: find what matches, nothing is changed


class Candidate(NamedTuple):
    """One message of the agent's current context, in context order."""

    id: int
    kind: str  # "user" | "assistant" | "tool_call" | "tool_result"
    text: str  # core.events.message_text(kind, payload)
    tokens: float | None = None  # its count for the matching model, when already known


def render_message(candidate: Candidate, limit: int | None = None) -> str:
    """A message as a side request shows it (the matcher's and the summariser's): its id and
    kind, then its text, the middle cut out past `limit` characters."""
    text = candidate.text
    if limit is not None and len(text) > limit:
        half = max(1, limit // 2)
        text = f"{text[:half]}\n[... {len(text) - 2 * half:,} characters not shown ...]\n{text[-half:]}"
    return f"[#{candidate.id} {candidate.kind}]\n{text}"


# How the reason of a possible match starts (the preview counts and shows them by it).
POSSIBLE_REASON = "possible: "


class Match(NamedTuple):
    id: int
    reason: str | None = None
    score: float | None = None  # how close in meaning (the local matcher's), for ranking


@dataclass(frozen=True)
class MatchReport:
    """What a matcher found. `dropped`: ids the model named that were not in its chunk
    (never applied); `chunks`: requests made (1 for the local matcher). `possible`: ids
    the matcher is less sure of (the local matcher's), never in `matches`: a preview
    lists them unticked."""

    matches: tuple[Match, ...]
    matcher: str  # shown in the preview: "anthropic/claude-… (LLM)", "local (words + meaning)"
    chunks: int = 1
    dropped: int = 0
    usage: Usage | None = None
    possible: tuple[Match, ...] = ()


class MatchProgress(NamedTuple):
    """Chunks done out of the total, reported as each finishes."""

    done: int
    total: int


ProgressFn = Callable[[MatchProgress], None]


class Matcher(Protocol):
    name: str

    async def match(self, criteria: str, mode: str, candidates: Sequence[Candidate], *,
                    progress: ProgressFn | None = None,
                    cancellation: asyncio.Event | None = None) -> MatchReport:
        """The candidates that match `criteria` (in both modes: the caller keeps them for
        remember and removes them for forget). Raises ProviderError on a failure that
        leaves nothing to apply (RequestCancelled when cancelled)."""
        ...


def exchanges(candidates: Sequence[Candidate]) -> list[list[Candidate]]:
    """The candidates split into exchanges: a new one starts at each user message (a
    user's input through the complete reply, tool calls and results included)."""
    groups: list[list[Candidate]] = []
    for candidate in candidates:
        if candidate.kind == "user" or not groups:
            groups.append([candidate])
        else:
            groups[-1].append(candidate)
    return groups
