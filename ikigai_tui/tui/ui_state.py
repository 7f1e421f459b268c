"""Choices made in the full screen that outlive it (the theme picked in the palette, the
agent tree's width, and each database's place: its panes and the active one), kept in a
small file of their own beside the config file: `state.toml`.

The config file is the user's: rewriting it would need a TOML library that keeps
comments and order (tomlkit, one more dependency) and would still race an editor that
has it open. So the program only ever writes this file, and reads the config file.

A theme picked in the palette is kept with the config's `theme` as it was then: while
the config says the same, the pick wins; once the user edits the config's `theme`, the
config wins again (an edit is the newer choice).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ikigai_tui.support.folders import make_private_folders

__all__ = ["STATE_NAME", "state_path", "read_state", "write_state", "chosen_theme",
           "start_theme", "ThemeKeeper", "PlaceKeeper", "AttentionKeeper"]

STATE_NAME = "state.toml"
PLACES_KEPT = 20  # databases whose place is kept (the most recently left)


def state_path(config_path: Path) -> Path:
    return config_path.parent / STATE_NAME


def read_state(path: Path) -> dict[str, Any]:
    """The saved choices; {} when there are none or the file cannot be read (it only
    holds conveniences, written by the program: a damaged one is replaced at the next
    choice, never a reason to refuse to start)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    import tomllib  # only when there is a file: not on every start

    try:
        data = tomllib.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    # A JSON string is a TOML basic string (the same escapes, \uXXXX included).
    return json.dumps(str(value), ensure_ascii=False)


