from __future__ import annotations

import pytest

from ikigai_tui.config import DEFAULT_BUDGET, ConfigError, load


def test_defaults_without_file_or_environment(tmp_path):
    cfg = load(config_path=str(tmp_path / "none.toml"), env={})
    assert cfg.model is None
    assert cfg.budget == DEFAULT_BUDGET
    assert cfg.db.name == "ikigai.db"


def test_file_then_environment_then_flags(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('db = "/from/file.db"\nmodel = "file-model"\nsliding_context_tokens = 5000\n')
    cfg = load(config_path=str(path), env={})
    assert (str(cfg.db), cfg.model, cfg.budget) == ("/from/file.db", "file-model", 5000)
    env = {"IKIGAI_DB": "/from/env.db", "IKIGAI_MODEL": "env-model",
           "IKIGAI_SLIDING_CONTEXT_TOKENS": "0"}
    cfg = load(config_path=str(path), env=env)
    assert (str(cfg.db), cfg.model, cfg.budget) == ("/from/env.db", "env-model", 0)
    cfg = load(config_path=str(path), env=env, db="/from/flag.db", model="flag-model")
    assert (str(cfg.db), cfg.model) == ("/from/flag.db", "flag-model")


def test_config_path_from_environment(tmp_path):
    path = tmp_path / "elsewhere.toml"
    path.write_text('model = "x"\n')
    assert load(env={"IKIGAI_CONFIG": str(path)}).model == "x"


def test_per_model_api_base(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[models."openai/gpt-4o"]\napi_base = "http://127.0.0.1:9/v1"\n')
    assert load(config_path=str(path), env={}).model_api_bases == {
        "openai/gpt-4o": "http://127.0.0.1:9/v1"}


def test_per_model_input_limit(tmp_path):
    """A model litellm's map does not list (a local server's) gets its own input limit."""
    from ikigai_tui.llm.providers import Providers

    path = tmp_path / "c.toml"
    path.write_text('[models."openai/local"]\napi_base = "http://127.0.0.1:9/v1"\n'
                    'max_input_tokens = 32_768\n[models."openai/gpt-4o"]\nmax_input_tokens = 1000\n')
    cfg = load(config_path=str(path), env={})
    assert cfg.model_input_limits == {"openai/local": 32_768, "openai/gpt-4o": 1000}
    assert cfg.model_api_bases == {"openai/local": "http://127.0.0.1:9/v1"}
    providers = Providers(model_input_limits=cfg.model_input_limits)
    assert providers.limits("openai/local").input == 32_768
    assert providers.limits("openai/local").known
    assert providers.limits("openai/gpt-4o").input == 1000
    assert providers.limits("openai/gpt-4o-mini").input == 128_000  # the map's


@pytest.mark.parametrize("text, expected", [
    ('[models."m"]\nmax_input_tokens = "big"\n', ["line 2", "'max_input_tokens' must be"]),
    ('[models."m"]\nmax_input_tokens = 10\n', ["line 2", "256 or more"]),
    ('model = "a"\n\nsliding_context_tokens = "lots"\n', ["line 3", "sliding_context_tokens"]),
    ('model = "a"\ncolour = "blue"\n', ["line 2", "unknown key 'colour'"]),
    ('model = \n', ["line 1", "'model'"]),
    ('model = "a"\nsliding_context_tokens = abc\n', ["line 2", "'sliding_context_tokens'"]),
    ('offline_delay = 1e\n', ["line 1", "'offline_delay'"]),
    ('sliding_context_tokens = -5\n', ["line 1", "0 or more"]),
    ('[models."m"]\nbase = "x"\n', ["line 2", "unknown key 'base'"]),
])
def test_bad_file_names_file_line_and_key(tmp_path, text, expected):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load(config_path=str(path), env={})
    message = str(err.value)
    assert str(path) in message and "\n" not in message
    for part in expected:
        assert part in message


def test_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match="IKIGAI_SLIDING_CONTEXT_TOKENS"):
        load(config_path=str(tmp_path / "x.toml"), env={"IKIGAI_SLIDING_CONTEXT_TOKENS": "many"})


def test_cli_reports_bad_config_in_one_line(tmp_path, ikigai):
    path = tmp_path / "config.toml"
    path.write_text('colour = "blue"\n')
    db = tmp_path / "x.db"
    out = ikigai("--config", str(path), "--db", str(db), "run", input="hello\n")
    assert out.returncode == 2  # a configuration error
    assert out.stderr.startswith("Error: ") and "colour" in out.stderr and "line 1" in out.stderr
    assert not db.exists()


def test_concurrency_per_provider_from_file_then_environment(tmp_path):
    path = tmp_path / "config.toml"
    assert load(config_path=str(path), env={}).concurrency == 4
    path.write_text("concurrency = 2\n")
    assert load(config_path=str(path), env={}).concurrency == 2
    assert load(config_path=str(path), env={"IKIGAI_CONCURRENCY": "1"}).concurrency == 1
    with pytest.raises(ConfigError, match="IKIGAI_CONCURRENCY.*1 or more"):
        load(config_path=str(path), env={"IKIGAI_CONCURRENCY": "0"})
    path.write_text("concurrency = 0\n")
    with pytest.raises(ConfigError, match="line 1.*1 or more"):
        load(config_path=str(path), env={})


def test_mail_settings_from_the_file_and_the_environment(tmp_path):
    """Issue 27: mail (wake | manual; unset: children wake, the root does not), the woken
    turns in a row, the LLM's /wait timeout; IKIGAI_MAIL over the file; bad values refused."""
    cfg = load(config_path=str(tmp_path / "none.toml"), env={})
    assert (cfg.mail, cfg.wake_limit, cfg.wait_timeout) == (None, 10, 600.0)
    path = tmp_path / "c.toml"
    path.write_text('mail = "manual"\nwake_limit = 3\nwait_timeout = 30\n')
    cfg = load(config_path=str(path), env={})
    assert (cfg.mail, cfg.wake_limit, cfg.wait_timeout) == ("manual", 3, 30.0)
    assert load(config_path=str(path), env={"IKIGAI_MAIL": "wake"}).mail == "wake"
    with pytest.raises(ConfigError, match="IKIGAI_MAIL='often' must be \"wake\" or \"manual\""):
        load(config_path=str(path), env={"IKIGAI_MAIL": "often"})
    for text, words in (('mail = "often"', "'mail' must be \"wake\" or \"manual\""),
                        ("wake_limit = 0", "'wake_limit' must be 1 or more"),
                        ("wait_timeout = 0", "'wait_timeout' must be more than 0 seconds")):
        path.write_text(text + "\n")
        with pytest.raises(ConfigError, match=words):
            load(config_path=str(path), env={})
