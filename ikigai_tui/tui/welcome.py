"""The welcome shown in the empty scrollback of a new agent, until its conversation starts.

A newcomer's first screen would otherwise be an empty pane and an input: this says in a
few lines what the product is about (agents, their context, marks, forks, the window),
how to reach a real model (a key, then /model), and names the keys that matter. Every key named here is one of the app's bindings
(tests/tui check it).
"""

from __future__ import annotations

from rich.text import Text

from ikigai_tui.tui.palette import Palette

TITLE = "Welcome to ikigai."
LINES = (
    ("Agents", "each is a conversation with a model; its context is what the model sees."),
    ("Marks", "/mark NAME saves a point; /rewind NAME takes the context back to it."),
    ("Forks", "/fork starts a child agent with this context (the tree on the left)."),
    ("The window", "past its budget, the oldest turns are not sent; the gauge counts them."),
    ("Dimmed", "out of the context (/clear, /forget...); F8 hides them, /undo brings them back."),
    ("Models", "offline needs no key. For a real model, start ikigai with its key set "
               "(export ANTHROPIC_API_KEY=..., or OPENAI_API_KEY, GEMINI_API_KEY), then "
               "/model claude-sonnet-4-5 or /model gpt-4o."),
)
# (key as the keybar names it, what it does)
KEYS = (("Enter", "send"), ("F1", "help"), ("Ctrl+T", "agents"), ("F2", "split"),
        ("Esc", "stop a reply"))
# The app's binding of each key named above.
KEY_BINDINGS = {"Enter": "enter", "F1": "f1", "Ctrl+T": "ctrl+t", "F2": "f2", "Esc": "escape"}
HIDE_KEY = ("F8", "f8", "toggle('outside')")  # named in the text above, bound in the app


def welcome_text(palette: Palette) -> Text:
    text = Text()
    text.append(TITLE, style=palette.welcome_title)
    text.append("\n")
    for name, line in LINES:
        text.append("\n")
        text.append(f"{name}: ", style=palette.welcome_title)
        text.append(line, style=palette.welcome)
    text.append("\n\n")
    for index, (key, what) in enumerate(KEYS):
        if index:
            text.append("  ·  ", style=palette.welcome)
        text.append(key, style=palette.welcome_key)
        text.append(" " + what, style=palette.welcome)
    return text
