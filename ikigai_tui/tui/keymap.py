"""The user's `[keymap]`: binding ids -> keys, checked before the full screen starts.

Every binding of the app, the input and the dialogs has an id (`Binding(id=...)`); the
config's `[keymap]` table rebinds them through Textual's `App.set_keymap`, so the key bar
and Help show the keys in force. Checked here, each with one error naming the config
line: an id no binding has, a key Textual cannot name, and two bindings left on one key
where both could fire (the main screen: the app's keys and the input's; each dialog: its
own keys).

    [keymap]
    editor = "f6"            # one key
    quit = "ctrl+x,ctrl+q"   # or several
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from textual.binding import Binding

from ikigai_tui.config import Config, ConfigError

__all__ = ["APP_BINDINGS", "check_keymap", "keys_of", "keys_in_force", "key_names",
           "binding_groups", "MODIFIERS"]

MODIFIERS = ("ctrl", "alt", "shift", "super", "meta", "hyper")
# The main screen's bindings (the app's); the input's are in widgets/prompt.py.
APP_BINDINGS: list[Binding] = [
    Binding("ctrl+q", "quit", "Quit", priority=True, id="quit"),
    Binding("escape", "stop_reply", "Stop reply", id="stop-reply"),
    Binding("f1", "help", "Help", id="help"),
    # The agent and pane keys work from the input too (priority: Ctrl+W is not the
    # input's delete-a-word); a dialog turns them off (MainScreenActions.check_action).
    Binding("ctrl+t", "focus_tree", "Agents", priority=True, id="agents"),
    Binding("alt+up", "agent('parent')", "Parent", show=False, priority=True, id="parent"),
    Binding("alt+down", "agent('child')", "Child", show=False, priority=True, id="child"),
    Binding("alt+left", "agent('prev')", "Prev sibling", show=False, priority=True,
            id="prev-sibling"),
    Binding("alt+right", "agent('next')", "Next sibling", show=False, priority=True,
            id="next-sibling"),
    Binding("f2", "split", "Split", priority=True, id="split"),
    Binding("f3", "close_pane", "Close pane", priority=True, id="close-pane"),
    Binding("ctrl+w", "next_pane", "Next pane", show=False, priority=True, id="next-pane"),
    Binding("ctrl+o", "toggle_tools", "Tools", priority=True, id="tools"),
    Binding("ctrl+g", "editor", "Edit the input in $VISUAL / $EDITOR", show=False,
            priority=True, id="editor"),
    Binding("f4", "toggle_tree", "Hide/show the agent tree", show=False, priority=True,
            id="tree"),
    Binding("alt+shift+left", "tree_width(-4)", "Narrow the agent tree (also: drag its edge)",
            show=False, priority=True, id="tree-narrower"),
    Binding("alt+shift+right", "tree_width(4)", "Widen the agent tree (also: drag its edge)",
            show=False, priority=True, id="tree-wider"),
    Binding("f5", "copy_reply", "Copy the reply in view", show=False, priority=True,
            id="copy-reply"),
    Binding("f8", "toggle('outside')", "Hide/show messages out of the context", show=False,
            priority=True, id="out-of-context"),
    Binding("f9", "toggle('ids')", "Show/hide message ids", show=False, priority=True,
            id="ids"),
    Binding("pageup", "scroll('page_up')", "Page up", show=False, priority=True, id="page-up"),
    Binding("pagedown", "scroll('page_down')", "Page down", show=False, priority=True,
            id="page-down"),
    Binding("ctrl+home", "scroll('home')", "Top", show=False, priority=True, id="top"),
    Binding("ctrl+end", "scroll('end')", "Bottom", show=False, priority=True, id="bottom"),
]

# Keys the main screen uses without a binding of its own: the input's history and the
# focus moves, and Textual's copy / quit hint.
INPUT_IDS = frozenset({"send", "newline"})  # the input's own: over its text area's keys
RESERVED = {"up": "the input's history (older)", "down": "the input's history (newer)",
            "tab": "completion and the next widget", "shift+tab": "the previous widget",
            "ctrl+c": "copying the selection"}


def binding_groups() -> dict[str, list[Binding]]:
    """The bindings that can fire together, by where they do; every one has an id."""
    from textual.app import App

    from ikigai_tui.tui.app import IkigaiApp
    from ikigai_tui.tui.screens.help import HelpScreen
    from ikigai_tui.tui.screens.matching import MatchingScreen
    from ikigai_tui.tui.screens.message_view import MessageScreen
    from ikigai_tui.tui.screens.preview import PreviewScreen
    from ikigai_tui.tui.screens.preview_list import PreviewList
    from ikigai_tui.tui.widgets.agent_tree import AgentTreeView
    from ikigai_tui.tui.widgets.prompt import PromptInput

    def own(cls) -> list[Binding]:
        return [b for b in cls.BINDINGS if isinstance(b, Binding)]

    palette = Binding(App.COMMAND_PALETTE_BINDING, "command_palette", "palette",
                      id="command-palette")
    return {
        "the main screen": [*own(IkigaiApp), *own(PromptInput), palette],
        "Help": own(HelpScreen),
        "the preview": [*own(PreviewScreen), *own(PreviewList)],
        "the message view": own(MessageScreen),
        "the matching dialog": own(MatchingScreen),
        "the agent tree": own(AgentTreeView),
    }


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


def _normal(key: str) -> str:
    from textual.keys import _character_to_key

    *modifiers, name = key.strip().split("+")
    if len(name) == 1:
        name = _character_to_key(name)
    return "+".join([*modifiers, name])


def keys_of(keys: str) -> list[str]:
    """A binding's key string (`"f6,ctrl+e"`) as normalised keys."""
    return [_normal(key) for key in keys.split(",") if key.strip()]


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

    from ikigai_tui.tui.widgets.prompt import PromptInput

    own = {key for b in PromptInput.BINDINGS if isinstance(b, Binding) for key in keys_of(b.key)}
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


_SPOKEN = {"escape": "Esc", "pageup": "PgUp", "pagedown": "PgDn", "delete": "Del",
           "insert": "Ins"}


def key_name(key: str) -> str:
    """A key as the user calls it: "ctrl+t" -> "Ctrl+T", "f8" -> "F8", "escape" -> "Esc".

    The one naming of keys on screen: the welcome, the footer and the palette's key panel
    (through IkigaiApp.get_key_display) and Help all say keys this way."""
    from textual.keys import key_to_character

    *modifiers, name = _normal(key).split("+")
    if name in _SPOKEN:
        spoken = _SPOKEN[name]
    elif len(name) == 1 or (name[:1] == "f" and name[1:].isdigit()):
        spoken = name.upper()
    else:
        char = key_to_character(name)
        spoken = char if char and char.isprintable() and not char.isspace() else name.title()
    return "+".join([*(m.capitalize() for m in modifiers), spoken])


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
