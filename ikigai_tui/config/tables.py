"""The config file's tables ([models."NAME"], [aliases], [keymap], [permissions]), each
read and checked with the place of a bad entry named, and where a key is written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ikigai_tui.config.errors import ConfigError


def _line_of(text: str, key: str) -> int | None:
    pattern = re.compile(rf'^\s*("?){re.escape(key)}\1\s*=')
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return None


def _where(path: Path, text: str, key: str) -> str:
    line = _line_of(text, key)
    return f"{path}, line {line}" if line else str(path)


def _table_line(text: str, table: str, key: str) -> int | None:
    """The line of `key = ...` inside the [table] section (or `table.key = ...` anywhere)."""
    header = re.compile(r"^\s*\[\s*([^\]]*?)\s*\]")
    entry = re.compile(rf'^\s*(["\']?){re.escape(key)}\1\s*=')
    dotted = re.compile(rf'^\s*{re.escape(table)}\s*\.\s*(["\']?){re.escape(key)}\1\s*=')
    section = None
    for number, line in enumerate(text.splitlines(), 1):
        found = header.match(line)
        if found:
            section = found.group(1)
        elif section == table and entry.match(line) or section is None and dotted.match(line):
            return number
    return None


def _read_keymap(path: Path, text: str, value: Any) -> dict[str, tuple[str, str]]:
    """[keymap]: binding id -> (keys, "FILE, line N"). Which ids and keys exist is the
    full screen's to check (tui/keymap.py), with these places for its error."""
    if not isinstance(value, dict):
        raise ConfigError(f"{_where(path, text, 'keymap')}: 'keymap' must be a table")
    keymap: dict[str, tuple[str, str]] = {}
    for binding_id, keys in value.items():
        line = _table_line(text, "keymap", binding_id)
        where = f"{path}, line {line}" if line else str(path)
        if not isinstance(keys, str) or not keys.strip():
            raise ConfigError(f"{where}: keymap '{binding_id}' must be keys, such as "
                              f"\"ctrl+e\" or \"f6,ctrl+e\"")
        keymap[binding_id] = (keys, where)
    return keymap


def _read_permissions(path: Path, text: str, value: Any) -> dict[str, str]:
    """[permissions]: a tool's name or an fnmatch pattern -> "allow", "ask" or "deny"."""
    if not isinstance(value, dict):
        raise ConfigError(f"{_where(path, text, 'permissions')}: 'permissions' must be a table")
    rules: dict[str, str] = {}
    for tool, rule in value.items():
        line = _table_line(text, "permissions", tool)
        where = f"{path}, line {line}" if line else str(path)
        if not isinstance(rule, str) or rule not in ("allow", "ask", "deny"):
            raise ConfigError(f'{where}: permissions \'{tool}\' must be "allow", "ask" or "deny"')
        if not tool.strip():
            raise ConfigError(f"{where}: a permissions rule needs a tool name or pattern")
        rules[tool] = rule
    return rules


_MODEL_KEYS = {"api_base": (str, "a URL"),
               "max_input_tokens": (int, "a whole number of tokens, 256 or more")}


def _read_models(path: Path, text: str, value: Any) -> dict[str, dict[str, Any]]:
    """[models."NAME"] tables: where the model is served, and its input limit (for a
    model litellm's map does not list, or lists with another size)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{_where(path, text, 'models')}: 'models' must be a table")
    models: dict[str, dict[str, Any]] = {}
    for model, settings in value.items():
        if not isinstance(settings, dict):
            raise ConfigError(f"{path}: [models.\"{model}\"] must be a table")
        for key, setting in settings.items():
            if key not in _MODEL_KEYS:
                raise ConfigError(
                    f"{_where(path, text, key)}: unknown key '{key}' in [models.\"{model}\"] "
                    f"(known: {', '.join(_MODEL_KEYS)})"
                )
            kind, description = _MODEL_KEYS[key]
            if (not isinstance(setting, kind) or isinstance(setting, bool)
                    or kind is int and setting < 256):
                raise ConfigError(f"{_where(path, text, key)}: '{key}' must be {description}")
            models.setdefault(model, {})[key] = setting
    return models


_ALIAS = re.compile(r"^[A-Za-z0-9_.-]+$")


def _read_aliases(path: Path, text: str, value: Any) -> dict[str, str]:
    """[aliases]: `fast = "openai/gpt-4o-mini"`, usable wherever a model is named."""
    if not isinstance(value, dict):
        raise ConfigError(f"{_where(path, text, 'aliases')}: 'aliases' must be a table")
    aliases: dict[str, str] = {}
    for name, model in value.items():
        where = _where(path, text, name)
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{where}: alias '{name}' must be a model name, like \"openai/gpt-4o-mini\"")
        if not _ALIAS.match(name) or name == "offline":
            raise ConfigError(f"{where}: '{name}' cannot be an alias (letters, digits, '.', "
                              "'_' and '-' only, and not 'offline')")
        aliases[name] = model.strip()
    return aliases


# The tables the config file may hold, by name -> their reader.
TABLES = {"aliases": _read_aliases, "models": _read_models, "keymap": _read_keymap,
          "permissions": _read_permissions}
