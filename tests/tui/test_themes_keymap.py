"""Themes that stick and keymaps (issue 16, items 1 and 2): the config's `theme`, the
theme picked in the palette kept in state.toml beside the config, the `[keymap]` table
rebinding the app's keys (the key bar and Help follow), and one clear error for a theme
or a binding that does not exist or a key taken twice."""

from __future__ import annotations

import os
import tomllib

import pytest

from ikigai_tui.config import ConfigError
from ikigai_tui.config import load as load_config
from ikigai_tui.tui.keymap import APP_BINDINGS, binding_groups, check_keymap
from ikigai_tui.tui.screens.help import HelpKeys, HelpScreen
from ikigai_tui.tui.ui_state import chosen_theme, read_state, start_theme, write_state
from ikigai_tui.tui.widgets.keybar import KeyBar

from .conftest import SIZE, idle, settle, type_text


def _config_file(bench, text: str):
    """The file `bench.app()` reads its settings from."""
    path = bench.tmp_path / "no-config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _state(bench) -> dict:
    return tomllib.loads((bench.tmp_path / "state.toml").read_text(encoding="utf-8"))


# ---- themes ----------------------------------------------------------------------------


async def test_the_configs_theme_is_the_one_started_in(bench):
    _config_file(bench, '# my settings\ntheme = "nord"\n')
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "nord"
        assert app.current_theme.name == "nord"


async def test_a_theme_picked_in_the_palette_is_kept_for_the_next_start(bench):
    _config_file(bench, '# mine, left alone\ntheme = "nord"\n')
    before = (bench.tmp_path / "no-config.toml").read_text()
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not (bench.tmp_path / "state.toml").exists()  # nothing picked yet
        app.action_change_theme()  # the palette's "Change theme", as Ctrl+P offers it
        await idle(pilot)
        await type_text(pilot, "dracula")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await idle(pilot)
        assert app.theme == "dracula"
    assert _state(bench) == {"theme": "dracula", "config_theme": "nord"}
    assert (bench.tmp_path / "no-config.toml").read_text() == before  # the user's file

    again = bench.app()
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert again.theme == "dracula"


async def test_the_config_folder_made_to_keep_a_pick_is_0700_under_umask_000(bench):
    """The palette's pick is the only write to the config's folder (~/.config/ikigai),
    which may not exist yet: made 0700, its missing parents too, not 0777 or 0755."""
    config = bench.tmp_path / "home" / ".config" / "ikigai" / "config.toml"
    bench.config_path = config
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        old = os.umask(0)
        try:
            app.theme = "dracula"  # what the palette's "Change theme" does
            await idle(pilot)
        finally:
            os.umask(old)
    assert tomllib.loads((config.parent / "state.toml").read_text())["theme"] == "dracula"
    made = [config.parent.parent.parent, config.parent.parent, config.parent]
    assert {str(p): p.stat().st_mode & 0o777 for p in made} == {str(p): 0o700 for p in made}


async def test_editing_the_configs_theme_after_a_pick_wins(bench):
    write_state(bench.tmp_path / "state.toml", theme="dracula", config_theme="nord")
    _config_file(bench, 'theme = "gruvbox"\n')  # edited since the pick: the newer choice
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "gruvbox"


def test_an_unknown_theme_is_one_error_naming_the_line(bench):
    _config_file(bench, '# settings\nmodel = "offline"\ntheme = "sunset-beach"\n')
    with pytest.raises(ConfigError) as caught:
        bench.app()
    message = str(caught.value)
    assert "no-config.toml, line 3: unknown theme 'sunset-beach'" in message
    assert "textual-light" in message and "nord" in message  # the names that exist
    assert not bench.db.exists()  # nothing written


def test_ikigai_theme_wins_and_is_checked(tmp_path):
    config = load_config(config_path=str(tmp_path / "c.toml"), env={"IKIGAI_THEME": "monokai"})
    write_state(tmp_path / "state.toml", theme="dracula", config_theme="")
    assert start_theme(config, ["monokai", "dracula"], env={}) == "monokai"
    bad = load_config(config_path=str(tmp_path / "c.toml"), env={"IKIGAI_THEME": "nope"})
    with pytest.raises(ConfigError, match=r"IKIGAI_THEME='nope': unknown theme 'nope'"):
        start_theme(bad, ["monokai"], env={})


def test_textual_theme_in_the_environment_is_left_to_textual(tmp_path):
    """$TEXTUAL_THEME (read by Textual itself) is over the pick and the file, below IKIGAI_THEME."""
    (tmp_path / "c.toml").write_text('theme = "nord"\n')
    config = load_config(config_path=str(tmp_path / "c.toml"), env={})
    assert start_theme(config, ["nord"], env={"TEXTUAL_THEME": "nord"}) is None
    assert start_theme(config, ["nord"], env={}) == "nord"


