"""Token counting (SPEC §7): exact for OpenAI models with tiktoken loaded offline, an
estimate (bytes/4 times a learned factor) elsewhere, and cached per message."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ikigai_tui.core.tokens import counter as tokens
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.tokens.encoders import tokenizer_dir
from ikigai_tui.core.replay.request import DEFAULT_SYSTEM_PROMPT
from ikigai_tui.core.tokens.counter import (
    FACTOR_BOUNDS, MESSAGE_OVERHEAD, REPLY_PRIMING, TokenCounter, encoding_name, learn_factor,
    message_segments, tools_text,
)
from ikigai_tui.core.tools import tool_schemas
from ikigai_tui.core.tokens.window import ContextMeter

LONG = " ".join(f"word{i} and some filler text, repeated to be long." for i in range(800))
CODE = textwrap.dedent('''\
    def fib(n: int) -> int:
        """Return the n-th Fibonacci number."""
        a, b = 0, 1
        for _ in range(n):
            a, b = b, a + b
        return a

    if __name__ == "__main__":
        print({k: fib(k) for k in range(10)})  # {0: 0, 1: 1, ...}
    ''')
UNICODE = "Grüße aus Köln! 東京は晴れ。Привет, мир. 🙂👍🏽 café naïve — “quotes” ∑∫√ 한국어 עברית"

CONVERSATION = [
    ("user", {"content": "Hello, world!"}),
    ("assistant", {"content": UNICODE}),
    ("user", {"content": "Please explain this code:\n```python\n" + CODE + "```"}),
    ("tool_call", {"call_id": "call_1", "name": "slash",
                   "arguments": '{"command": "marks", "args": "ünïcödé 東京"}'}),
    ("tool_result", {"call_id": "call_1", "call_event": 4, "content": "No marks.\n" + CODE}),
    ("assistant", {"content": LONG}),
    ("summary", {"content": "Earlier we talked about <|endoftext|> and " + UNICODE}),
    ("user", {"content": "x" * 5000 + "\t\n  " + "😀" * 300}),
    ("assistant", {"content": ""}),
]
SYSTEM = DEFAULT_SYSTEM_PROMPT + "\n\nPinned notes (always apply):\n1. Use 日本語 when asked."


@pytest.fixture
def tiktoken_encoding(monkeypatch):
    """tiktoken itself, pointed at the BPE files the product says it uses (never a download)."""
    folder = tokenizer_dir()
    assert folder is not None and folder.is_dir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    import tiktoken

    return tiktoken.get_encoding


def _reference_count(enc, system: str, tools: list, conversation) -> int:
    """OpenAI's chat counting recipe over the serialized request: 3 per message plus the
    tokens of its role and texts, the system prompt as a message, the tools JSON, 3 priming."""
    def n(text: str) -> int:
        return len(enc.encode_ordinary(text))

    total = 3 + n("system") + n(system)
    total += n(tools_text(tools)) if tools else 0
    for kind, payload in conversation:
        total += 3 + sum(n(segment) for segment in message_segments(kind, payload))
    return total + 3


@pytest.mark.parametrize(("model", "encoding"), [
    ("openai/gpt-4o", "o200k_base"),
    ("openai/gpt-4", "cl100k_base"),
])
def test_openai_count_equals_tiktoken(tiktoken_encoding, model, encoding):
    assert encoding_name(model) == encoding
    enc = tiktoken_encoding(encoding)
    counter = TokenCounter(model)
    assert counter.exact and counter.encoding == encoding
    tools = tool_schemas()
    expected = _reference_count(enc, SYSTEM, tools, CONVERSATION)
    got = counter.fixed(SYSTEM, tools) + sum(counter.message(k, p) for k, p in CONVERSATION)
    assert got == expected
    assert isinstance(got, int)
    # Piece by piece, too: each message and each text on its own.
    for kind, payload in CONVERSATION:
        assert counter.message(kind, payload) == 3 + sum(
            len(enc.encode_ordinary(s)) for s in message_segments(kind, payload))
    for text in (UNICODE, CODE, LONG, "<|endoftext|> is plain text here"):
        assert counter.text(text) == len(enc.encode_ordinary(text)) > 0
    assert counter.text("") == 0
    # Known figures (the same for both encodings), so a wrong encoding cannot pass.
    assert counter.text("Hello, world!") == 4
    assert counter.fixed("", ()) == MESSAGE_OVERHEAD + 1 + REPLY_PRIMING  # "system" is one token
    # An exact count is never scaled by a factor.
    assert TokenCounter(model, factor=2.5).factor == 1.0
    assert counter.scale(got) == got


def test_the_two_encodings_really_differ(tiktoken_encoding):
    """The model -> encoding choice is observable: the same text counts differently."""
    text = UNICODE + CODE
    o200k, cl100k = TokenCounter("openai/gpt-4o"), TokenCounter("openai/gpt-4")
    assert o200k.text(text) == len(tiktoken_encoding("o200k_base").encode_ordinary(text))
    assert cl100k.text(text) == len(tiktoken_encoding("cl100k_base").encode_ordinary(text))
    assert o200k.text(text) != cl100k.text(text)


@pytest.mark.parametrize(("model", "expected"), [
    ("openai/gpt-4o", "o200k_base"), ("openai/gpt-4o-mini", "o200k_base"),
    ("openai/gpt-4.1", "o200k_base"), ("openai/o3-mini", "o200k_base"),
    ("openai/gpt-4", "cl100k_base"), ("openai/gpt-4-turbo", "cl100k_base"),
    ("openai/gpt-3.5-turbo", "cl100k_base"),
    ("openai/fake-model", None), ("anthropic/claude-sonnet-4-5", None),
    ("gemini/gemini-2.5-pro", None), ("offline", None), ("gpt-4o", None),
])
def test_encoding_name(model, expected):
    assert encoding_name(model) == expected
    assert TokenCounter(model).exact is (expected is not None)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
def test_exact_text_count_for_any_text(tiktoken_encoding, text):
    enc = tiktoken_encoding("o200k_base")
    assert TokenCounter("openai/gpt-4o").text(text) == len(enc.encode_ordinary(text))


# -- offline: never a download -------------------------------------------------------------

_NO_NETWORK = textwrap.dedent('''
    import os, socket, sys

    def refuse(*args, **kwargs):
        raise OSError("network access attempted: %r" % (args[1:] or args,))

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    # The guard itself works: a connection to anywhere fails.
    try:
        socket.socket().connect(("127.0.0.1", 9))
    except OSError as exc:
        assert "network access attempted" in str(exc)
    else:
        raise SystemExit("the guard does not work")
    assert "TIKTOKEN_CACHE_DIR" not in os.environ
    assert "CUSTOM_TIKTOKEN_CACHE_DIR" not in os.environ

    from ikigai_tui.core.tokens.counter import TokenCounter
    for model in ("openai/gpt-4o", "openai/gpt-4"):
        counter = TokenCounter(model)
        print(model, counter.text("Hello, world!"), counter.text("Grüße 東京 🙂"), counter.exact)
''')


def test_counting_never_touches_the_network(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TIKTOKEN_CACHE_DIR", "CUSTOM_TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    # tiktoken's default cache lives in the temp dir: make it an empty one, so only the
    # files the product points at can satisfy the load.
    empty = tmp_path / "tmp"
    empty.mkdir()
    env.update(TMPDIR=str(empty), TEMP=str(empty), TMP=str(empty))
    done = subprocess.run([sys.executable, "-c", _NO_NETWORK], capture_output=True, text=True,
                          env=env, timeout=60, cwd=str(tmp_path.parent))
    assert done.returncode == 0, done.stderr
    o200k = TokenCounter("openai/gpt-4o").text("Grüße 東京 🙂")
    cl100k = TokenCounter("openai/gpt-4").text("Grüße 東京 🙂")
    assert done.stdout.splitlines() == [f"openai/gpt-4o 4 {o200k} True",
                                        f"openai/gpt-4 4 {cl100k} True"]
    assert not any(empty.iterdir())  # nothing was cached in the default place either


# -- estimates -----------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-pro",
                                   "openai/fake-model", "offline"])
def test_estimate_is_bytes_over_four_times_the_factor(model):
    counter = TokenCounter(model, factor=1.5)
    assert counter.exact is False and counter.factor == 1.5
    for text in ("abcd", "Hello, world!", UNICODE, CODE, LONG):
        assert counter.text(text) == len(text.encode("utf-8")) / 4
    assert counter.text("é") == 0.5  # bytes, not characters
    assert counter.text("🙂") == 1.0
    for kind, payload in CONVERSATION:
        assert counter.message(kind, payload) == MESSAGE_OVERHEAD + sum(
            len(s.encode("utf-8")) / 4 for s in message_segments(kind, payload))
    raw = counter.fixed(SYSTEM, tool_schemas()) + sum(counter.message(k, p) for k, p in CONVERSATION)
    assert counter.scale(raw) == math.ceil(raw * 1.5)
    assert counter.scale(100) == 150
    assert counter.scale(10.1) == 16  # rounded up: never under-reported
    # The meter shows the scaled figure.
    r = Replayer.from_rows([(i + 1, "user" if i % 2 == 0 else "assistant", {"content": "z" * 400})
                            for i in range(6)])
    w = ContextMeter(counter).measure(r, [], 0, 200_000)
    raw_total = counter.fixed(DEFAULT_SYSTEM_PROMPT, ()) + sum(
        counter.message(e[1], e[2]) for e in r.ctx.values())
    assert w.tokens == math.ceil(raw_total * 1.5)
    assert w.exact is False


def test_learn_factor_first_sample_sets_it():
    factor, samples = learn_factor(1.0, 0, 1700, 1000.0)
    assert samples == 1
    assert factor == pytest.approx(1.7, rel=1e-12)
    factor, samples = learn_factor(1.0, 0, 500, 1000.0)
    assert (factor, samples) == (pytest.approx(0.5), 1)


def test_learn_factor_converges():
    factor, samples = 1.0, 0
    for raw in [1000.0, 250.5, 9999.0, 42.0, 123456.0] * 4:
        factor, samples = learn_factor(factor, samples, round(1.7 * raw), raw)
    assert samples == 20
    assert factor == pytest.approx(1.7, rel=0.01)
    # It follows a drift afterwards (an average, not frozen by the sample count).
    for _ in range(30):
        factor, samples = learn_factor(factor, samples, 2200, 1000.0)
    assert factor == pytest.approx(2.2, rel=0.01)


def test_learn_factor_converges_from_noisy_samples():
    factor, samples = 1.0, 0
    noise = [1.02, 0.98, 1.01, 0.99, 1.0]
    for i in range(40):
        raw = 500.0 + 37 * i
        factor, samples = learn_factor(factor, samples, round(1.7 * raw * noise[i % 5]), raw)
    assert factor == pytest.approx(1.7, rel=0.01)


@pytest.mark.parametrize(("reported", "raw"), [(0, 100.0), (-5, 100.0), (100, 0.0), (100, -3.0),
                                               (0, 0.0)])
def test_learn_factor_ignores_zero_and_negative(reported, raw):
    assert learn_factor(1.3, 4, reported, raw) == (1.3, 4)
    assert learn_factor(1.0, 0, reported, raw) == (1.0, 0)


# -- incremental: a message costs only itself ----------------------------------------------


class CountingCounter:
    """Wraps a TokenCounter and counts calls of `message`."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self.calls = 0

    def message(self, kind: str, payload: dict) -> float:
        self.calls += 1
        return self.inner.message(kind, payload)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _big_context(n: int) -> list[tuple[int, str, dict]]:
    rows = []
    for i in range(1, n + 1):
        kind = "user" if i % 2 else "assistant"
        rows.append((i, kind, {"content": f"message {i} " + "lorem ipsum " * 20}))
    return rows


