"""Which matcher serves an agent's /forget and /remember.

The LLM matcher whenever the matching model is a real provider: `--matcher-model`, else
the config's `matcher_model`, else the agent's own model. The local matcher for the
offline model, or when asked with `--local`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.matching import Matcher
from ikigai_tui.core.tokens import TokenCounter

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.session import Session


def matcher_for(session: Session, agent: AgentRuntime, *, local: bool = False,
                model: str | None = None) -> Matcher:
    settings = session.settings
    model = model or settings.matcher_model or session.model_of(agent)
    if local or model == "offline":
        return local_matcher(session)
    from ikigai_tui.core.matching.llm import LlmMatcher

    model = session.check_model(model)  # a bad name: one line, nothing written
    limits = session.providers.limits(model)
    factor = session.factors.get(model, (1.0, 0))[0]
    counter = TokenCounter(model, factor)
    return LlmMatcher(session.gateway, model, input_limit=limits.input,
                      count=lambda text: counter.text(text) * counter.factor, concurrency=settings.matcher_concurrency,
                      chunk_tokens=settings.matcher_chunk_tokens)


def local_matcher(session: Session) -> Matcher:
    try:
        from ikigai_tui.core.matching.local import LocalMatcher
    except ImportError:  # pragma: no cover - until the local matcher lands
        raise CommandError("the local matcher is not available in this build") from None
    return LocalMatcher.for_session(session)  # type: ignore[attr-defined]
