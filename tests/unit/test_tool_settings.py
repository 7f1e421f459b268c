"""The tool settings (issue 25): max_tool_rounds, bash_max_timeout and tool_env_pass from
the config file, then IKIGAI_* variables; bad values named with where they came from."""

from __future__ import annotations

import re

import pytest

from ikigai_tui.config import ConfigError, load


def test_defaults(tmp_path):
    cfg = load(config_path=str(tmp_path / "none.toml"), env={})
    assert (cfg.max_tool_rounds, cfg.bash_max_timeout, cfg.tool_env_pass) == (25, 600.0, ())


def test_file_then_environment(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('max_tool_rounds = 5\nbash_max_timeout = 30\ntool_env_pass = ["GITHUB_TOKEN"]\n')
    cfg = load(config_path=str(path), env={})
    assert (cfg.max_tool_rounds, cfg.bash_max_timeout, cfg.tool_env_pass) == (5, 30.0, ("GITHUB_TOKEN",))
    cfg = load(config_path=str(path), env={"IKIGAI_MAX_TOOL_ROUNDS": "7",
                                           "IKIGAI_BASH_MAX_TIMEOUT": "2.5",
                                           "IKIGAI_TOOL_ENV_PASS": "A_TOKEN, B_KEY IKIGAI_X"})
    assert (cfg.max_tool_rounds, cfg.bash_max_timeout, cfg.tool_env_pass) == (
        7, 2.5, ("A_TOKEN", "B_KEY", "IKIGAI_X"))


@pytest.mark.parametrize(("text", "env", "expected"), [
    ("max_tool_rounds = 0\n", {}, "line 1: 'max_tool_rounds' must be 1 or more"),
    ("bash_max_timeout = -1\n", {}, "line 1: 'bash_max_timeout' must be more than 0 seconds"),
    ('tool_env_pass = "GITHUB_TOKEN"\n', {}, "line 1: 'tool_env_pass' must be a list of variable names"),
    ('tool_env_pass = ["A B"]\n', {}, "line 1: 'tool_env_pass' must list variable names; not 'A B'"),
    ("", {"IKIGAI_MAX_TOOL_ROUNDS": "0"}, "IKIGAI_MAX_TOOL_ROUNDS='0' must be 1 or more"),
    ("", {"IKIGAI_TOOL_ENV_PASS": "A=1"}, "IKIGAI_TOOL_ENV_PASS='A=1' must list variable names; not 'A=1'"),
])
def test_bad_values_are_named(tmp_path, text, env, expected):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load(config_path=str(path), env=env)


async def test_the_session_runs_with_the_settings(tmp_path):
    from ikigai_tui.core.tools.running import ToolSettings
    from ikigai_tui.runtime import open_session

    path = tmp_path / "c.toml"
    path.write_text('max_tool_rounds = 3\nbash_max_timeout = 9\ntool_env_pass = ["GITHUB_TOKEN"]\n')
    session = await open_session(load(config_path=str(path), env={}, db=str(tmp_path / "x.db")))
    try:
        assert session.tool_settings == ToolSettings(3, 9.0, ("GITHUB_TOKEN",))
    finally:
        await session.close()
        await session.store.close()
