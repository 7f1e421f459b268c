"""litellm, imported once, configured to fetch nothing and print nothing (STACK.md): by the
provider (llm/litellm_provider.py) and by litellm's own thread (llm/litellm_thread.py)."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from ikigai_tui.support.heap import collector_paused
from ikigai_tui.llm import lazy_encoding
from ikigai_tui.llm.gentle_json import python_json_here

_lock = threading.Lock()
_litellm: Any = None


def import_litellm() -> Any:
    """Import litellm once, configured to fetch nothing and print nothing."""
    global _litellm
    with _lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
            # Its ~300,000 objects (support/heap.py) and its big JSON files (gentle_json.py): in
            # steps short enough for the event loop to run between them.
            with collector_paused(), python_json_here():
                import litellm

            litellm.suppress_debug_info = True
            litellm.disable_hf_tokenizer_download = True
            litellm.drop_params = True
            with collector_paused():
                # Its default tokenizer, fetched by every request (pricing the prompt, the
                # Anthropic handler) but hardly ever used: built only if used.
                lazy_encoding.install()
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
                logger = logging.getLogger(name)
                logger.handlers.clear()
                logger.addHandler(logging.NullHandler())
                logger.propagate = False
            _litellm = litellm
        return _litellm
