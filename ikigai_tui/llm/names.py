"""Model names as people write them: `provider/name`, a bare name litellm's model map
knows (`gpt-4o`, `claude-sonnet-4-5`), or an alias from the config's [aliases].

Everything here reads litellm's bundled data files (the model map and its list of
providers) as JSON; litellm itself is never imported, so this is offline and quick.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
import re
from collections.abc import Mapping
from pathlib import Path

from ikigai_tui.llm.models import _model_map, published_full_name

OFFLINE = "offline"
_FULL = re.compile(r"^[A-Za-z0-9_.-]+/\S+$")
_BARE = re.compile(r"^[A-Za-z0-9_.:@-]+$")
# Where a bare name goes when the map lists it under several providers (or lists it
# bare under one whose names need a prefix): the providers people mean first.
PREFERRED = ("anthropic", "openai", "gemini", "mistral", "deepseek", "xai", "groq",
             "cohere_chat", "perplexity", "together_ai", "fireworks_ai", "ollama")


class UnknownModel(ValueError):
    """A name that is no model: the message is one line, with near matches."""


def _litellm_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@functools.lru_cache(maxsize=1)
def known_providers() -> frozenset[str]:
    """Provider prefixes litellm routes (its provider list, and the map's providers)."""
    found: set[str] = {"ollama", "ollama_chat", "openai", "anthropic", "gemini"}
    folder = _litellm_dir()
    if folder is not None:
        try:
            data = json.loads((folder / "provider_endpoints_support_backup.json").read_text("utf-8"))
            found.update(name.split("/")[0] for name in data.get("providers", {}))
        except (OSError, ValueError, AttributeError):
            pass
    for key, info in _model_map().items():
        if isinstance(info, dict) and "/" in key:
            found.add(key.split("/", 1)[0])
    return frozenset(found)


@functools.lru_cache(maxsize=1)
def _bare_table() -> dict[str, str]:
    """Bare chat model name -> its full name, for the preferred providers."""
    table: dict[str, str] = {}
    rank = {p: n for n, p in enumerate(PREFERRED)}
    best: dict[str, int] = {}
    for key, info in _model_map().items():
        if not isinstance(info, dict) or info.get("mode") not in (None, "chat", "responses"):
            continue
        provider, _, name = key.partition("/")
        if not name:  # listed bare: under its provider's name
            provider, name = str(info.get("litellm_provider") or ""), key
        if provider not in rank or "/" in name:
            continue
        if rank[provider] < best.get(name, len(PREFERRED)):
            best[name] = rank[provider]
            table[name] = f"{provider}/{name}"
    return table


def _near(name: str, aliases: Mapping[str, str]) -> list[str]:
    pool = [OFFLINE, *aliases, *_bare_table()]
    if "/" in name:
        pool += list(_bare_table().values())
    found = difflib.get_close_matches(name, pool, n=4, cutoff=0.6)
    lowered = name.lower()
    if not found:  # a fragment: "sonnet", "4o-mini"
        found = sorted((p for p in pool if lowered in p.lower()), key=len)[:4]
    return found


def _unknown(name: str, why: str, aliases: Mapping[str, str]) -> UnknownModel:
    near = _near(name, aliases)
    hint = f"; did you mean {', '.join(near)}?" if near else (
        "; give the provider too, like openai/gpt-4o or anthropic/claude-sonnet-4-5, or 'offline'")
    return UnknownModel(f"'{name}' is not a model name {why}{hint}")


def resolve(name: str, aliases: Mapping[str, str] | None = None) -> str:
    """The full litellm name `name` stands for; UnknownModel if it is none."""
    aliases = aliases or {}
    given = name.strip()
    model = aliases.get(given, given)
    if model == OFFLINE:
        return OFFLINE
    if _FULL.match(model):
        provider = model.split("/", 1)[0]
        if provider in PREFERRED:  # the common case reads no file
            return model
        providers = known_providers()
        if len(providers) > 5 and provider not in providers:
            near = difflib.get_close_matches(provider, providers, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(f'{p}/' for p in near)}?" if near else ""
            raise UnknownModel(f"'{given}' is not a model name litellm knows: it has no "
                               f"provider '{provider}'{hint}")
        return model
    if _BARE.match(model):
        full = _bare_table().get(model) or published_full_name(model)
        if full is not None:
            return full
        why = "litellm knows, nor an alias"
        if model != given:
            why = f"litellm knows (the config's alias '{given}' stands for it)"
        raise _unknown(model, why, aliases)
    raise _unknown(model, "(a name has no spaces)" if model.split() != [model] else
                   "litellm knows", aliases)
