"""/forget and /remember: their options, and the proposal a matcher's report becomes.

    /forget [--dry-run] [--preview] --ids LIST
    /forget [--dry-run] [--local] [--matcher-model M] CRITERIA

Explicit ids apply at once (SPEC §5: no matcher, no preview); `--preview` asks the TUI to
show them for review first. Criteria are always previewed where someone can review.

CRITERIA is the rest of the line after the options, taken raw (apostrophes and quotes
are part of it). The whole context is reviewed, not only the window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import ArgReader, CommandResult, IdRange, parse_id_ranges
from ikigai_tui.core.events import message_text
from ikigai_tui.core.matching import Candidate, MatchProgress
from ikigai_tui.core.notices import MatchingNotice
from ikigai_tui.core.commands.proposals import FilterProposal, some_ids
from ikigai_tui.core.provider import ProviderError

if TYPE_CHECKING:
    from ikigai_tui.core.commands.context import CommandContext


class FilterArgs(NamedTuple):
    ids: list[IdRange] | None  # as given: single ids and ranges
    criteria: str | None
    dry_run: bool = False
    local: bool = False
    model: str | None = None
    preview: bool = False


def read_filter_args(args: ArgReader, verb: str) -> FilterArgs:
    ids: list[IdRange] | None = None
    dry_run = local = preview = False
    model: str | None = None
    while (word := args.peek_word()) is not None and word.startswith("--"):
        args.take()
        name, eq, value = word.partition("=")
        if name == "--dry-run" and not eq and not dry_run:
            dry_run = True
        elif name == "--preview" and not eq and not preview:
            preview = True
        elif name == "--local" and not eq and not local:
            local = True
        elif name == "--ids" and ids is None:
            ids = parse_id_ranges(value if eq else args.require("id list after --ids"))
        elif name == "--matcher-model" and model is None:
            model = value if eq else args.require("model after --matcher-model")
            if not model.strip():
                raise UsageError("--matcher-model is empty")
        else:
            raise UsageError(f"unexpected option '{word}'")
    criteria = args.rest().strip() or None
    if ids is not None:
        if criteria is not None:
            raise UsageError(f"unexpected argument '{criteria}' (give CRITERIA or --ids LIST, "
                             "not both)")
        if local or model is not None:
            raise UsageError("--local and --matcher-model choose a matcher; --ids needs none")
    elif criteria is None:
        raise UsageError(f"missing CRITERIA (what to {verb}) or --ids LIST")
    elif preview:
        raise UsageError("--preview goes with --ids (CRITERIA are always previewed)")
    return FilterArgs(ids, criteria, dry_run, local, model, preview)


async def candidates_of(c: CommandContext, counted: dict[int, float] | None = None) -> list[Candidate]:
    """The agent's whole context, in order, as the matcher sees it (with the token
    counts already `counted` for the matching model, so they are not counted again);
    the text read from the log a batch at a time."""
    counted = counted or {}
    r = c.replayer
    bodies = c.services.bodies
    if bodies is None:
        chunks = [dict(r.ctx.items())]
    else:
        chunks = [full async for full in bodies.chunks(r, list(r.ctx))]
    return [Candidate(key, entry[1], message_text(entry[1], entry[2]), counted.get(key))
            for full in chunks for key, entry in full.items()]


async def propose_matches(c: CommandContext, mode: str, ask: FilterArgs) -> FilterProposal | CommandResult:
    """Run the matcher over the context; a proposal of what matched (nothing written)."""
    assert ask.criteria is not None
    matcher = c.services.matcher(c.agent, ask.local, ask.model)
    same_model = getattr(matcher, "model", None) == c.services.model_of(c.agent)
    candidates = await candidates_of(c, c.services.meter(c.agent).cache if same_model else None)
    if not candidates:
        raise CommandError("the context is empty: there is nothing to match")
    agent_id = c.agent.id

    def progress(step: MatchProgress) -> None:
        c.services.notify(MatchingNotice(agent_id, step.done, step.total, matcher.name,
                                         ask.criteria or ""))

    try:
        report = await matcher.match(ask.criteria, mode, candidates, progress=progress)
    except ProviderError as exc:
        raise CommandError(f"{exc}; nothing was changed") from None
    if report.usage is not None:
        c.add("usage", {"model": getattr(matcher, "model", report.matcher), "purpose": "match",
                        "input_tokens": report.usage.input_tokens,
                        "output_tokens": report.usage.output_tokens})
    ids = [m.id for m in report.matches]
    possible = [m.id for m in report.possible]
    if not ids:
        # The exact command that previews them (whatever the user then ticks or unticks).
        review = f"/{mode} --ids {','.join(map(str, possible))} --preview"
        maybe = (f"; possibly related, not likely: {some_ids(possible)} (to look at them: "
                 f"{review})" if possible else "")
        return CommandResult([f"Nothing matches \"{ask.criteria}\" (matched by {report.matcher})"
                              f"{maybe}; nothing was changed."])
    tokens = (await c.services.measure(agent_id)).tokens
    return await FilterProposal.make(c.services.bodies, mode, ids, c.replayer,
                                     c.services.meter(c.agent), tokens,
                                     dry_run=ask.dry_run, criteria=ask.criteria, matcher=report.matcher,
                                reasons={m.id: m.reason for m in (*report.matches, *report.possible)},
                                dropped=report.dropped, possible=possible)