def test_the_state_file_is_rewritten_whole_and_a_damaged_one_ignored(tmp_path):
    path = tmp_path / "sub" / "state.toml"
    write_state(path, theme='odd "name" \\ é', config_theme="")
    assert read_state(path)["theme"] == 'odd "name" \\ é'
    assert chosen_theme(read_state(path), None) == 'odd "name" \\ é'
    assert chosen_theme(read_state(path), "nord") is None  # the config changed since
    path.write_text("theme = [unclosed", encoding="utf-8")
    assert read_state(path) == {}
    write_state(path, theme="nord")
    assert read_state(path) == {"theme": "nord"}
    assert [p.name for p in path.parent.iterdir()] == ["state.toml"]  # no temporary left


# ---- keymaps ---------------------------------------------------------------------------


def test_every_binding_has_an_id():
    for scope, bindings in binding_groups().items():
        for binding in bindings:
            assert binding.id, f"{binding.key} ({binding.action}) in {scope} has no id"
    ids = [b.id for b in APP_BINDINGS]
    assert len(ids) == len(set(ids))


async def test_a_keymap_override_moves_the_key_and_the_bar_and_help_follow(bench):
    _config_file(bench, '[keymap]\nhelp = "f10"\nsend = "ctrl+s"\nhelp-close = "x,escape"\n')
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bar = app.query_one(KeyBar)
        shown = {description: key for key, _display, description, _on in bar.entries()}
        assert shown["Help"] == "f10"
        assert shown["Send"] == "ctrl+s"

        await pilot.press("f1")  # the old key does nothing now
        await idle(pilot)
        assert app.screen is app.screen_stack[0]

        # Enter adds a line once Send is elsewhere; Ctrl+S sends.
        await type_text(pilot, "one")
        await pilot.press("enter")
        await type_text(pilot, "two")
        assert app.prompt_input.text == "one\ntwo"
        await pilot.press("ctrl+s")
        await idle(pilot)
        assert app.prompt_input.text == ""
        events = await app.session.store.events(app.focused_agent)
        assert [e.payload["content"] for e in events if e.kind == "user"] == ["one\ntwo"]

        await pilot.press("f10")
        await idle(pilot)
        assert isinstance(app.screen, HelpScreen)
        rows = dict((d, k) for k, d in app.screen.query_one(HelpKeys)._key_rows)
        assert rows["Help"] == "F10"  # named as pressed, as the footer and the welcome do
        assert rows["Edit the input in $VISUAL / $EDITOR"] == "Ctrl+G"
        # The close hint names the keys as the welcome does, not as the keymap spells them.
        assert "X · Esc  close" in str(app.screen.query_one(".hint").render())
        await pilot.press("q")  # no longer closes Help
        await idle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("x")
        await idle(pilot)
        assert app.screen is app.screen_stack[0]


@pytest.mark.parametrize(("table", "expected"), [
    ('help = "f10"\nsummon = "f11"\n', "line 3: unknown key binding id 'summon'"),
    ('help = "ctrl+nothing"\n', "line 2: keymap 'help': 'ctrl+nothing' is not a key"),
    ('help = "f2"\n', "line 2: keymap 'help' puts f2 on 'help' (Help), but in the main "
                      "screen f2 is already 'split' (Split)"),
    ('split = "f11"\nhelp = "f11"\n', "line 3: keymap 'help' puts f11 on 'help' (Help), but in "
                                    "the main screen f11 is already 'split' (Split)"),
    ('tools = "up"\n', "line 2: keymap 'tools' puts up on 'tools' (Tools), but in the main "
                       "screen up is already the input's history (older)"),
    ('help = "ctrl+e"\n', "line 2: keymap 'help' puts ctrl+e on 'help' (Help), but in the "
                          "main screen ctrl+e is already the input's cursor line end"),
    ('help = 3\n', "line 2: keymap 'help' must be keys"),
], ids=["unknown-id", "not-a-key", "taken", "taken-twice", "reserved", "the-inputs", "not-text"])
def test_a_bad_keymap_is_one_error_naming_its_line(bench, table, expected):
    _config_file(bench, "[keymap]\n" + table)
    with pytest.raises(ConfigError) as caught:
        bench.app()
    assert f"no-config.toml, {expected}" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not bench.db.exists()


def test_keys_can_be_swapped_and_listed_and_the_dialogs_have_their_own(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[keymap]\nhelp = "f2"\nsplit = "f1,f12"\nhelp-close = "x"\n'
                    'preview-apply = "ctrl+y"\n')
    config = load_config(config_path=str(path), env={})
    assert check_keymap(config) == {"help": "f2", "split": "f1,f12", "help-close": "x",
                                    "preview-apply": "ctrl+y"}
    path.write_text('[keymap]\npreview-all = "n"\n')  # the preview's "select none" key
    with pytest.raises(ConfigError, match="line 2: keymap 'preview-all' puts n on .* in the "
                                          "preview n is already 'preview-none'"):
        check_keymap(load_config(config_path=str(path), env={}))
