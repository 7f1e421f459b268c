"""A session's settings, one record handed in by the composition root (runtime/)."""

from __future__ import annotations

from typing import NamedTuple

from ikigai_tui.core.compaction import CompactionSettings
from ikigai_tui.core.mailwake import MailSettings
from ikigai_tui.core.tokens.limits import DEFAULT_BUDGET
from ikigai_tui.core.tool_results import ToolResultsSettings
from ikigai_tui.core.tools.running import ToolSettings

__all__ = ["SessionSettings"]


class SessionSettings(NamedTuple):
    model: str = "offline"
    budget: int = DEFAULT_BUDGET
    system_prompt: str | None = None
    matcher_model: str | None = None  # None: the agent's own model
    matcher_concurrency: int = 4  # a matcher's side requests in flight at once
    matcher_chunk_tokens: int | None = None  # cap on one request's chunk (None: the model's limit)
    compaction: CompactionSettings = CompactionSettings()  # /compact, auto-compaction
    # The workspace of an agent without a `cwd` event: the folder ikigai was started in
    # (None: the process's working folder when asked).
    workspace: str | None = None
    tools: ToolSettings = ToolSettings()  # tool rounds per turn, bash's timeout, the environment
    # /forget --tool-results's defaults and its automatic rule (core/tool_results)
    tool_results: ToolResultsSettings = ToolResultsSettings()
    # Context changes the agent's LLM asks for (core/tools/context_review.py): "ask", "allow"
    # or "deny". The config's default is "ask"; a Session built without one allows them.
    llm_context_changes: str = "allow"
    mail: MailSettings = MailSettings()  # mail that wakes, reports, /wait (core/mailbox.py)
