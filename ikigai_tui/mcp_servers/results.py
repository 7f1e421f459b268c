"""An MCP tool result as the text a tool result holds: text content as it is, any other
content described in one line (never dropped silently), structured content as JSON when
nothing else came, capped."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

RESULT_LIMIT = 100_000  # characters of one result kept (its start)


def _size(data: str) -> str:
    """The size of base64 data, decoded, for people."""
    try:
        n = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        n = len(data) * 3 // 4
    return f"{n:,} bytes" if n < 10_240 else f"{n / 1024:,.1f} KB"


def block_text(block: Any) -> str:
    """One content block: its text, or a line saying what it was."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} content: {block.mime_type}, {_size(block.data)}; not shown to the model]"
    if kind == "resource_link":
        name = f" ({block.name})" if getattr(block, "name", "") else ""
        mime = f", {block.mime_type}" if getattr(block, "mime_type", None) else ""
        return f"[resource link: {block.uri}{name}{mime}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource {resource.uri}]\n{text}"
        mime = getattr(resource, "mime_type", None) or "binary"
        return f"[resource {resource.uri}: {mime}, {_size(getattr(resource, 'blob', ''))}; not shown to the model]"
    return f"[{kind or type(block).__name__} content; not shown to the model]"


def render(result: Any) -> str:
    """The text stored as the tool result."""
    parts = [block_text(block) for block in (getattr(result, "content", None) or [])]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(parts) if parts else "(no output)"
    if len(text) > RESULT_LIMIT:
        cut = len(text) - RESULT_LIMIT
        text = text[:RESULT_LIMIT] + f"\n[cut: {cut:,} more characters of this result]"
    return text
