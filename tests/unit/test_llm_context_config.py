"""llm_context_changes (issue 28 item 1): "ask" by default, "allow" or "deny" from the
file or IKIGAI_LLM_CONTEXT_CHANGES; a bad value is one line naming the file and line."""

from __future__ import annotations

import pytest

from ikigai_tui.config import ConfigError, load


def test_default_is_ask(tmp_path):
    assert load(config_path=str(tmp_path / "none.toml"), env={}).llm_context_changes == "ask"


@pytest.mark.parametrize("value", ["ask", "allow", "deny"])
def test_file_then_environment(tmp_path, value):
    path = tmp_path / "config.toml"
    path.write_text(f'llm_context_changes = "{value}"\n')
    assert load(config_path=str(path), env={}).llm_context_changes == value
    env = {"IKIGAI_LLM_CONTEXT_CHANGES": "deny" if value != "deny" else "allow"}
    assert load(config_path=str(path), env=env).llm_context_changes == env["IKIGAI_LLM_CONTEXT_CHANGES"]


def test_bad_value_names_file_and_line(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('model = "offline"\nllm_context_changes = "sometimes"\n')
    with pytest.raises(ConfigError) as err:
        load(config_path=str(path), env={})
    message = str(err.value)
    assert str(path) in message and "line 2" in message and "\n" not in message
    assert "'llm_context_changes' must be \"ask\", \"allow\" or \"deny\"" in message


def test_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match="IKIGAI_LLM_CONTEXT_CHANGES='often'"):
        load(config_path=str(tmp_path / "x.toml"), env={"IKIGAI_LLM_CONTEXT_CHANGES": "often"})