@pytest.mark.parametrize("model", ["anthropic/x", "openai/gpt-4o"])
@pytest.mark.parametrize("budget", [0, 1_000_000, 3_000])
def test_appending_one_message_counts_only_that_message(model, budget):
    counter = CountingCounter(TokenCounter(model))
    meter = ContextMeter(counter)
    r = Replayer.from_rows(_big_context(3000))
    tools = tool_schemas()
    first = meter.measure(r, tools, budget, 200_000)
    assert counter.calls == 3000
    assert (first.pruned_turns > 0) is (budget == 3_000)

    meter.measure(r, tools, budget, 200_000)  # nothing changed: nothing recounted
    assert counter.calls == 3000

    r.apply((3001, "user", {"content": "one more " * 30}))
    after = meter.measure(r, tools, budget, 200_000)
    assert counter.calls == 3001
    added = TokenCounter(model).message("user", {"content": "one more " * 30})
    if budget != 3_000:
        assert after.window - first.window in (math.floor(added), math.ceil(added))

    r.apply((3002, "assistant", {"content": "and a reply"}))
    r.apply((3003, "user", {"content": "and a question"}))
    meter.measure(r, tools, budget, 200_000)
    assert counter.calls == 3003


def test_recount_after_a_context_change_reuses_the_cache():
    """A clear + undo rebuilds the window from the start, but no message is counted twice."""
    counter = CountingCounter(TokenCounter("anthropic/x"))
    meter = ContextMeter(counter)
    rows = _big_context(500)
    r = Replayer.from_rows(list(rows))
    meter.measure(r, [], 2_000, 200_000)
    assert counter.calls == 500
    r.apply((501, "clear", {}))
    assert meter.measure(r, [], 2_000, 200_000).start is None
    r.apply((502, "undo", {"target": 501}))
    w = meter.measure(r, [], 50_000, 200_000)  # a larger budget: recomputed from the start
    assert counter.calls == 500
    assert w == ContextMeter(TokenCounter("anthropic/x")).measure(r, [], 50_000, 200_000)


