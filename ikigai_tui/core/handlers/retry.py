"""/retry: send the unanswered last message again (after a failed or cancelled turn),
without writing it a second time."""

from __future__ import annotations

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import CommandResult


async def retry(c: CommandContext) -> CommandResult:
    c.args.done()
    agent = c.agent
    label = c.tree.label(agent.id)
    if agent.in_turn or agent.busy:
        raise CommandError(f"agent {label} is still working on it")
    ctx = c.replayer.ctx
    if not ctx or ctx[next(reversed(ctx))][1] != "user":
        raise CommandError("nothing to retry: the last message has its reply")
    agent_id = agent.id
    # Once the command is on record: the turn answers the message already in the context.
    c.after_commit.append(lambda: c.services.start_if_pending(agent_id))
    return CommandResult(["Sending your last message again."])
