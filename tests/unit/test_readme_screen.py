"""The README and docs/ say what the program shows (issue 23, items 8 and 11): the example
config (docs/configuration.md) loads (the theme entry where TOML puts it at the top level),
the README's keys table names keys as they are pressed and lists every key of the main
screen, and the screen mock (docs/screen.md) has the program's status line, tree rows,
fork line, placeholder and bottom line."""

from __future__ import annotations

import re
from pathlib import Path

from ikigai_tui.config import load as load_config
from ikigai_tui.tui.keymap import APP_BINDINGS, check_keymap, key_name, keys_of
from ikigai_tui.tui.widgets.prompt import PromptInput

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block(page: str, after: str, fence: str = "```") -> str:
    text = (ROOT / page).read_text(encoding="utf-8")
    start = text.index(fence, text.index(after)) + len(fence)
    start = text.index("\n", start) + 1
    return text[start:text.index("```", start)]


def test_the_example_config_loads_with_its_theme_and_keymap(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(_block("docs/configuration.md", "# Configuration", "```toml"), encoding="utf-8")
    config = load_config(config_path=str(path), env={})
    assert config.theme == "nord"
    assert check_keymap(config) == {"editor": "alt+e", "send": "ctrl+s"}


def _keys_table(header: str = "| key | action |") -> list[tuple[str, str]]:
    start = README.index(header)
    table = README[start:README.index("\n\n", start)]  # the table ends at a blank line
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", table, re.M)
    table = []
    for key, action in rows[1:]:  # (after the header row)
        if not key.strip() or key.startswith("`"):
            break
        table.append((key, action))
    return table


def test_the_keys_table_names_every_key_as_it_is_pressed():
    table = _keys_table() + _keys_table("| preview key | action |")
    named: set[str] = set()
    for cell, _action in table:
        for key in re.split(r" / |, ", cell):
            if key == "mouse drag":
                continue
            named.add(key)
            spelled = key.lower().replace("pgup", "pageup").replace("pgdn", "pagedown")
            assert key_name(spelled.replace("esc", "escape")) == key, cell
    for binding in [*APP_BINDINGS, *PromptInput.BINDINGS]:
        assert key_name(keys_of(binding.key)[0]) in named, binding.key
    for key in ("Up", "Down", "Tab", "Ctrl+P", "Ctrl+C", "F1"):
        assert key in named, key


def test_the_screen_mock_is_what_the_program_draws():
    mock = _block("docs/screen.md", "## The screen").splitlines()
    label = r"\w+ \([0-9a-f]{6}\)"
    assert re.fullmatch(rf"  ikigai · {label} · offline model, no network · \S+", mock[0])
    assert re.match(rf" ▶ ○ {label} \d+% ", mock[1]) and re.match(rf" └─ ○ {label} \d+% ✉1 ", mock[2])
    # A fork's pane starts with its head line (AgentPages.head), wrapped in the pane.
    assert re.search(rf"▕ Forked from {label}: \d+$", mock[2]), mock[2]
    assert mock[3].rstrip().endswith("▕ inherited messages")
    placeholder = "Message, or / for commands (Enter sends, Ctrl+J new line)"
    assert any(f"│ {placeholder} " in line for line in mock)
    footer = mock[-1]
    names = [key_name(keys_of(b.key)[0]) for b in [*PromptInput.BINDINGS, *APP_BINDINGS]
             if b.show]
    assert footer.startswith(f" {names[0]} Send {names[1]} New line ")
    assert footer.endswith(" Ctrl+P palette")
    assert not re.search(r"\^\w|\b(esc|f\d|ctrl\+)", footer)
