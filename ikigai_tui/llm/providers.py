"""Model name -> provider: the offline model, or any litellm model."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ikigai_tui.core.gateway import DEFAULT_CONCURRENCY, RetryPolicy
from ikigai_tui.core.provider import Limits, Provider, ProviderError
from ikigai_tui.llm.errors import missing_key, no_key_message, no_key_warning
from ikigai_tui.core.usage.ledger import Prices
from ikigai_tui.llm.models import model_limits, model_prices
from ikigai_tui.llm.names import UnknownModel
from ikigai_tui.llm.names import resolve as resolve_name
from ikigai_tui.llm.offline import OfflineProvider

OFFLINE = "offline"
_MODEL = re.compile(r"^[A-Za-z0-9_.-]+/\S+$")
# The model chosen when none is configured, by the first provider key found.
DEFAULT_MODELS = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-4o"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-pro"),
)


def default_model(env: Mapping[str, str]) -> str:
    for variable, model in DEFAULT_MODELS:
        if env.get(variable):
            return model
    return OFFLINE


class Providers:
    """The ProviderFactory the CLI and the TUI hand to the session."""

    def __init__(
        self,
        offline_delay: float = 0.0,
        *,
        api_base: str | None = None,
        model_api_bases: Mapping[str, str] | None = None,
        model_input_limits: Mapping[str, int] | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        retry_base_delay: float = 1.0,
        concurrency: int = DEFAULT_CONCURRENCY,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        self.aliases = dict(aliases or {})  # the config's [aliases]: short name -> model
        self.offline_delay = offline_delay
        self.api_base = api_base
        self.model_api_bases = dict(model_api_bases or {})
        self.model_input_limits = dict(model_input_limits or {})  # the config's, over the map
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        # Read by the gateway: one retry policy, one concurrency limit per provider.
        self.retry = RetryPolicy(max_retries=max_retries, base_delay=retry_base_delay)
        self.concurrency = concurrency

    def resolve(self, model: str) -> str:
        """The full name for what a person typed: an alias, a bare name litellm's map
        knows (`gpt-4o` -> openai/gpt-4o), or a `provider/name`. Raises ProviderError
        (one line, with near matches) for a name that is none of these."""
        try:
            return resolve_name(model, self.aliases)
        except UnknownModel as exc:
            raise ProviderError(str(exc)) from None

    def check(self, model: str) -> str:
        """Raise ProviderError if `model` cannot be used; else return its full name."""
        full = self.resolve(model)
        if full != OFFLINE and not _MODEL.match(full):
            raise ProviderError(
                f"'{model}' is not a model name: give the provider too, like openai/gpt-4o, "
                f"anthropic/claude-sonnet-4-5, gemini/gemini-2.5-pro, or '{OFFLINE}'"
            )
        return full

    def _full(self, model: str) -> str:
        """The full name where one is needed but a name was stored as given."""
        try:
            return self.resolve(model)
        except ProviderError:
            return model

    def ready(self, model: str) -> str | None:
        """Why a request to `model` would fail at once (no key for its provider), or None.
        Asked before a message is committed: the message then stays with the user."""
        missing = self._no_key(model)
        return None if missing is None else no_key_message(*missing)

    def key_warning(self, model: str) -> str | None:
        """A warning line for `model` chosen without its key (/model), or None."""
        missing = self._no_key(model)
        return None if missing is None else no_key_warning(*missing)

    def _no_key(self, model: str) -> tuple[str, str, str | None] | None:
        """(full name, the key's variable, api_base) when `model` needs a key none gives."""
        model = self._full(model)
        if model == OFFLINE:
            return None
        variable = missing_key(model)
        if variable is None:
            return None
        return model, variable, self.model_api_bases.get(model, self.api_base)

    def limits(self, model: str) -> Limits:
        model = self._full(model)
        found = model_limits(model)
        given = self.model_input_limits.get(model)
        return found if given is None else Limits(given, found.reserve, True, "config")

    def prices(self, model: str) -> Prices | None:
        """Dollars per token from litellm's model map; None: the cost is unknown."""
        return model_prices(self._full(model))

    def preload(self, model: str) -> bool:
        """Import litellm and what a first request to `model` loads, in litellm's own thread,
        returning at once; not for the offline model, nor a model without its key (its
        request fails before litellm is needed). Whether a preload was started."""
        if model == OFFLINE or not _MODEL.match(model) or self.ready(model) is not None:
            return False
        from ikigai_tui.llm.litellm_thread import preload

        preload(model)
        return True

    def get(self, model: str) -> Provider:
        model = self.check(model)
        if model == OFFLINE:
            return OfflineProvider(model, self.offline_delay)
        from ikigai_tui.llm.litellm_provider import LiteLLMProvider

        return LiteLLMProvider(
            model, api_base=self.model_api_bases.get(model, self.api_base), timeout=self.timeout,
        )