def write_state(path: Path, **values: Any) -> None:
    """Merge `values` into the file (None removes a key), atomically: a crash leaves the
    old file or the new one, never half of one. Raises OSError."""
    state = read_state(path)
    for key, value in values.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    lines = ["# Written by ikigai: choices made in the full screen (the theme picked in",
             "# the palette, the tree's width, the panes each database showed). Settings",
             "# of your own go in config.toml, beside this file.", ""]
    lines += [f"{key} = {_toml_value(value)}" for key, value in sorted(state.items())
              if isinstance(value, (str, int, float, bool, list))] + _toml_tables(state)
    make_private_folders(path.parent)  # ~/.config/ikigai: 0700, not the umask's 0755
    fd, temp = tempfile.mkstemp(prefix=".state-", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write("\n".join(lines) + "\n")
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _toml_tables(table: dict[str, Any], prefix: str = "") -> list[str]:
    """The tables in `table` (`[places."/path/db"]`), after its plain keys as TOML wants."""
    lines: list[str] = []
    for key, value in table.items():
        if not isinstance(value, dict):
            continue
        name = prefix + json.dumps(str(key), ensure_ascii=False)
        plain = [(k, v) for k, v in value.items() if not isinstance(v, dict)]
        if plain:
            lines += ["", f"[{name}]"]
            lines += [f"{json.dumps(str(k), ensure_ascii=False)} = {_toml_value(v)}"
                      for k, v in plain]
        lines += _toml_tables(value, name + ".")
    return lines


def chosen_theme(state: dict[str, Any], config_theme: str | None) -> str | None:
    """The theme picked in the palette, while the config's `theme` is what it was then."""
    theme = state.get("theme")
    if not isinstance(theme, str) or not theme:
        return None
    if state.get("config_theme", "") != (config_theme or ""):
        return None
    return theme


def start_theme(config, available: Iterable[str], env: Mapping[str, str] | None = None) -> str | None:
    """The theme to start in, or None for Textual's (its default, or $TEXTUAL_THEME).

    IKIGAI_THEME first, then $TEXTUAL_THEME (Textual reads it itself), then the theme
    picked in the palette, then the config's `theme`. A name no theme has is a
    ConfigError naming where it was set, whichever of them wins."""
    from ikigai_tui.config import ConfigError

    env = os.environ if env is None else env
    names = sorted(available)

    def check(name: str, where: str) -> str:
        if name not in names:
            raise ConfigError(f"{where}: unknown theme '{name}' (known: {', '.join(names)})")
        return name

    if config.theme:
        check(config.theme, config.theme_origin or str(config.config_path))
    if config.theme_override:
        return check(config.theme_override, f"IKIGAI_THEME={config.theme_override!r}")
    if env.get("TEXTUAL_THEME"):
        return None
    picked = chosen_theme(read_state(state_path(config.config_path)), config.theme)
    if picked in names:
        return picked
    return config.theme


class _Keeper:
    """Writes choices to the state file; a failure to write is told once, in a
    notification (they are conveniences: the session goes on)."""

    def __init__(self, app, config) -> None:
        self.app = app
        self.path = state_path(config.config_path)
        self.failed = False

    def _write(self, what: str, **values: Any) -> None:
        try:
            write_state(self.path, **values)
        except OSError as exc:
            if not self.failed:
                self.failed = True
                self.app.notify(f"{what} is not kept for the next start: cannot write "
                                f"{self.path}: {exc.strerror}", severity="warning")


class ThemeKeeper(_Keeper):
    """Saves the theme picked in the palette (any change of the app's theme after the
    start) to the state file."""

    def __init__(self, app, config) -> None:
        super().__init__(app, config)
        self.config_theme = config.theme
        self.saved = app.theme
        app.theme_changed_signal.subscribe(app, self._changed)

    def _changed(self, theme) -> None:
        if theme.name == self.saved:
            return
        self.saved = theme.name
        self._write("The theme", theme=theme.name, config_theme=self.config_theme or "")


class PlaceKeeper(_Keeper):
    """Where the user left off: the agent tree's width (one for every database), and per
    database the agents its panes showed and which pane was active (the focused agent).
    Read once at the start; written as they change, so a killed program keeps them too."""

    def __init__(self, app, config) -> None:
        super().__init__(app, config)
        self.db = _db_key(config)
        state = read_state(self.path)
        self.saved_width = _whole(state.get("tree_width"))
        place = state.get("places", {}).get(self.db) if isinstance(state.get("places"), dict) else None
        place = place if isinstance(place, dict) else {}
        panes = place.get("panes")
        self.saved_panes = [p for p in panes if isinstance(p, str)] if isinstance(panes, list) else []
        self.saved_active = _whole(place.get("active")) or 0

    def tree_width(self) -> int | None:
        return self.saved_width

    def place(self, exists: Callable[[str], bool], fallback: str,
              most: int) -> tuple[list[str], int]:
        """The agents the panes showed (those that still `exist`, at most `most`, else
        `fallback` alone) and the active pane's index among them."""
        active_id = (self.saved_panes[self.saved_active]
                     if 0 <= self.saved_active < len(self.saved_panes) else None)
        panes = [a for a in dict.fromkeys(self.saved_panes) if exists(a)][:most] or [fallback]
        return panes, panes.index(active_id) if active_id in panes else 0

    def keep_tree_width(self, width: int) -> None:
        if width != self.saved_width:
            self.saved_width = width
            self._write("The tree's width", tree_width=width)

    def keep_place(self, panes: list[str], active: int) -> None:
        if (panes, active) == (self.saved_panes, self.saved_active):
            return
        self.saved_panes, self.saved_active = list(panes), active
        places = read_state(self.path).get("places")
        places = dict(places) if isinstance(places, dict) else {}
        places.pop(self.db, None)  # to the end: the most recent
        places[self.db] = {"panes": list(panes), "active": active}
        self._write("The panes' place",
                    places=dict(list(places.items())[-PLACES_KEPT:]))


class AttentionKeeper(_Keeper):
    """Who needs you, across restarts: per database the news not seen yet (agent id ->
    its words, tui/unseen.py: a finished turn, a failure, mail not looked at), and
    whether the tree hides the dead agents (one choice for every database). Kept here,
    not in the log: looking is the user's, not the agents' history."""

    def __init__(self, app, config) -> None:
        super().__init__(app, config)
        self.db = _db_key(config)
        state = read_state(self.path)
        every = state.get("news")
        mine = every.get(self.db) if isinstance(every, dict) else None
        self.saved_news: dict[str, str] = ({k: v for k, v in mine.items() if isinstance(v, str)}
                                           if isinstance(mine, dict) else {})
        self.hide_dead = state.get("tree_hide_dead") is True

    def keep_news(self, news: dict[str, str]) -> None:
        if news == self.saved_news:
            return
        self.saved_news = dict(news)
        every = read_state(self.path).get("news")
        every = dict(every) if isinstance(every, dict) else {}
        every.pop(self.db, None)  # to the end: the most recent
        if news:
            every[self.db] = dict(news)
        self._write("The news not seen", news=dict(list(every.items())[-PLACES_KEPT:]) or None)

    def keep_hide_dead(self, hidden: bool) -> None:
        if hidden != self.hide_dead:
            self.hide_dead = hidden
            self._write("Hiding the dead agents", tree_hide_dead=hidden or None)


def _db_key(config) -> str:
    """The database as the state file names it."""
    return config.db_shown if config.db_is_url else os.path.abspath(config.db)


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
