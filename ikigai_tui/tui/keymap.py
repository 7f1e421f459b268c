"""The user's `[keymap]`: binding ids -> keys, checked before the full screen starts.

Every binding of the app, the input and the dialogs has an id (`Binding(id=...)`), in the
one table of bindings (tui/bindings.py; this module imports neither the app nor a screen); the
config's `[keymap]` table rebinds them through Textual's `App.set_keymap`, so the key bar
and Help show the keys in force. Checked here, each with one error naming the config
line: an id no binding has, a key Textual cannot name, and two bindings left on one key
where both could fire (the main screen: the app's keys and the input's; each dialog: its
own keys).

    [keymap]
    editor = "alt+e"         # one key
    quit = "ctrl+x,ctrl+q"   # or several
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from textual.binding import Binding

from ikigai_tui.config import Config, ConfigError
from ikigai_tui.tui import bindings as registry
from ikigai_tui.tui.keys import key_name, keys_of

__all__ = ["APP_BINDINGS", "check_keymap", "keys_in_force", "key_names", "binding_groups",
           "help_bindings", "MODIFIERS"]

MODIFIERS = ("ctrl", "alt", "shift", "super", "meta", "hyper")
APP_BINDINGS = registry.APP  # the main screen's (the app's); the input's: registry.INPUT

# Keys the main screen uses without a binding of its own: the input's history and the
# focus moves, and Textual's copy / quit hint.
INPUT_IDS = frozenset({"send", "newline"})  # the input's own: over its text area's keys
RESERVED = {"up": "the input's history (older)", "down": "the input's history (newer)",
            "tab": "completion and the next widget", "shift+tab": "the previous widget",
            "ctrl+c": "copying the selection"}


def binding_groups() -> dict[str, list[Binding]]:
    """The bindings that can fire together, by where they do; every one has an id."""
    return {
        "the main screen": [*registry.APP, *registry.INPUT, registry.command_palette()],
        "Help": registry.HELP,
        "the preview": [*registry.PREVIEW, *registry.PREVIEW_LIST],
        "the message view": registry.MESSAGE_VIEW,
        "the matching dialog": registry.MATCHING,
        "the agent tree": registry.TREE,
        "the agent overview": registry.OVERVIEW,
        "the cursor mode": registry.CURSOR,
        "the /btw answer": registry.SIDE_ANSWER,
        "the / menu": registry.COMMAND_MENU,
    }


def help_bindings() -> list[Binding]:
    """The keys Help (F1) lists: the main screen's, and the tree's own that only it has."""
    tree_own = [b for b in registry.TREE if b.id in ("tree-dead", "tree-collapse")]
    return [*binding_groups()["the main screen"], *tree_own]


def _key_names() -> set[str]:
    from textual.keys import Keys

    names: set[str] = set()
    for key in Keys:
        parts = key.value.split("+")
        names.add(parts[-1])
    return names - {"<any>", "<scroll-up>", "<scroll-down>", "<ignore>", "ctrl-at"}


def _valid_key(key: str, names: set[str]) -> bool:
    from textual.keys import key_to_character

    *modifiers, name = key.split("+")
    if not name or any(m not in MODIFIERS for m in modifiers) or len(set(modifiers)) < len(modifiers):
        return False
    return len(name) == 1 or name in names or key_to_character(name) is not None


def check_keymap(config: Config,
                 groups: Mapping[str, Iterable[Binding]] | None = None) -> dict[str, str]:
    """The config's keymap, checked, as `App.set_keymap` takes it. Raises ConfigError."""
    if not config.keymap:
        return {}
    groups = binding_groups() if groups is None else groups
    known = {b.id for bindings in groups.values() for b in bindings if b.id}
    names = _key_names()
    keymap: dict[str, str] = {}
    for binding_id, keys in config.keymap.items():
        where = config.keymap_origins.get(binding_id, str(config.config_path))
        if binding_id not in known:
            raise ConfigError(f"{where}: unknown key binding id '{binding_id}' in [keymap] "
                              f"(known: {', '.join(sorted(known))})")
        for key in (k.strip() for k in keys.split(",")):
            if not _valid_key(key, names):
                raise ConfigError(
                    f"{where}: keymap '{binding_id}': '{key}' is not a key (write keys as "
                    f"Textual names them: \"ctrl+e\", \"f6\", \"alt+shift+up\", \"question_mark\")")
        keymap[binding_id] = ",".join(keys_of(keys))
    for scope, bindings in groups.items():
        _check_clashes(config, scope, list(bindings), keymap)
    return keymap


