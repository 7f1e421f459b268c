"""The config file's tables ([models."NAME"], [aliases], [keymap], [permissions],
[mcp.NAME]), each
read and checked with the place of a bad entry named, and where a key is written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ikigai_tui.config.errors import ConfigError
from ikigai_tui.core.tools.servers import NAME_PATTERN, SEPARATOR, ServerConfig


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


_MCP_KEYS = ("command", "url", "env", "cwd", "headers", "timeout", "startup_timeout")


def _strings(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _read_mcp(path: Path, text: str, value: Any) -> tuple[ServerConfig, ...]:
    """[mcp.NAME] tables: an MCP server run as `command = [...]` (stdio) or reached at
    `url = "..."` (streamable HTTP), with optional `env`, `cwd`, `headers`, `timeout`."""
    if not isinstance(value, dict):
        raise ConfigError(f"{_where(path, text, 'mcp')}: 'mcp' must hold tables, like [mcp.github]")
    servers = []
    for name, table in value.items():
        head = f"{path}: [mcp.{name}]"
        if not isinstance(table, dict):
            raise ConfigError(f"{head} must be a table (command = [...] or url = \"...\")")
        if not NAME_PATTERN.match(name) or SEPARATOR in name:
            raise ConfigError(f"{head}: a server's name takes letters, digits, '_' and '-' "
                              f"only, and no '{SEPARATOR}'")
        unknown = [k for k in table if k not in _MCP_KEYS]
        if unknown:
            raise ConfigError(f"{head}: unknown key '{unknown[0]}' (known: {', '.join(_MCP_KEYS)})")
        command, url = table.get("command"), table.get("url")
        if (command is None) == (url is None):
            raise ConfigError(f"{head} needs either command = [...] (stdio) or url = \"...\" "
                              "(streamable HTTP), not both")
        if command is not None and (not isinstance(command, list) or not command
                                    or not all(isinstance(c, str) and c for c in command)):
            raise ConfigError(f'{head}: command must be a list of words, like ["npx", "-y", "server"]')
        if url is not None and (not isinstance(url, str)
                                or not re.match(r"^https?://[^/\s]+", url)):
            raise ConfigError(f"{head}: url must be an http:// or https:// address")
        for key in ("env", "headers"):
            if key in table and not _strings(table[key]):
                raise ConfigError(f"{head}: {key} must be a table of strings")
        if url is not None and "env" in table or command is not None and "headers" in table:
            wrong = "env" if url is not None else "headers"
            raise ConfigError(f"{head}: {wrong} is for "
                              f"{'a command (stdio)' if wrong == 'env' else 'a url (HTTP)'} server")
        if "cwd" in table and (not isinstance(table["cwd"], str) or url is not None):
            raise ConfigError(f"{head}: cwd must be a folder, for a command (stdio) server")
        seconds = {}
        for key in ("timeout", "startup_timeout"):
            value = table.get(key, ServerConfig._field_defaults[key])
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not 0 < value <= 3600):
                raise ConfigError(f"{head}: {key} must be seconds, more than 0 and at most 3600")
            seconds[key] = float(value)
        servers.append(ServerConfig(name, tuple(command or ()), url or "",
                                    dict(table.get("env", {})), table.get("cwd", ""),
                                    dict(table.get("headers", {})), **seconds))
    return tuple(servers)


# The tables the config file may hold, by name -> their reader.
TABLES = {"aliases": _read_aliases, "models": _read_models, "keymap": _read_keymap,
          "permissions": _read_permissions, "mcp": _read_mcp}
