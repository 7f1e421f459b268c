"""The suite's own PostgreSQL server (tests/pg_server.py, the `pg_server` and `pg_url`
fixtures): it starts from the locked wheel, each test database is its own, a stop and a
start keep the data, and nothing of it is left running after a stop, a close or the end
of the process that started it."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import asyncpg
import pytest

from tests.pg_server import PgServer, PgServerError, install_dir, port_open

ROOT = Path(__file__).resolve().parents[2]


def wait_closed(port: int, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while port_open(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


async def test_each_test_database_is_its_own(pg_url, pg_server):
    assert re.fullmatch(rf"postgresql://postgres@127\.0\.0\.1:{pg_server.port}/t_\d+", pg_url)
    other = pg_server.create_database()
    assert other != pg_url
    first = await asyncpg.connect(pg_url)
    second = await asyncpg.connect(other)
    try:
        await first.execute("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('one')")
        assert await first.fetchval("SELECT body FROM notes") == "one"
        assert await second.fetchval("SELECT to_regclass('notes')") is None
        assert await second.fetchval("SELECT current_database()") == other.rsplit("/", 1)[1]
    finally:
        await first.close()
        await second.close()
    pg_server.drop_database(other)
    assert pg_server.sql("SELECT count(*) FROM pg_database WHERE datname = "
                         f"'{other.rsplit('/', 1)[1]}'").strip() == "0"


async def test_a_stop_and_a_start_keep_the_data_and_the_port(pg_url, pg_server):
    conn = await asyncpg.connect(pg_url)
    await conn.execute("CREATE TABLE kept (n int); INSERT INTO kept VALUES (41), (1)")
    pid = pg_server.proc.pid
    pg_server.stop()
    assert not pg_server.running and not port_open(pg_server.port)
    with pytest.raises((OSError, asyncpg.PostgresError, asyncpg.InterfaceError)):
        await conn.fetchval("SELECT 1")  # the session was ended by the shutdown
    conn.terminate()
    port = pg_server.port
    pg_server.start()
    assert pg_server.port == port and pg_server.proc.pid != pid
    again = await asyncpg.connect(pg_url)
    try:
        assert await again.fetchval("SELECT sum(n) FROM kept") == 42
    finally:
        await again.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's server runs as another user")
def test_as_root_the_server_runs_as_nobody(pg_server):
    assert os.stat(f"/proc/{pg_server.proc.pid}").st_uid == pwd.getpwnam("nobody").pw_uid


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's server runs as another user")
def test_as_root_a_wheel_nobody_can_reach_is_copied_for_the_server(tmp_path):
    """A checkout under a folder only root may enter (root's home, pytest's tmp_path)."""
    hidden = tmp_path / "venv"
    hidden.mkdir(mode=0o700)
    package = install_dir().parent
    (hidden / package.name).symlink_to(package)
    (hidden / f"{package.name}.libs").symlink_to(package.parent / f"{package.name}.libs")
    server = PgServer(hidden / package.name / "pginstall")
    try:
        assert server.install.is_relative_to(server.root)
        server.start()
        assert server.sql("SELECT 6 * 7").strip() == "42"
    finally:
        server.close()


def test_close_ends_the_server_and_deletes_its_folder():
    server = PgServer()
    try:
        server.start()
        pid, port = server.proc.pid, server.port
        assert port_open(port) and server.data.is_dir()
    finally:
        server.close()
    assert not port_open(port)
    assert not server.root.exists()
    assert not Path(f"/proc/{pid}").exists()


def test_a_server_that_cannot_start_says_why_from_its_log():
    server = PgServer()
    try:
        with open(server.data / "postgresql.conf", "a") as conf:
            conf.write("\nno_such_setting_here = 1\n")
        with pytest.raises(PgServerError, match="no_such_setting_here") as raised:
            server.start(timeout=30)
        assert "server log" in str(raised.value)
        assert not server.running
    finally:
        server.close()


def test_the_server_ends_with_the_process_that_started_it(tmp_path):
    """A test worker killed mid-run leaves no PostgreSQL behind (its folder, though)."""
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, time
            sys.path.insert(0, sys.argv[1])
            from tests.pg_server import PgServer
            server = PgServer()
            server.start()
            print(server.port, server.proc.pid, server.root, flush=True)
            time.sleep(600)
        """), str(ROOT)],
        stdout=subprocess.PIPE, text=True,
    )
    pid = root = None
    try:
        port, pid, root = child.stdout.readline().split()
        assert port_open(int(port))
        child.kill()
        child.wait()
        assert wait_closed(int(port)), "the server outlived the process that started it"
        deadline = time.monotonic() + 15
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        if pid and Path(f"/proc/{pid}").exists():  # this test failed: end what it left
            os.kill(int(pid), signal.SIGKILL)
        if root:
            shutil.rmtree(root, ignore_errors=True)


def test_settings_choose_durability_the_default_is_without():
    """The suite's server skips fsync; `settings=()` (the benchmarks') keeps PostgreSQL's
    durable defaults."""
    shown = {}
    for name, kwargs in (("default", {}), ("durable", {"settings": ()})):
        server = PgServer(**kwargs)
        try:
            server.start()
            shown[name] = server.sql("SELECT current_setting('fsync') || ' ' || "
                                     "current_setting('synchronous_commit')").strip()
        finally:
            server.close()
    assert shown == {"default": "off off", "durable": "on on"}
