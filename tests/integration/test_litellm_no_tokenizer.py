"""litellm's preload and first requests build no tokenizer (issue 14: building cl100k's
tables holds the GIL ~80 ms, a frozen screen even from litellm's own thread). litellm
fetches its default encoding on every request (pricing, the Anthropic handler) without
encoding with it when the provider reports usage: it is built only if something encodes
with it (llm/lazy_encoding.py); the preload's rehearsal stops before litellm counts the
reply of its mock (which reports no usage)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ikigai_tui.llm.lazy_encoding import LazyEncoding

REPO = Path(__file__).resolve().parents[2]


def test_requests_to_each_format_build_no_tokenizer():
    """A fresh process (another test may have built cl100k): a request to each wire
    format through real litellm, the loopback fake and usage reported; no tiktoken
    encoding is built (the session's own counter is not involved here)."""
    script = """
import asyncio, os
os.environ.update(OPENAI_API_KEY='k', ANTHROPIC_API_KEY='k', GEMINI_API_KEY='k')
import tiktoken.core
built = []
init = tiktoken.core.Encoding.__init__
def counting(self, name, *a, **k):
    built.append(name)
    init(self, name, *a, **k)
tiktoken.core.Encoding.__init__ = counting
from tests.fakes.server import FakeProvider, Reply
from tests.integration.provider_helpers import MODELS, base_for
from ikigai_tui.core.provider import Request, Usage
from ikigai_tui.llm import litellm_thread
from ikigai_tui.llm.litellm_provider import LiteLLMProvider

async def main():
    with FakeProvider() as fake:
        for fmt in ('openai', 'anthropic', 'gemini'):
            await asyncio.wrap_future(litellm_thread.preload(MODELS[fmt]))
            fake.queue(Reply(text='hello there', usage=(12, 3)))
            p = LiteLLMProvider(MODELS[fmt], api_base=base_for(fake, fmt))
            request = Request(model=p.model, system='', messages=[{'role': 'user', 'content': 'hi'}])
            events = [e async for e in p.stream(request)]
            print('USAGE', fmt, [(e.input_tokens, e.output_tokens) for e in events if isinstance(e, Usage)])
    from litellm.litellm_core_utils import default_encoding
    print('DEFAULT', type(default_encoding.encoding).__name__, default_encoding.encoding.name)
    print('BUILT', built)
asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=180)
    lines = done.stdout.strip().splitlines()
    assert [x for x in lines if x.startswith("USAGE")] == [
        f"USAGE {fmt} [(12, 3)]" for fmt in ("openai", "anthropic", "gemini")], done.stderr[-2000:]
    assert "DEFAULT LazyEncoding cl100k_base" in lines
    assert "BUILT []" in lines


def test_the_lazy_encoding_builds_on_first_use_and_then_is_the_real_one():
    made: list[str] = []

    class Real:
        def encode(self, text: str) -> list[int]:
            return [len(text)]

    def build(name: str) -> Real:
        made.append(name)
        return Real()

    enc = LazyEncoding("cl100k_base", build)
    assert enc.name == "cl100k_base" and not enc.built and made == []
    assert enc.encode("abc") == [3] and enc.encode("de") == [2]
    assert made == ["cl100k_base"] and enc.built
