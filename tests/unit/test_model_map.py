"""The model map (litellm's model_prices_and_context_window_backup.json, 3 MB) read for
one model's limits and prices (issue 23, item 17): the first refresh of a provider
model's log asks its limits on the event loop, and parsing the whole map there was a
~25 ms stall; the model's entry is found in the text and parsed alone."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ikigai_tui.llm import models


MAP = "model_prices_and_context_window_backup.json"


@pytest.fixture
def raw() -> bytes:
    spec = importlib.util.find_spec("litellm")
    path = Path(list(spec.submodule_search_locations)[0]) / MAP if spec else None
    if path is None or not path.exists():
        pytest.skip("litellm's model map is not installed")
    return path.read_bytes()


def test_every_entry_found_alone_equals_the_whole_maps(raw):
    table = json.loads(raw)
    keys = tuple(table)
    assert len(keys) > 1000
    assert models.find_entries(raw, keys) == [
        value if isinstance(value, dict) else None for value in table.values()]


def test_a_name_the_map_lacks_has_no_entry(raw):
    assert models.find_entries(raw, ("openai/no-such-model", "max_input_tokens")) == [None, None]


def test_a_map_that_is_not_an_object_is_parsed_whole():
    assert models.find_entries(b"[1, 2]", ("gpt-4o",)) is None


def test_a_models_limits_and_prices_do_not_parse_the_whole_map(raw):
    for cached in (models._model_map, getattr(models, "_entries", None)):
        if cached is not None:  # (whatever caches the entries read)
            cached.cache_clear()
    limits = models.model_limits("openai/gpt-4o")
    prices = models.model_prices("openai/gpt-4o")
    assert models._model_map.cache_info().currsize == 0
    entry = json.loads(raw)["gpt-4o"]
    assert limits.input == entry["max_input_tokens"] and limits.known
    assert prices is not None and prices.input == entry["input_cost_per_token"]
    assert models.model_limits("openai/no-such-model").known is False
