"""Settings: the TOML config file, then IKIGAI_* environment variables, then flags."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from ikigai_tui.config import compact as config_compact
from ikigai_tui.config import mail as config_mail
from ikigai_tui.config import tools as config_tools
from ikigai_tui.config.errors import ConfigError, OptionError
from ikigai_tui.config.tables import TABLES, _where
from ikigai_tui.core.tokens.limits import DEFAULT_BUDGET
from ikigai_tui.core.tools.servers import ServerConfig
from ikigai_tui.support.urls import is_url, shown

APP = "ikigai"


@dataclass(frozen=True)
class Config:
    db: Path | str  # a SQLite file, or a postgresql:// URL (config.db_shown: no password)
    model: str | None  # None: the default (offline until a provider is configured)
    api_base: str | None
    budget: int
    system_prompt: str | None
    offline_delay: float
    config_path: Path
    timeout: float = 120.0
    max_retries: int = 4
    concurrency: int = 4  # LLM requests in flight at once per provider (turns and side requests)
    model_api_bases: dict[str, str] = field(default_factory=dict)
    model_input_limits: dict[str, int] = field(default_factory=dict)  # over litellm's map
    matcher_model: str | None = None  # /forget and /remember's model (None: the agent's)
    matcher_concurrency: int = 4  # a matcher's requests in flight at once
    matcher_chunk_tokens: int | None = None  # cap on one matcher request's messages
    # The full screen's settings (checked by the TUI, which knows the themes and keys):
    theme: str | None = None  # the config file's (the palette's pick may be newer)
    theme_origin: str = ""  # "FILE, line N" of `theme`, for an error naming it
    theme_override: str | None = None  # IKIGAI_THEME: over the file and the palette's pick
    keymap: dict[str, str] = field(default_factory=dict)  # binding id -> keys
    bell: bool = False  # ring the terminal's bell on a background agent's news
    notify: str = "off"  # a desktop notification through the terminal: off|auto|osc9|osc777
    keymap_origins: dict[str, str] = field(default_factory=dict)  # binding id -> "FILE, line N"
    aliases: dict[str, str] = field(default_factory=dict)  # [aliases]: short name -> model
    # The memory tool (issue 15): its folder (None: <user data dir>/memories), whether the
    # LLM's writes wait for the user ("ask") or not ("auto"), and the folder's limits.
    memories_dir: Path | None = None
    memory_writes: str = "auto"
    memory_file_bytes: int = 1_000_000
    memory_files: int = 200
    memory_total_bytes: int = 20_000_000
    # Context changes the agent's LLM asks for (its /clear, /rewind, filter_context):
    # "ask" (reviewed like the user's own), "allow" or "deny" (core/tools/context_review.py)
    llm_context_changes: str = "ask"
    # -- compaction (issue 15): /compact's model, auto-compaction, pruned-turn summaries
    compact_model: str | None = None  # None: the agent's own model
    auto_compact: str = "off"  # off | on | ask
    compact_warn: float = 0.8  # shares of the agent's budget
    compact_at: float = 0.9
    summarize_pruned: bool = False
    summary_reserve: float = 0.1  # share of the budget for the pruned turns' summaries
    # [permissions] (issue 25): tool name or fnmatch pattern -> allow / ask / deny
    # (core/tools/permissions.py; no rule: the default of the tool's access)
    permissions: dict[str, str] = field(default_factory=dict)
    # [mcp.NAME] (issue 25): the MCP servers whose tools are offered (core/tools/servers.py)
    mcp_servers: tuple[ServerConfig, ...] = ()
    # --cwd: the root's workspace (its file tools' folder), recorded as a `cwd` event;
    # None: the folder ikigai was started in, unless /cwd or an earlier --cwd set one.
    cwd: Path | None = None
    # -- tools (issue 25): tool rounds per turn, bash's longest timeout, the withheld
    # environment variables the tools' child processes may still get
    max_tool_rounds: int = 25
    bash_max_timeout: float = 600.0
    tool_env_pass: tuple[str, ...] = ()
    # clearing old tool output (core/tool_results): the automatic rule's trigger (a share
    # of the budget; None: off), the latest results kept, the tools never cleared
    tool_results_trigger: float | None = None
    tool_results_keep: int = 3
    tool_results_exclude: tuple[str, ...] = ("memory",)
    # -- mail (issue 27, config/mail.py): "wake" | "manual" (None: the default, a child
    # wakes and the root does not), woken turns in a row, the LLM's /wait timeout
    mail: str | None = None
    wake_limit: int = 10
    wait_timeout: float = 600.0

    @property
    def db_shown(self) -> str:
        """The database as people see it: a file's path, or a URL without its password."""
        return shown(self.db)

    @property
    def db_is_url(self) -> bool:
        return is_url(self.db)


