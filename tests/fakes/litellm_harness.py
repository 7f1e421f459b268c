"""What the fake provider's litellm tests share: litellm imported quietly and offline,
the three wire formats with a model each, the slash tool, a guard against hangs, and
where each format's requests go."""

from __future__ import annotations

import os

# Before importing litellm (see /work/shared/STACK.md).
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["LITELLM_MODE"] = "PRODUCTION"

import litellm  # noqa: E402

from tests.fakes.server import FakeProvider  # noqa: E402

litellm.suppress_debug_info = True

FORMATS = ("openai", "anthropic", "gemini")
MODELS = {"openai": "openai/gpt-4o", "anthropic": "anthropic/claude-sonnet-4-5",
          "gemini": "gemini/gemini-2.5-flash"}
TOOLS = [{"type": "function", "function": {
    "name": "slash", "description": "Run a slash command.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"},
                                                    "args": {"type": "string"}},
                   "required": ["command"]}}}]
GUARD = 20  # seconds: no single call may hang the suite


def api_base(fake: FakeProvider, fmt: str) -> str:
    return fake.openai_base if fmt == "openai" else fake.base_url
