"""Model limits said truthfully (issue 28, item 5): a model litellm's pinned map lists gets
its limit; the few it lacks whose providers publish one get that figure; any other name is
accepted with a warning, and /context and `context --json` say the limit is assumed."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.llm.models import UNKNOWN_LIMITS
from ikigai_tui.llm.providers import Providers


@pytest.mark.parametrize("given, full, limit", [
    ("anthropic/claude-3-opus-20240229", "anthropic/claude-3-opus-20240229", 200_000),
    ("claude-3-haiku-20240307", "anthropic/claude-3-haiku-20240307", 200_000),
    ("gemini/gemini-1.5-pro", "gemini/gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", "gemini/gemini-1.5-flash", 1_048_576),
])
def test_models_the_map_lacks_get_their_published_limit(given, full, limit):
    providers = Providers()
    assert providers.check(given) == full  # a bare name of the table resolves too
    limits = providers.limits(given)
    assert (limits.input, limits.source, limits.known) == (limit, "published", True)


def test_the_map_and_the_config_win_and_anything_else_is_assumed():
    providers = Providers(model_input_limits={"openai/my-model": 32_000})
    assert providers.limits("openai/gpt-4o").source == "map"
    assert providers.limits("offline").source == "offline"
    assert (providers.limits("openai/my-model").input,
            providers.limits("openai/my-model").source) == (32_000, "config")
    unknown = providers.limits("openai/claude-3-opus-20240229")  # not Anthropic's: a guess
    assert (unknown.input, unknown.source, unknown.known) == (UNKNOWN_LIMITS[0], "assumed", False)


def test_an_unlisted_model_is_accepted_with_a_warning_and_said_assumed(ikigai, tmp_path):
    base = ("--db", str(tmp_path / "l.db"))
    done = ikigai(*base, "--model", "openai/house-model", "run", input="/context\n",
                  env={"OPENAI_API_KEY": "k-1"})
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr  # a script's stderr keeps to errors
    assert any(line.startswith("Input limit: 128K is assumed") for line in done.stdout.splitlines())
    data = json.loads(ikigai(*base, "context", "--json").stdout)
    assert (data["limit"], data["limit_source"], data["limit_assumed"]) == (128_000, "assumed", True)
    # /model to such a name says so as it is chosen
    chosen = ikigai(*base, "run", input="/model openai/other-model\n", env={"OPENAI_API_KEY": "k"})
    assert chosen.stdout.splitlines()[1].startswith("Warning: its input limit of 128K is assumed")


def test_a_published_limit_is_used_and_named(ikigai, tmp_path):
    base = ("--db", str(tmp_path / "p.db"))
    done = ikigai(*base, "run", input="/model claude-3-opus-20240229\n/context\n",
                  env={"ANTHROPIC_API_KEY": "k-1"})
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stdout + done.stderr
    assert "of 200K" in done.stdout
    assert "Input limit: 200K is the provider's published figure" in done.stdout
    data = json.loads(ikigai(*base, "context", "--json").stdout)
    assert (data["limit"], data["limit_source"], data["limit_assumed"]) == (200_000, "published", False)


async def test_a_terminal_is_warned_at_start(tmp_path):
    from ikigai_tui.cli.run import warn_assumed_limit
    from ikigai_tui.config import load
    from ikigai_tui.runtime import close_session, open_session

    config = load(config_path=str(tmp_path / "none.toml"), env={}, db=str(tmp_path / "t.db"),
                  model="openai/house-model")
    session = await open_session(config)
    try:
        lines: list[str] = []
        err = type("Err", (), {"line": lambda self, text: lines.append(text)})()
        root = session.tree.root
        warn_assumed_limit(session, root, err, tty=False)
        assert lines == []
        warn_assumed_limit(session, root, err, tty=True)
        assert len(lines) == 1 and lines[0].startswith("Warning: the input limit of 128K is assumed")
        assert 'max_input_tokens in [models."openai/house-model"]' in lines[0]
        await session.command(root.id, "/model gpt-4o")
        warn_assumed_limit(session, root, err, tty=True)
        assert len(lines) == 1  # a model the map lists: nothing to say
    finally:
        await close_session(session)
