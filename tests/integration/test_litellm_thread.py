"""litellm off the event loop (issue 14, item 4): what litellm and the provider SDKs do for
a request (imports, pricing the prompt, building the SDK's request) runs in litellm's own
thread, never on the caller's loop; the preload warms that thread up, never for the
offline model. Timings are the bench's (benchmarks/stall.py); these check the mechanism,
through real litellm against the loopback fake."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ikigai_tui.core.provider import Request, TextDelta
from ikigai_tui.llm import litellm_thread
from ikigai_tui.llm.litellm_import import import_litellm
from ikigai_tui.llm.litellm_provider import LiteLLMProvider
from ikigai_tui.llm.providers import Providers
from tests.fakes.server import Fault, Reply
from tests.integration.provider_helpers import MODELS, base_for

REPO = Path(__file__).resolve().parents[2]


async def _collect(provider: LiteLLMProvider, text: str = "hi") -> list:
    request = Request(model=provider.model, system="", messages=[{"role": "user", "content": text}])
    return [event async for event in provider.stream(request)]


async def test_a_request_runs_in_litellms_thread_not_on_the_loop(fake, fmt, monkeypatch):
    litellm = await asyncio.to_thread(import_litellm)
    seen: list[threading.Thread] = []
    original = litellm.acompletion

    async def acompletion(**kwargs):
        seen.append(threading.current_thread())
        return await original(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", acompletion)
    fake.queue(Reply(text="hello from the thread"))
    events = await _collect(LiteLLMProvider(MODELS[fmt], api_base=base_for(fake, fmt)))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello from the thread"
    assert seen == [litellm_thread.thread()]
    assert seen[0] is not threading.main_thread() and seen[0].name == "ikigai-litellm"


async def test_a_failure_in_the_thread_reaches_the_caller(fake, fmt):
    from ikigai_tui.core.provider import ProviderError

    fake.queue(Fault.auth())
    with pytest.raises(ProviderError):
        await _collect(LiteLLMProvider(MODELS[fmt], api_base=base_for(fake, fmt)))


async def test_closing_the_stream_cancels_the_request_in_the_thread(fake, fmt):
    fake.queue(Reply(text="a b c d e f g h", chunk_size=1, chunk_delay=0.2))
    provider = LiteLLMProvider(MODELS[fmt], api_base=base_for(fake, fmt))
    request = Request(model=provider.model, system="", messages=[{"role": "user", "content": "x"}])
    stream = provider.stream(request)
    first = await asyncio.wait_for(stream.__anext__(), 10)
    assert isinstance(first, TextDelta)
    tasks_before = len(asyncio.all_tasks(litellm_thread.loop()))
    await stream.aclose()
    for _ in range(100):  # the cancel reaches litellm's loop on its next turn
        if len(asyncio.all_tasks(litellm_thread.loop())) < tasks_before:
            break
        await asyncio.sleep(0.02)
    assert len(asyncio.all_tasks(litellm_thread.loop())) < tasks_before


async def test_the_preload_warms_up_in_litellms_thread(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    threads: list[tuple[str, threading.Thread]] = []
    monkeypatch.setattr(litellm_thread, "warm", lambda model: threads.append(
        (model, threading.current_thread())))
    assert Providers().preload("openai/gpt-4o") is True
    for _ in range(200):
        if threads:
            break
        await asyncio.sleep(0.01)
    assert threads == [("openai/gpt-4o", litellm_thread.thread())]


async def test_once_preloaded_what_was_loaded_is_left_out_of_collections(monkeypatch):
    """A full collection with litellm loaded walks ~350,000 objects (0.1-0.4 s on whichever
    thread runs it, the event loop's included): the preload freezes them (gc.freeze)."""
    monkeypatch.setattr(litellm_thread, "warm", lambda model: None)
    frozen = []
    monkeypatch.setattr(litellm_thread, "freeze_imported", lambda: frozen.append(True))
    await asyncio.wrap_future(litellm_thread.preload("openai/gpt-4o-mini"))
    assert frozen  # (a preload of an earlier test may end here too)
    assert litellm_thread.preloaded("openai/gpt-4o-mini")


def test_no_preload_for_the_offline_model_nor_a_model_without_its_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    called: list[str] = []
    monkeypatch.setattr(litellm_thread, "preload", called.append)
    providers = Providers()
    assert providers.preload("offline") is False
    assert providers.preload("openai/gpt-4o") is False  # no key: its request fails first
    assert called == []


def test_the_app_never_imports_litellm_on_the_offline_model(tmp_path):
    """The app runs (first frame, first refresh, a reply) on the offline model: litellm and
    its thread are never started."""
    script = (
        "import asyncio, sys, threading\n"
        "from ikigai_tui import config\n"
        "from ikigai_tui.runtime import create_app\n"
        f"cfg = config.load(db={str(tmp_path / 'a.db')!r}, model='offline', env={{}},\n"
        f"                  config_path={str(tmp_path / 'none.toml')!r})\n"
        "async def main():\n"
        "    app = create_app(cfg)\n"
        "    async with app.run_test(size=(100, 30)) as pilot:\n"
        "        for _ in range(5):\n"
        "            await pilot.pause(0.05)\n"
        "        app._preload_provider()\n"
        "        await pilot.pause(0.2)\n"
        "    names = [t.name for t in threading.enumerate()]\n"
        "    print('LITELLM', 'litellm' in sys.modules, 'ikigai-litellm' in names)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert done.stdout.strip().splitlines()[-1:] == ["LITELLM False False"], done.stderr[-2000:]


async def test_the_app_preloads_a_real_model_once_it_is_ready(tmp_path, monkeypatch):
    """Issue 23 item 17: litellm's import (3-4 s holding the GIL in its thread) is not
    started before the app is ready: every agent replayed and the gauge showing the
    focused agent's count. Started beside the replay, it made a 100,000-message log on
    openai/gpt-4o ready in 4.2 s instead of 0.9 s (benchmarks/open_stall.py)."""
    import time

    from ikigai_tui import config
    from ikigai_tui.core.events import AgentRecord, WriteBatch
    from ikigai_tui.store.sqlite.store import Store
    from ikigai_tui.runtime import create_app

    db = tmp_path / "a.db"
    store = await Store.open(db)
    batch = WriteBatch()
    batch.new_agents.append(AgentRecord("root", None, "root", "openai/gpt-4o", "idle", time.time(), None))
    for i in range(40):
        batch.add("root", "user" if i % 2 == 0 else "assistant", {"content": f"message {i}"})
    batch.add("root", "fork", {"child": "kid", "mark": None, "mark_event": None})
    fork_id = (await store.write(batch))[-1].id
    batch = WriteBatch()  # a child, as /fork writes it: every agent is replayed before
    batch.new_agents.append(AgentRecord("kid", "root", "kid", "openai/gpt-4o", "idle",
                                        time.time(), fork_id))
    batch.add("kid", "fork", {"parent": "root", "parent_event": fork_id, "mark": None,
                              "mark_event": None, "model": "openai/gpt-4o"})
    batch.add("kid", "user", {"content": "a question of the kid"})
    await store.write(batch)
    await store.close()

    seen: list[tuple[str, str, list[bool]]] = []
    app = None

    def preload(self, model: str) -> bool:
        seen.append((model, app.gauge.render().plain,
                     [agent.replayer is not None for agent in app.session.tree]))
        return True

    monkeypatch.setattr(Providers, "preload", preload)
    cfg = config.load(db=str(db), model="openai/gpt-4o", env={},
                      config_path=str(tmp_path / "none.toml"))
    app = create_app(cfg)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(100):
            await pilot.pause(0.05)
            if seen:
                break
        await pilot.pause(0.3)  # and never again
        assert app.startup_error is None
    assert len(seen) == 1, seen
    model, gauge, replayed = seen[0]
    assert model == "openai/gpt-4o"
    assert gauge.startswith("Sent: ") and gauge[len("Sent: ")].isdigit(), gauge
    assert replayed == [True, True]


async def test_the_app_preloads_a_real_model_after_its_first_frame(tmp_path, monkeypatch):
    from ikigai_tui import config
    from ikigai_tui.runtime import create_app

    asked: list[tuple[str, bool]] = []
    app = None

    def preload(self, model: str) -> bool:
        asked.append((model, app is not None and app.screen.is_mounted))
        return True

    monkeypatch.setattr(Providers, "preload", preload)
    cfg = config.load(db=str(tmp_path / "a.db"), model="openai/gpt-4o", env={},
                      config_path=str(tmp_path / "none.toml"))
    app = create_app(cfg)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(100):  # after the first frame, once the screen has settled
            await pilot.pause(0.05)
            if asked:
                break
        assert app.startup_error is None
        assert asked == [("openai/gpt-4o", True)]
