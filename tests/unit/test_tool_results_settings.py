"""The settings of clearing old tool output (issue 25 item 5): tool_results_trigger (off
by default), tool_results_keep (3), tool_results_exclude (["memory"]) from the config
file, IKIGAI_TOOL_RESULTS_TRIGGER over it; bad values named."""

from __future__ import annotations

import re

import pytest

from ikigai_tui.config import ConfigError, load


def settings(cfg):
    return cfg.tool_results_trigger, cfg.tool_results_keep, cfg.tool_results_exclude


def test_defaults_file_and_environment(tmp_path):
    assert settings(load(config_path=str(tmp_path / "none.toml"), env={})) == (None, 3, ("memory",))
    path = tmp_path / "c.toml"
    path.write_text('tool_results_trigger = 0.6\ntool_results_keep = 5\n'
                    'tool_results_exclude = ["memory", "read_file"]\n')
    assert settings(load(config_path=str(path), env={})) == (0.6, 5, ("memory", "read_file"))
    cfg = load(config_path=str(path), env={"IKIGAI_TOOL_RESULTS_TRIGGER": "0.5"})
    assert cfg.tool_results_trigger == 0.5


@pytest.mark.parametrize(("text", "env", "expected"), [
    ("tool_results_trigger = 1.5\n", {}, "'tool_results_trigger' must be more than 0 and at most 1"),
    ("tool_results_keep = -1\n", {}, "'tool_results_keep' must be 0 or more"),
    ('tool_results_exclude = "memory"\n', {}, "'tool_results_exclude' must be a list of tool names"),
    ("", {"IKIGAI_TOOL_RESULTS_TRIGGER": "0"}, "IKIGAI_TOOL_RESULTS_TRIGGER='0' must be more than 0"),
])
def test_bad_values_are_named(tmp_path, text, env, expected):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load(config_path=str(path), env=env)
