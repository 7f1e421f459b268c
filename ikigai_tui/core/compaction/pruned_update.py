"""Updating an agent's summary of pruned turns after its turn ends (see pruned.py).

Incremental: the side request holds the summary that stands (if any) and only the
messages pruned since, built to fit the summarising model (Summariser: pieces when they
do not fit one request, then a merge); its reply is kept within the reserve (its
max_tokens are set from it, and a longer reply is cut). The offline model makes an
extractive summary, labelled as such. One `pruned_summary` event per update.

Never concurrent with a compaction of the agent or another summary of it; a failure never
fails the turn: it is shown once and tried again after the next turn; after 3 failures in
a row it stops, and says so, until the user acts (a context command, a new model).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.compaction import MAX_FAILURES, prompt
from ikigai_tui.core.compaction.pruned import KIND, PrunedSummary, block, fit, ranges_of
from ikigai_tui.core.compaction.summarise import Summary, extractive_summary
from ikigai_tui.core.events import WriteBatch, message_text
from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.core.matching import Candidate
from ikigai_tui.core.ports import StoreError
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.compaction.service import Compactor, UpdateState

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime

log = logging.getLogger(__name__)
PURPOSE = "pruned_summary"
OFFLINE = "offline"
INSTRUCTION = (
    "These are the oldest turns of a conversation that still goes on: they no longer fit "
    "what the assistant is shown, so your summary will stand in for them. {earlier}"
    "Keep the summary under {limit} tokens.")
TURNS_HEADING = "## Requests and replies"
_SKIPPED = re.compile(r"- \.\.\. ([\d,]+) turns not listed \.\.\.")
EARLIER = ("The first item, labelled 'summary', is the summary of the turns before these: "
           "fold it and the messages after it into one summary of them all. ")


async def after_turn(compactor: Compactor, agent: AgentRuntime) -> None:
    """Never raises (a cancel goes on up): the turn is over whatever happens here."""
    session = compactor.host
    if not compactor.settings.summarize_pruned or agent.dead:
        return
    if agent.id in compactor.running or agent.id in compactor.pruning:
        return  # a compaction or another summary of this agent is under way
    state = compactor.pruned_state.setdefault(agent.id, UpdateState())
    try:
        r = await session.replayer(agent.id)
        plan = await session.plan(agent.id)
    except (StoreError, CommandError):
        return
    if state.failures >= MAX_FAILURES:
        if state.acted == _moment(session, agent, r):
            return  # stopped, and said so: until the user acts
        state.failures = 0
    window = plan.window
    meter = session.meter(agent)
    start = window.start_index
    sent = plan.pruned
    done = sent.summary.covered if sent is not None else 0
    if not window.reserve or start <= done:
        return
    compactor.pruning.add(agent.id)
    try:
        await _update(compactor, agent, sent.summary if sent else None, meter.ids[done:start],
                      done, window.reserve)
    except (CommandError, ProviderError, StoreError) as exc:
        _failed(compactor, agent, state, str(exc))
    except Exception as exc:  # a bug must not end the turn badly: shown, logged
        log.exception("the summary of %s's pruned turns failed", agent.id)
        _failed(compactor, agent, state, f"internal error: {exc!r}")
    else:
        state.failures = 0
    finally:
        compactor.pruning.discard(agent.id)


def _moment(session, agent: AgentRuntime, r) -> tuple:
    return (r.changes, session.model_of(agent))


def _failed(compactor: Compactor, agent: AgentRuntime, state: UpdateState, reason: str) -> None:
    state.failures += 1
    session = compactor.host
    text = (f"The summary of pruned turns failed ({state.failures} of {MAX_FAILURES}): "
            f"{reason}. The context is unchanged")
    if state.failures < MAX_FAILURES:
        text += "; it is tried again after the next turn."
    else:
        text += (f". Summaries of pruned turns stopped after {MAX_FAILURES} failures in a "
                 "row: a context command (/clear, /forget, /compact, /undo) or /model "
                 "starts them again.")
        agent_r = session.tree[agent.id].replayer
        state.acted = _moment(session, agent, agent_r) if agent_r is not None else ()
    session.notify(CompactionNotice(agent.id, "error", text))


async def _update(compactor: Compactor, agent: AgentRuntime, previous: PrunedSummary | None,
                  new: list[int], done: int, reserve: int) -> None:
    """Summarise `new`, the messages pruned after the `done` that `previous` covers."""
    session = compactor.host
    r = await session.replayer(agent.id)
    meter = session.meter(agent)
    counter = meter.counter
    full = await session.bodies.entries(r, new, cache=False)
    candidates = [Candidate(k, full[k][1], message_text(full[k][1], full[k][2]))
                  for k in new if k in full]
    earlier = await compactor.pruned.text(previous) if previous is not None else None
    if earlier and previous is not None:
        candidates.insert(0, Candidate(previous.event_id, "summary", earlier))
    heading = counter.scale(counter.text(block("")))
    room = max(64, reserve - heading)
    changes = r.changes
    since = previous.ranges[-1][1] if previous is not None else new[0]
    removed = sorted(k for k in getattr(r, "removed", ()) if since < k < new[-1])
    before = previous.ranges if previous is not None else ()
    model = compactor.summary_model(agent)
    if model == OFFLINE:
        fresh = [c for c in candidates if c.kind != "summary"]
        summary = extractive_summary(fresh, None, 10 ** 9)
        text = extractive_update(earlier, summary.text,
                                 max(400, room * 4 * 9 // 10))
        summary = Summary(text, summary.model, 1, 0, None, extractive=True)
    else:
        model = session.check_model(model)
        summariser = compactor.summariser(model, reply_tokens=room)  # max_tokens: the reserve
        instruction = INSTRUCTION.format(earlier=EARLIER if earlier else "", limit=f"{room:,}")
        summary = await summariser.summarise(candidates, instruction=instruction,
                                             purpose=PURPOSE)
    text = fit(summary.text.strip(), reserve, lambda t: counter.scale(counter.text(t)))
    if not text:
        raise CommandError("the summary does not fit its reserve")
    tokens = counter.scale(counter.text(block(text)))
    batch = WriteBatch()
    if r.changes != changes:  # the context changed meanwhile (a command): made again after
        _usage(batch, agent.id, summary)  # the next turn; what the request cost is kept
        if batch.events:
            await session.commit(batch)
        return
    batch.add(agent.id, KIND, {
        "summary": text, "ranges": ranges_of(new, removed, before), "messages": done + len(new),
        "tokens": tokens, "model": summary.model, "extractive": summary.extractive,
        "previous": previous.event_id if previous is not None else None, "new": len(new)})
    _usage(batch, agent.id, summary)
    await session.commit(batch)
    session.notify(CompactionNotice(
        agent.id, "done", f"Summarised {len(new):,} pruned message{'s' if len(new) != 1 else ''}"
        f" ({format_tokens(tokens)} tokens{'; extractive, offline model' if summary.extractive else ''})"))


def _sections(text: str) -> tuple[list[str], list[str]]:
    """An extractive summary's turn entries (each "- " line with the lines under it) and
    its artifact trail lines."""
    head, _, rest = text.partition(f"{TURNS_HEADING}\n")
    turns, _, trail = rest.partition(f"\n\n{prompt.TRAIL_HEADING}\n")
    entries: list[str] = []
    for line in turns.splitlines():
        if line.startswith("- ") or not entries:
            entries.append(line)
        else:
            entries[-1] += "\n" + line
    artifacts = [ln for ln in trail.splitlines() if ln.startswith("- ")]
    return [e for e in entries if e and e != "none"], artifacts


def _skipped(entry: str) -> int | None:
    """The count of a "- ... N turns not listed ..." entry, None for a turn's entry."""
    match = _SKIPPED.fullmatch(entry)
    return None if match is None else int(match.group(1).replace(",", ""))


