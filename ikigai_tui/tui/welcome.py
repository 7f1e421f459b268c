"""The welcome shown in the empty scrollback of a new agent, until its conversation starts.

A newcomer's first screen would otherwise be an empty pane and an input: this says in a
few lines what the product is about (agents, their context, marks, forks, the window),
how to reach a real model (a key, then /model), and names the keys that matter: by
binding id, so a key moved in the config's [keymap] is named where it now is (tests/tui
check every id is one of the app's or the input's bindings).
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from ikigai_tui.tui.palette import Palette

TITLE = "Welcome to ikigai."
LINES = (
    ("Agents", "each is a conversation with a model; its context is what the model sees."),
    ("Marks", "/mark NAME saves a point; /rewind NAME takes the context back to it."),
    ("Forks", "/fork starts a child agent with this context (the tree on the left)."),
    ("The window", "past its budget, the oldest turns are not sent; the gauge counts them."),
    ("Dimmed", "out of the context (/clear, /forget...); {hide} hides them, /undo brings them "
               "back."),
    ("Models", "offline needs no key. For a real model, start ikigai with its key set "
               "(export ANTHROPIC_API_KEY=..., or OPENAI_API_KEY, GEMINI_API_KEY), then "
               "/model claude-sonnet-4-5 or /model gpt-4o."),
)
# (binding id, what it does): each named by the key it is bound to (tui/keymap.py key_names)
KEYS = (("send", "send"), ("help", "help"), ("agents", "agents"), ("split", "split"),
        ("stop-reply", "stop a reply"))
HIDE_ID = "out-of-context"  # the key named as {hide} in LINES


def welcome_text(palette: Palette, keys: Mapping[str, str]) -> Text:
    """`keys`: each binding id's key in force, as the user calls it ("Ctrl+T")."""
    text = Text()
    text.append(TITLE, style=palette.welcome_title)
    text.append("\n")
    for name, line in LINES:
        text.append("\n")
        text.append(f"{name}: ", style=palette.welcome_title)
        text.append(line.format(hide=keys.get(HIDE_ID, "")), style=palette.welcome)
    text.append("\n\n")
    for index, (binding_id, what) in enumerate(KEYS):
        if index:
            text.append("  ·  ", style=palette.welcome)
        text.append(keys.get(binding_id, "?"), style=palette.welcome_key)
        text.append(" " + what, style=palette.welcome)
    return text
