"""/btw QUESTION: a side question to the agent's model, about its context as it is.

The request is the agent's next request exactly as planned now (the same system prompt
and pins, the same window of messages, the summaries) with the question as a last user
message, and no tools: the model answers in words only. The answer streams as SideDelta
notices (the screen's panel shows them) and is the command's output (the headless
front ends print it). The log keeps the exchange as a `btw` event and its cost as a
`usage` event (purpose "btw"): neither is a context kind, so the replay ignores both, and
no request (this agent's, a child's forked later, after a restart) ever holds them.

While the agent is in a turn, the question goes with the context as committed (a tool
call still running is left out, as in any request): nothing is changed, so nothing
waits for the turn's end. A provider failure is one line and writes nothing.
"""

from __future__ import annotations

from contextlib import aclosing

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.errors import CommandError, UsageError
from ikigai_tui.core.notices import SideDelta
from ikigai_tui.core.provider import ProviderError, TextDelta, Usage

PURPOSE = "btw"
# The first line of the answer as printed and logged: it never entered the context.
SIDE_ANSWER = "Side answer (not in any context):"


async def btw(c: CommandContext) -> CommandResult:
    question = c.args.rest()
    if not question:
        raise UsageError("missing QUESTION")
    services = c.services
    if services.plan is None or services.gateway is None:
        raise CommandError("/btw cannot reach the model here")
    plan = await services.plan(c.agent.id, messages=True)
    sent = plan.request()
    request = sent._replace(messages=[*sent.messages, {"role": "user", "content": question}],
                            tools=(), tool_choice=None)
    parts: list[str] = []
    usage: Usage | None = None
    try:
        async with aclosing(services.gateway().stream(request, purpose=PURPOSE)) as items:
            async for item in items:
                if isinstance(item, TextDelta):
                    parts.append(item.text)
                    services.notify(SideDelta(c.agent.id, item.text))
                elif isinstance(item, Usage):
                    usage = item
    except ProviderError as exc:
        raise CommandError(f"{' '.join(str(exc).split())}; nothing was written") from None
    answer = "".join(parts)
    c.add("btw", {"question": question, "answer": answer, "model": plan.model})
    if usage is not None:
        c.add("usage", {"model": plan.model, "purpose": PURPOSE,
                        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens})
    return CommandResult([SIDE_ANSWER, *(answer.splitlines() or ["(no answer)"])], data=answer)