def _marker(count: int) -> str:
    return f"- ... {count:,} turns not listed ..."


def extractive_update(previous: str | None, fresh: str, max_chars: int) -> str:
    """The offline model's update: the earlier extractive summary's turns and artifacts,
    then the new turns' (the first and the latest kept when they do not all fit), not an
    extract of an extract."""
    entries, trail = _sections(previous) if previous else ([], [])
    new_entries, new_trail = _sections(fresh)
    entries += new_entries
    trail = list(dict.fromkeys(trail + new_trail))
    budget = max(100, max_chars - len(prompt.EXTRACTIVE_TITLE) - 64)
    # Turns an earlier update left out are counted in one marker, where the first was.
    counts = [_skipped(e) for e in entries]
    skipped = sum(n for n in counts if n is not None)
    where = next((i for i, n in enumerate(counts) if n is not None), 0)
    entries = [e for e, n in zip(entries, counts) if n is None]
    kept = prompt._fit(entries, budget * 3 // 4)
    if skipped:
        cut = next((i for i, e in enumerate(kept) if _skipped(e) is not None), None)
        if cut is not None:
            kept[cut] = _marker(skipped + (_skipped(kept[cut]) or 0))
        else:
            kept.insert(min(where, len(kept)), _marker(skipped))
    room = budget - sum(len(e) + 1 for e in kept)  # what is left for the artifact trail
    listed = "\n".join(trail)
    if len(listed) > room:
        listed = listed[: max(0, room)].rpartition("\n")[0]  # whole lines
    return (f"{prompt.EXTRACTIVE_TITLE}.\n\n{TURNS_HEADING}\n" + ("\n".join(kept) or "none")
            + f"\n\n{prompt.TRAIL_HEADING}\n" + (listed or "none"))


def _usage(batch: WriteBatch, agent_id: str, summary: Summary) -> None:
    if summary.usage is not None:
        batch.add(agent_id, "usage", {"model": summary.model, "purpose": PURPOSE,
                                      "input_tokens": summary.usage.input_tokens,
                                      "output_tokens": summary.usage.output_tokens})
