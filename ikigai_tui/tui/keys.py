"""Keys as Textual spells them ("ctrl+t", "pageup") and as the user calls them ("Ctrl+T",
"PgUp"): the one naming of keys on screen. Imports only Textual, so the binding tables
(tui/bindings.py), the [keymap] check (tui/keymap.py), the app and every screen can use it.
"""

from __future__ import annotations

__all__ = ["keys_of", "key_name", "normal"]


def normal(key: str) -> str:
    """One key as Textual's bindings hold it (a character becomes its name: "?" ->
    "question_mark")."""
    from textual.keys import _character_to_key

    *modifiers, name = key.strip().split("+")
    if len(name) == 1:
        name = _character_to_key(name)
    return "+".join([*modifiers, name])


def keys_of(keys: str) -> list[str]:
    """A binding's key string (`"f6,ctrl+e"`) as normalised keys."""
    return [normal(key) for key in keys.split(",") if key.strip()]


_SPOKEN = {"escape": "Esc", "pageup": "PgUp", "pagedown": "PgDn", "delete": "Del",
           "insert": "Ins"}


def key_name(key: str) -> str:
    """A key as the user calls it: "ctrl+t" -> "Ctrl+T", "f8" -> "F8", "escape" -> "Esc".

    The one naming of keys on screen: the welcome, the footer and the palette's key panel
    (through IkigaiApp.get_key_display) and Help all say keys this way."""
    from textual.keys import key_to_character

    *modifiers, name = normal(key).split("+")
    if name in _SPOKEN:
        spoken = _SPOKEN[name]
    elif len(name) == 1 or (name[:1] == "f" and name[1:].isdigit()):
        spoken = name.upper()
    else:
        char = key_to_character(name)
        spoken = char if char and char.isprintable() and not char.isspace() else name.title()
    return "+".join([*(m.capitalize() for m in modifiers), spoken])
