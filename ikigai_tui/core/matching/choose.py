"""Which matcher serves an agent's /forget and /remember.

The LLM matcher whenever the matching model is a real provider: `--matcher-model`, else
the config's `matcher_model`, else the agent's own model. The local matcher for the
offline model, or when asked with `--local`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ikigai_tui.core.matching import Matcher
from ikigai_tui.core.tokens.counter import TokenCounter

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.gateway import Gateway
    from ikigai_tui.core.models import ModelPolicy


class MatcherSources(Protocol):
    """What choosing a matcher reads (the session answers it): the matching settings, the
    model policy (the agent's model, a model's check and limits), token factors, the
    gateway of LLM calls, and the local matcher."""

    settings: Any  # matcher_model, matcher_concurrency, matcher_chunk_tokens
    models: ModelPolicy
    factors: dict[str, tuple[float, int]]
    gateway: Gateway
    local_matcher: Matcher


def matcher_for(session: MatcherSources, agent: AgentRuntime, *, local: bool = False,
                model: str | None = None) -> Matcher:
    settings = session.settings
    models = session.models
    model = model or settings.matcher_model or models.model_of(agent)
    if local or model == "offline":
        return session.local_matcher
    from ikigai_tui.core.matching.llm import LlmMatcher

    model = models.check(model)  # a bad name: one line, nothing written
    limits = models.limits(model)
    factor = session.factors.get(model, (1.0, 0))[0]
    counter = TokenCounter(model, factor)
    return LlmMatcher(session.gateway, model, input_limit=limits.input,
                      count=lambda text: counter.text(text) * counter.factor, concurrency=settings.matcher_concurrency,
                      chunk_tokens=settings.matcher_chunk_tokens)

