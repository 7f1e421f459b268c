"""Model name -> provider."""

from __future__ import annotations

from ikigai_tui.core.provider import Provider, ProviderError
from ikigai_tui.llm.offline import OfflineProvider

OFFLINE = "offline"


class Providers:
    """The ProviderFactory the CLI and the TUI hand to the session."""

    def __init__(self, offline_delay: float = 0.0) -> None:
        self.offline_delay = offline_delay

    def check(self, model: str) -> None:
        if model != OFFLINE:
            raise ProviderError(
                f"model '{model}' is not available: this version has only the built-in "
                f"'{OFFLINE}' model (provider support through litellm is not built yet)"
            )

    def get(self, model: str) -> Provider:
        self.check(model)
        return OfflineProvider(model, self.offline_delay)
