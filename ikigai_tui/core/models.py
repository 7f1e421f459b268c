"""The model policy, one object: which model an agent is on, a model's full name, its
limits, and whether its key is set (the providers answer the last three)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.provider import ProviderError, ProviderFactory

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.tokens.limits import Limits


class ModelPolicy:
    """Asked by the planner, the compactor, the matchers and the front ends alike.

    The providers are read at each call (a test or a reload may replace their methods)."""

    def __init__(self, providers: ProviderFactory) -> None:
        self.providers = providers

    def model_of(self, agent: AgentRuntime) -> str:
        """The agent's model: its latest /model, else the one it was made with."""
        if agent.replayer is not None and agent.replayer.model:
            return agent.replayer.model
        return agent.model

    def check(self, model: str) -> str:
        """The full name of a usable model (an alias or a bare name resolved); raises
        CommandError, in one line, for a name that cannot be used."""
        try:
            full = self.providers.check(model)
        except ProviderError as exc:
            raise CommandError(str(exc)) from exc
        return full if isinstance(full, str) else model

    def resolved(self, model: str) -> str:
        """The full name `model` stands for (an alias or a bare name resolved), or `model`
        as typed when it cannot be used (for /model to report): `--model gpt-4o` on a root
        already on openai/gpt-4o changes nothing."""
        try:
            return self.check(model)
        except CommandError:
            return model

    def limits(self, model: str) -> Limits:
        """The model's input limit and the room kept for its reply."""
        return self.providers.limits(model)

    def ready(self, model: str) -> str | None:
        """Why a request to `model` cannot be sent now (its key is missing, say), or None."""
        ready = getattr(self.providers, "ready", None)
        return ready(model) if ready is not None else None

    def key_warning(self, model: str) -> str | None:
        """A line warning that messages to `model` will fail (its key is not set)."""
        warn = getattr(self.providers, "key_warning", None)
        return warn(model) if warn is not None else None