def _check_clashes(config: Config, scope: str, bindings: list[Binding],
                   keymap: dict[str, str]) -> None:
    """Two ids on one key in one scope, at least one of them moved there by the keymap."""
    holder: dict[str, Binding] = {}
    if scope == "the main screen":
        holder.update(_input_keys())  # a priority binding may take these from the input
        for key, use in RESERVED.items():
            holder[key] = _reserved(key, use)
    for binding in bindings:
        keys = keymap.get(binding.id or "") or binding.key
        for key in keys_of(keys):
            other = holder.get(key)
            if (other is None or other.id == binding.id or other.action == binding.action
                    or other.action.startswith("input:") and (
                        binding.priority or binding.id in INPUT_IDS or binding.id not in keymap)):
                holder[key] = binding
                continue
            moved = [b for b in (binding, other) if b.id in keymap]
            if not moved:
                continue  # the program's own defaults, not the user's doing
            culprit = moved[-1]
            where = config.keymap_origins.get(culprit.id or "", str(config.config_path))
            partner = other if culprit is binding else binding
            fix = ("choose another key" if partner.action.startswith(("reserved:", "input:"))
                   else f"choose another key, or move '{partner.id}' too")
            raise ConfigError(f"{where}: keymap '{culprit.id}' puts {key} on {_name(culprit)}, "
                              f"but in {scope} {key} is already {_name(partner)}: {fix}")


def _input_keys() -> dict[str, Binding]:
    """The text area's own editing keys (Ctrl+A, Ctrl+E, F6 ...): a binding that is not
    a priority one never fires on them while the input has the focus."""
    from textual.widgets import TextArea

    own = {key for b in registry.INPUT for key in keys_of(b.key)}
    found: dict[str, Binding] = {}
    for b in TextArea.BINDINGS:
        if isinstance(b, Binding):
            for key in keys_of(b.key):
                if key not in own:
                    what = f"the input's {(b.description or b.action).lower()}"
                    found[key] = Binding(key, f"input:{b.action}", what, id=f"({what})")
    return found


def _reserved(key: str, use: str) -> Binding:
    return Binding(key, f"reserved:{key}", use, id=f"({use})")


def _name(binding: Binding) -> str:
    if binding.action.startswith(("reserved:", "input:")):
        return binding.description
    return f"'{binding.id}' ({binding.description or binding.action})"


def keys_in_force(bindings: Iterable, keymap: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(binding id, its keys with the user's keymap applied as key_name says them, joined
    by " / ", description): one row per id, in the bindings' order (for Help)."""
    rows: dict[str, tuple[list[str], str]] = {}
    for b in bindings:
        if isinstance(b, Binding):
            keys = keys_of(keymap.get(b.id or "") or b.key)
            rows.setdefault(b.id or b.action, ([], b.description))[0].extend(keys)
    return [(name, " / ".join(dict.fromkeys(map(key_name, keys))), description)
            for name, (keys, description) in rows.items()]


def key_names(bindings: Iterable, keymap: Mapping[str, str]) -> dict[str, str]:
    """Binding id -> its first key in force (the user's keymap applied), as key_name says
    it: what the welcome and the hidden-messages line name."""
    names: dict[str, str] = {}
    for binding in bindings:
        if isinstance(binding, Binding) and binding.id:
            keys = keys_of(keymap.get(binding.id) or binding.key)
            if keys:
                names[binding.id] = key_name(keys[0])
    return names
