"""/compact [FOCUS] [--keep N] [--upto MARK | --from MARK] [--dry-run]: older context
replaced by one structured summary, reviewed before anything is written (core/compaction)."""

from __future__ import annotations

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.compaction.proposal import CompactProposal
from ikigai_tui.core.compaction.select import read_compact_args


async def compact(c: CommandContext) -> CompactProposal:
    ask = read_compact_args(c.args)
    compactor = getattr(c.services, "compactor", None)
    if compactor is None:
        raise CommandError("compaction is not available here")
    if c.source == "auto":
        c.batch.events[0].payload["text"] = "/compact (automatic)"
    return await compactor.propose(c, ask)
