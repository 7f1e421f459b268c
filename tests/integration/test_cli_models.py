"""Models as people name them (issue 16, item 5): bare names litellm's map knows, the
config's [aliases], near matches for an unknown name; litellm is never imported for it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ikigai_tui.config import ConfigError, load
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.llm.providers import Providers


@pytest.mark.parametrize("given, full", [
    ("gpt-4o", "openai/gpt-4o"),
    ("gpt-4o-mini", "openai/gpt-4o-mini"),
    ("claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
    ("gemini-2.5-pro", "gemini/gemini-2.5-pro"),  # not vertex_ai: gemini/ is listed too
    ("openai/gpt-4o", "openai/gpt-4o"),
    ("openai/my-local-model", "openai/my-local-model"),  # custom names stay usable
    ("hosted_vllm/some-model", "hosted_vllm/some-model"),
    ("offline", "offline"),
    ("fast", "openai/gpt-4o-mini"),
    ("smart", "anthropic/claude-sonnet-4-5"),  # an alias to a bare name
])
def test_names_resolve(given, full):
    providers = Providers(aliases={"fast": "openai/gpt-4o-mini", "smart": "claude-sonnet-4-5"})
    assert providers.resolve(given) == full
    assert providers.check(given) == full


@pytest.mark.parametrize("given, near", [
    ("gpt4o", "gpt-4o"),
    ("claude-sonet-4-5", "claude-sonnet-4-5"),
    ("fats", "fast"),
    ("opnai/gpt-4o", "openai/"),
])
def test_unknown_names_are_one_line_with_near_matches(given, near):
    providers = Providers(aliases={"fast": "openai/gpt-4o-mini"})
    with pytest.raises(ProviderError) as caught:
        providers.check(given)
    message = str(caught.value)
    assert "\n" not in message
    assert f"'{given}' is not a model name" in message
    assert "did you mean" in message and near in message.split("did you mean")[1]


def test_limits_and_prices_follow_the_resolved_name():
    providers = Providers(aliases={"fast": "openai/gpt-4o-mini"})
    assert providers.limits("gpt-4o") == providers.limits("openai/gpt-4o")
    assert providers.limits("gpt-4o").known
    assert providers.prices("fast") == providers.prices("openai/gpt-4o-mini") is not None


def test_resolution_does_not_import_litellm():
    code = ("import sys; from ikigai_tui.llm.providers import Providers; "
            "p = Providers(); print(p.resolve('gpt-4o'), p.resolve('hosted_vllm/x')); "
            "print('litellm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["openai/gpt-4o", "hosted_vllm/x", "False"], done.stderr


def test_aliases_in_the_config(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('model = "fast"\n[aliases]\nfast = "openai/gpt-4o-mini"\nlocal = "ollama/llama3"\n')
    loaded = load(config_path=str(config), env={})
    assert loaded.aliases == {"fast": "openai/gpt-4o-mini", "local": "ollama/llama3"}
    config.write_text('[aliases]\nfast = ""\n')
    with pytest.raises(ConfigError, match=r"line 2: alias 'fast' must be a model name"):
        load(config_path=str(config), env={})
    config.write_text('[aliases]\noffline = "openai/gpt-4o"\n')
    with pytest.raises(ConfigError, match="cannot be an alias"):
        load(config_path=str(config), env={})
    config.write_text('aliases = 3\n')
    with pytest.raises(ConfigError, match="'aliases' must be a table"):
        load(config_path=str(config), env={})


def _no_key(variable: str, model: str, extra: str = "") -> str:
    return f"Warning: {variable} is not set: messages to {model} will fail until it is{extra}."


def test_a_missing_key_is_said_when_the_model_is_chosen(ikigai, tmp_path):
    """Issue 23, item 10: at /model time, not at the first message; the model is set."""
    base = ("--db", str(tmp_path / "k.db"))
    done = ikigai(*base, "run", input="/model gpt-4o\n/model claude-sonnet-4-5\n/model offline\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Model set to openai/gpt-4o (gpt-4o).", _no_key("OPENAI_API_KEY", "openai/gpt-4o"),
        "Model set to anthropic/claude-sonnet-4-5 (claude-sonnet-4-5).",
        _no_key("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
        "Model set to offline."]
    # Once the key is set, nothing to warn about; with an api_base, any value may do.
    keyed = ikigai(*base, "run", input="/model gpt-4o\n", env={"OPENAI_API_KEY": "k-123456"})
    assert keyed.stdout.splitlines() == ["Model set to openai/gpt-4o (gpt-4o)."]
    served = ikigai(*base, "--api-base", "http://127.0.0.1:9/v1", "run", input="/model\n")
    assert served.stdout.splitlines() == ["Model: openai/gpt-4o", _no_key(
        "OPENAI_API_KEY", "openai/gpt-4o",
        " (any value, if the server at the api_base does not check it)")]


def test_aliases_and_bare_names_in_model_fork_and_flags(ikigai, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[aliases]\nfast = "openai/gpt-4o-mini"\nsmart = "claude-sonnet-4-5"\n')
    db = tmp_path / "m.db"
    base = ("--db", str(db), "--config", str(config))
    script = "/model fast\n/model gpt-4o\n/fork --model smart --name kid\n/model offline\n"
    done = ikigai(*base, "run", input=script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:4] == [
        "Model set to openai/gpt-4o-mini (fast).", _no_key("OPENAI_API_KEY", "openai/gpt-4o-mini"),
        "Model set to openai/gpt-4o (gpt-4o).", _no_key("OPENAI_API_KEY", "openai/gpt-4o")]
    agents = {a["name"]: a for a in json.loads(ikigai(*base, "agents", "--json").stdout)}
    assert agents["kid"]["model"] == "anthropic/claude-sonnet-4-5"  # stored by its full name
    log = json.loads(ikigai(*base, "log", "--json").stdout)
    assert [e["payload"]["model"] for e in log if e["kind"] == "model"] == [
        "openai/gpt-4o-mini", "openai/gpt-4o", "offline"]
    # --model with an alias: the same model is not switched to again
    again = ikigai(*base, "--model", "fast", "run", input="/model\n")
    assert again.stdout.splitlines() == ["Model: openai/gpt-4o-mini",
                                         _no_key("OPENAI_API_KEY", "openai/gpt-4o-mini")]
    again = ikigai(*base, "--model", "fast", "run", input="/model\n")
    log = json.loads(ikigai(*base, "log", "--json").stdout)
    assert [e["payload"]["model"] for e in log if e["kind"] == "model"][-1:] == ["openai/gpt-4o-mini"]
    assert sum(e["kind"] == "model" for e in log) == 4


def test_unknown_model_flag_is_a_usage_error_with_near_matches(ikigai, tmp_path):
    db = tmp_path / "u.db"
    done = ikigai("--db", str(db), "--model", "claude-sonet-4-5", "run", input="hi\n")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "did you mean claude-sonnet-4-5" in done.stderr
    assert not db.exists()
