"""llm/gentle_json.py (issue 14): while litellm loads, json's default loads/dumps run in
pure Python in the loading thread (a C parse of its 1.7 MB tokenizer file held the GIL
~40 ms: the event loop froze), with the same results; other threads keep the C code,
and everything is back as it was afterwards."""

from __future__ import annotations

import json
import threading

from ikigai_tui.llm.gentle_json import python_json_here

DATA = {"a": [1, 2.5, -3e-7, "é\n\"\\\u2028", None, True, False], "b": {"c": "x" * 50, "": []},
        "nested": [[{"k": i} for i in range(20)]]}


def test_same_results_in_python_in_this_thread_only():
    text = json.dumps(DATA)
    before = (json._default_decoder, json._default_encoder)
    with python_json_here():
        assert json.loads(text) == DATA and json.dumps(DATA) == text
        here = json._default_decoder._pick()
        assert type(here.scan_once).__name__ == "function"  # the pure-Python scanner
        assert type(json._default_encoder._pick()).__name__ == "_PythonEncoder"
        other: list = []
        worker = threading.Thread(target=lambda: other.extend(
            [json._default_decoder._pick(), json.loads(text), json.dumps(DATA)]))
        worker.start()
        worker.join(5)
        assert other[0] is before[0] and other[1:] == [DATA, text]
    assert (json._default_decoder, json._default_encoder) == before