def test_message_count_is_independent_of_the_context():
    counter = TokenCounter("openai/gpt-4o")
    payload = {"content": "the same message " + UNICODE}
    alone = ContextMeter(counter)
    small = Replayer.from_rows([(1, "user", payload)])
    alone.measure(small, [], 0, 200_000)
    big = Replayer.from_rows(_big_context(200) + [(201, "user", payload)])
    crowded = ContextMeter(counter)
    crowded.measure(big, [], 0, 200_000)
    assert alone.cache[1] == crowded.cache[201] == counter.message("user", payload)


def test_exact_models_learn_no_factor():
    assert tokens.encoding_name("openai/gpt-4o") == "o200k_base"
    from ikigai_tui.core.session import Session, SessionSettings

    class _NoStore:
        def add_commit_hook(self, hook, **options):
            pass

    session = Session(_NoStore(), None, SessionSettings())
    assert session.learn("openai/gpt-4o", 5000, 1000.0) is None
    assert "openai/gpt-4o" not in session.factors
    assert session.learn("anthropic/claude-sonnet-4-5", 2000, 1000.0) == (pytest.approx(2.0), 1)
    assert session.factors["anthropic/claude-sonnet-4-5"][0] == pytest.approx(2.0)


@pytest.mark.parametrize("reported", [10, 2_900, 310, 1, 100_000])
def test_learn_factor_ignores_implausible_reports(reported):
    """Bytes/4 is never 3x off for real text: a report outside a third to three times the
    estimate (cached input left out, a proxy's dummy usage) teaches nothing."""
    raw = 1000.0
    low, high = FACTOR_BOUNDS
    factor, samples = learn_factor(1.2, 3, reported, raw)
    if low <= reported / raw <= high:
        assert samples == 4 and factor != 1.2
    else:
        assert (factor, samples) == (1.2, 3)
