"""Which matcher serves an agent's /forget and /remember.

The LLM matcher whenever the matching model is a real provider: `--matcher-model`, else
the config's `matcher_model`, else the agent's own model. The local matcher for the
offline model, or when asked with `--local`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ikigai_tui.core.matching import Matcher
from ikigai_tui.core.tokens import TokenCounter

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.gateway import Gateway


class MatcherSources(Protocol):
    """What choosing a matcher reads (the session answers it): the matching settings, the
    agent's model, a model's check, limits and token factor, the gateway of LLM calls,
    and the local matcher."""

    settings: Any  # matcher_model, matcher_concurrency, matcher_chunk_tokens
    providers: Any  # limits(model)
    factors: dict[str, tuple[float, int]]
    gateway: Gateway
    local_matcher: Matcher

    def model_of(self, agent: AgentRuntime) -> str: ...

    def check_model(self, model: str) -> str: ...


def matcher_for(session: MatcherSources, agent: AgentRuntime, *, local: bool = False,
                model: str | None = None) -> Matcher:
    settings = session.settings
    model = model or settings.matcher_model or session.model_of(agent)
    if local or model == "offline":
        return session.local_matcher
    from ikigai_tui.core.matching.llm import LlmMatcher

    model = session.check_model(model)  # a bad name: one line, nothing written
    limits = session.providers.limits(model)
    factor = session.factors.get(model, (1.0, 0))[0]
    counter = TokenCounter(model, factor)
    return LlmMatcher(session.gateway, model, input_limit=limits.input,
                      count=lambda text: counter.text(text) * counter.factor, concurrency=settings.matcher_concurrency,
                      chunk_tokens=settings.matcher_chunk_tokens)

