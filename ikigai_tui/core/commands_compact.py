"""/compact [FOCUS] [--keep N] [--upto MARK | --from MARK] [--dry-run]: older context
replaced by one structured summary, reviewed before anything is written (core/compaction)."""

from __future__ import annotations

from ikigai_tui.core.command_context import CommandContext
from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.compaction.proposal import CompactProposal
from ikigai_tui.core.compaction.select import read_compact_args

DETAILS = (
    "Summarises the context except the latest turns (2, or --keep N) with the agent's model "
    "(or compact_model in the config), into sections: goal, decisions and their reasons, "
    "constraints, files and artefacts, errors and fixes, open questions, next steps, and "
    "every file, command, URL and identifier named, verbatim. FOCUS says what to keep in "
    "full. --upto MARK summarises only what lies before the mark, --from MARK only what "
    "follows it. A context bigger than the model takes is summarised in pieces, then the "
    "pieces' summaries are merged. The offline model makes an extractive summary (the "
    "requests and the first lines of the replies). Shows the summary (editable), what it "
    "replaces and the saving first; --dry-run only shows it. /undo brings the messages back.")


async def compact(c: CommandContext) -> CompactProposal:
    ask = read_compact_args(c.args)
    compactor = getattr(c.services, "compactor", None)
    if compactor is None:
        raise CommandError("compaction is not available here")
    if c.source == "auto":
        c.batch.events[0].payload["text"] = "/compact (automatic)"
    return await compactor.propose(c, ask)
