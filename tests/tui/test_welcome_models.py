"""The empty scrollback tells how to set a key and pick a model (issue 16, item 8)."""

from __future__ import annotations

import re

from ikigai_tui.llm.providers import DEFAULT_MODELS, Providers
from ikigai_tui.tui.welcome import LINES


def test_the_welcome_says_how_to_set_a_key_and_pick_a_model():
    models = dict(LINES)["Models"]
    for variable, _model in DEFAULT_MODELS:  # every key the program looks for is named
        assert variable in models
    assert "offline needs no key" in models
    picked = re.findall(r"/model ([\w.-]+?)[.,]?(?= |$)", models)
    assert picked == ["claude-sonnet-4-5", "gpt-4o"]
    for name in picked:  # and the names it suggests are accepted as typed
        Providers().check(name)
