"""The local matcher with the network unreachable and nowhere to download to: a fresh
process whose every connection beyond 127.0.0.1 fails, whose proxies point at a dead
port, and whose home (where wordllama would cache downloads) is empty."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import asyncio, socket, sys
    tried = []
    real_connect = socket.socket.connect

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost") and not isinstance(address, str):
            tried.append(host)
            raise OSError("network unreachable (test)")
        return real_connect(self, address)

    socket.socket.connect = connect
    socket.create_connection = lambda *a, **k: (tried.append(a[0][0]),
                                                (_ for _ in ()).throw(OSError("unreachable")))[1]
    sys.path.insert(0, sys.argv[2])
    from tests.integration.local_matcher_helpers import (
        COOKING, conversation_store, ids_of)
    from ikigai_tui.core.matching.local import LocalMatcher
    from ikigai_tui.embed import default_embedder

    async def main():
        from pathlib import Path
        store, cands = await conversation_store(Path(sys.argv[1]))
        try:
            report = await LocalMatcher(store, default_embedder()).match(
                "food and meals", "forget", cands)
            assert {m.id for m in report.matches} == ids_of(cands, COOKING), report
            none = await LocalMatcher(store, default_embedder()).match(
                "astronomy and planets", "forget", cands)
            assert none.matches == ()
        finally:
            await store.close()
        print("MATCHED", len(report.matches), "TRIED", tried)

    asyncio.run(main())
""")


def test_matches_with_the_network_unreachable_and_no_download(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
               HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9",
               NO_PROXY="", HF_HUB_OFFLINE="0")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "log.db"), str(REPO)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "MATCHED 4 TRIED []" in out.stdout
    assert not any(home.rglob("*")), "something was written to the home folder"
    assert out.stderr == ""  # wordllama's logging.basicConfig must not print
