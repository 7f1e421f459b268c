"""The app in a dark and a light theme set by the config's `theme` (issue 16, item 1):
one snapshot per theme family, over a conversation with a command's output, an error,
a child agent in the tree and the window's rule. (test_theme_colours.py checks the
contrast of every colour in every built-in theme; these show the whole screen.)

SVGs in <root>/snapshots/test_theme_snapshots/; update with --snapshot-update and look
at each changed one before committing it.
"""

from __future__ import annotations

import pytest

from .conftest import SIZE, all_lines, root_id, say, settle


async def _conversation(session) -> None:
    root = root_id(session)
    for text in ("Hello, what can you do?", "Tell me about marks.", "And forks?"):
        await say(session, root, text)
    await session.command(root, "/mark plan")
    await session.command(root, "/fork --name helper")
    await session.command(root, "/marks")
    await session.wait_idle()


@pytest.mark.parametrize("theme", ["nord", "catppuccin-latte"], ids=["dark", "light"])
def test_a_theme_from_the_config(bench, snap_compare, theme):
    (bench.tmp_path / "no-config.toml").write_text(f'theme = "{theme}"\n', encoding="utf-8")
    bench.prepare(_conversation, budget=300)
    app = bench.app(budget=300)

    async def run_before(pilot):
        await settle(pilot)
        assert app.theme == theme and app.current_theme.dark is (theme == "nord")
        app.note("command", "/rewind nowhere")
        app.note("error", "Error: no mark named 'nowhere'")
        await settle(pilot)
        lines = all_lines(app.panes.active.scrollback)
        assert any("window starts here" in line for line in lines)
        assert any("plan" in line for line in lines)  # /marks' output

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