def default_db() -> Path:
    return Path(platformdirs.user_data_dir(APP)) / "ikigai.db"


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP)) / "config.toml"


def memories_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP)) / "memories"


# key -> (type, description) for the config file
_KEYS: dict[str, tuple[type, str]] = {
    "db": (str, "a path"),
    "model": (str, "a model name"),
    "api_base": (str, "a URL"),
    "sliding_context_tokens": (int, "a whole number of tokens (0 disables)"),
    "system_prompt": (str, "text"),
    "offline_delay": (float, "seconds"),
    "timeout": (float, "seconds"),
    "max_retries": (int, "a whole number"),
    "concurrency": (int, "a whole number of requests per provider"),
    "matcher_model": (str, "a model name"),
    "matcher_concurrency": (int, "a whole number of requests"),
    "matcher_chunk_tokens": (int, "a whole number of tokens"),
    "theme": (str, "a theme name"),
    "bell": (bool, "true or false"),
    "notify": (str, '"off", "auto", "osc9" or "osc777"'),
    # the memory tool
    "memories_dir": (str, "a path"),
    "memory_writes": (str, '"auto" or "ask"'),
    "memory_file_bytes": (int, "a whole number of bytes"),
    "memory_files": (int, "a whole number of files"),
    "memory_total_bytes": (int, "a whole number of bytes"),
    "llm_context_changes": (str, '"ask", "allow" or "deny"'),
    **config_compact.KEYS,  # compaction (issue 15)
    **config_tools.KEYS,  # tools (issue 25)
    **config_mail.KEYS,  # mail (issue 27)
}
def read_file(path: Path) -> dict[str, Any]:
    """The config file's settings, validated; {} when there is no file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    try:
        import tomllib  # only when there is a file: not on every start

        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib names a place only: name the key written on that line too.
        at = re.search(r"at line (\d+)", str(exc))
        lines = text.splitlines()
        line = lines[int(at.group(1)) - 1] if at and 0 < int(at.group(1)) <= len(lines) else ""
        key = line.split("=", 1)[0].strip().strip('"') if "=" in line else ""
        raise ConfigError(f"config file {path}: {f'{key!r}: ' if key else ''}{exc}") from exc
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in TABLES:
            out[key] = TABLES[key](path, text, value)
            continue
        if key not in _KEYS:
            known = ", ".join(sorted([*_KEYS, *TABLES]))
            raise ConfigError(f"{_where(path, text, key)}: unknown key '{key}' (known: {known})")
        kind, description = _KEYS[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise ConfigError(f"{_where(path, text, key)}: '{key}' must be {description}")
        problem = _problem(key, value)
        if problem:
            raise ConfigError(f"{_where(path, text, key)}: '{key}' {problem}")
        out[key] = value
    if "theme" in out:
        out["theme_origin"] = _where(path, text, "theme")
    return out


def _problem(key: str, value: Any) -> str | None:
    """Why a setting cannot work, or None. A zero timeout would fail every call (and
    write an error event each time); a NaN delay would never end a reply."""
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number"
    if key == "timeout" and value <= 0:
        return "must be more than 0 seconds"
    if key in ("sliding_context_tokens", "max_retries", "offline_delay") and value < 0:
        return "must be 0 or more"
    if key in ("concurrency", "matcher_concurrency") and value < 1:
        return "must be 1 or more"
    if key == "matcher_chunk_tokens" and value < 256:
        return "must be 256 or more"
    if key in config_compact.KEYS:
        return config_compact.problem(key, value)
    if key in config_tools.KEYS:
        return config_tools.problem(key, value)
    if key in config_mail.KEYS:
        return config_mail.problem(key, value)
    if key == "matcher_model" and not value.strip():
        return "must not be empty"
    if key == "concurrency" and value < 1:
        return "must be 1 or more"
    if key in ("model", "db", "api_base", "theme", "memories_dir") and not value.strip():
        return "must not be empty"
    if key == "llm_context_changes" and value not in ("ask", "allow", "deny"):
        return 'must be "ask", "allow" or "deny"'
    if key == "notify" and value not in ("off", "auto", "osc9", "osc777"):
        return 'must be "off", "auto", "osc9" or "osc777"'
    if key == "memory_writes" and value not in ("auto", "ask"):
        return 'must be "auto" or "ask"'
    if key in ("memory_file_bytes", "memory_files", "memory_total_bytes") and value < 1:
        return "must be 1 or more"
    return None


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a whole number") from None
    return _checked_env(name, raw, value)


def _env_float(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None
    return _checked_env(name, raw, value)


_ENV_KEYS = {"IKIGAI_SLIDING_CONTEXT_TOKENS": "sliding_context_tokens",
             "IKIGAI_MAX_RETRIES": "max_retries", "IKIGAI_TIMEOUT": "timeout",
             "IKIGAI_OFFLINE_DELAY": "offline_delay", "IKIGAI_CONCURRENCY": "concurrency",
             "IKIGAI_MATCHER_CONCURRENCY": "matcher_concurrency",
             "IKIGAI_MATCHER_CHUNK_TOKENS": "matcher_chunk_tokens",
            "IKIGAI_MEMORY_WRITES": "memory_writes",
            "IKIGAI_LLM_CONTEXT_CHANGES": "llm_context_changes", **config_compact.ENV,
            **config_tools.ENV, **config_mail.ENV}


def _checked_env(name: str, raw: str, value: Any) -> Any:
    problem = _problem(_ENV_KEYS[name], value)
    if problem:
        raise ConfigError(f"{name}={raw!r} {problem}")
    return value


def _check_flags(**flags: str | None) -> None:
    """A flag given explicitly empty (`--model ""`) is a mistake, not "use the default"."""
    for name, value in flags.items():
        if value is not None and not value.strip():
            option = "--" + name.replace("_", "-")
            raise ConfigError(f"{option} is empty: give a value or leave the option out")


def load(
    *,
    db: str | None = None,
    model: str | None = None,
    api_base: str | None = None,
    config_path: str | None = None,
    env: Mapping[str, str] | None = None,
    matcher_model: str | None = None,
    cwd: str | None = None,
) -> Config:
    """Resolve the settings: flags over IKIGAI_* variables over the config file."""
    env = os.environ if env is None else env
    _check_flags(db=db, model=model, api_base=api_base, config=config_path,
                 matcher_model=matcher_model, cwd=cwd)
    path = Path(config_path or env.get("IKIGAI_CONFIG") or default_config_path()).expanduser()
    file = read_file(path)
    models = file.get("models", {})
    budget = _env_int(env, "IKIGAI_SLIDING_CONTEXT_TOKENS")
    delay = _env_float(env, "IKIGAI_OFFLINE_DELAY")
    timeout = _env_float(env, "IKIGAI_TIMEOUT")
    retries = _env_int(env, "IKIGAI_MAX_RETRIES")
    concurrency = _env_int(env, "IKIGAI_CONCURRENCY")
    matcher_concurrency = _env_int(env, "IKIGAI_MATCHER_CONCURRENCY")
    chunk_tokens = _env_int(env, "IKIGAI_MATCHER_CHUNK_TOKENS")
    compaction = config_compact.read(env, file, _env_float, _checked_env, ConfigError)
    return Config(
        db=_database(db or env.get("IKIGAI_DB") or file.get("db") or default_db()),
        model=model or env.get("IKIGAI_MODEL") or file.get("model"),
        api_base=api_base or env.get("IKIGAI_API_BASE") or file.get("api_base"),
        budget=budget if budget is not None else file.get("sliding_context_tokens", DEFAULT_BUDGET),
        system_prompt=env.get("IKIGAI_SYSTEM_PROMPT") or file.get("system_prompt"),
        offline_delay=delay if delay is not None else file.get("offline_delay", 0.0),
        config_path=path,
        model_api_bases={m: v["api_base"] for m, v in models.items() if "api_base" in v},
        model_input_limits={m: v["max_input_tokens"] for m, v in models.items()
                            if "max_input_tokens" in v},
        timeout=timeout if timeout is not None else file.get("timeout", 120.0),
        max_retries=retries if retries is not None else file.get("max_retries", 4),
        concurrency=concurrency if concurrency is not None else file.get("concurrency", 4),
        matcher_model=matcher_model or env.get("IKIGAI_MATCHER_MODEL") or file.get("matcher_model"),
        matcher_concurrency=(matcher_concurrency if matcher_concurrency is not None
                             else file.get("matcher_concurrency", 4)),
        matcher_chunk_tokens=chunk_tokens if chunk_tokens is not None else file.get("matcher_chunk_tokens"),
        theme=file.get("theme"),
        bell=file.get("bell", False),
        notify=file.get("notify", "off"),
        theme_origin=file.get("theme_origin", ""),
        theme_override=env.get("IKIGAI_THEME") or None,
        keymap={i: keys for i, (keys, _where) in file.get("keymap", {}).items()},
        keymap_origins={i: where for i, (_keys, where) in file.get("keymap", {}).items()},
        aliases=file.get("aliases", {}),
        permissions=file.get("permissions", {}),
        mcp_servers=file.get("mcp", ()),
        **_memory_settings(env, file),
        llm_context_changes=_llm_context_changes(env, file),
        **compaction,
        cwd=_folder("--cwd", cwd) if cwd is not None else None,
        **config_tools.read(env, file, _env_int, _env_float, _checked_env),
        **config_mail.read(env, file, _checked_env),
    )


def _database(target: str | Path) -> Path | str:
    """A SQLite file's path, or a PostgreSQL URL as it is (support/urls.py)."""
    return str(target) if is_url(target) else Path(target).expanduser()


def _folder(option: str, text: str) -> Path:
    """An existing folder, as an absolute path."""
    folder = Path(text).expanduser().absolute()
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ConfigError(f"{option} {text}: {folder} {what}")
    return Path(os.path.normpath(folder))


def _llm_context_changes(env: Mapping[str, str], file: dict[str, Any]) -> str:
    raw = env.get("IKIGAI_LLM_CONTEXT_CHANGES")
    if raw:
        return _checked_env("IKIGAI_LLM_CONTEXT_CHANGES", raw, raw)
    return file.get("llm_context_changes", "ask")


def _memory_settings(env: Mapping[str, str], file: dict[str, Any]) -> dict[str, Any]:
    folder = env.get("IKIGAI_MEMORIES_DIR") or file.get("memories_dir")
    writes = env.get("IKIGAI_MEMORY_WRITES") or file.get("memory_writes", "auto")
    if writes not in ("auto", "ask"):
        raise ConfigError(f"IKIGAI_MEMORY_WRITES={writes!r} must be \"auto\" or \"ask\"")
    return {"memories_dir": Path(folder).expanduser() if folder else None,
            "memory_writes": writes,
            "memory_file_bytes": file.get("memory_file_bytes", 1_000_000),
            "memory_files": file.get("memory_files", 200),
            "memory_total_bytes": file.get("memory_total_bytes", 20_000_000)}
