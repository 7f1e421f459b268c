"""Issue 10, item 10: a database that cannot be written. The reading commands (`log`,
`context`, `agents`, `export`, `check`) open it read-only and show exactly what they show
on a writable copy; they never change its mode and never create -wal/-shm where they
cannot. Writing (`run`) fails with one `Error:` line and changes nothing.

Places tried: a 0444 and a 0400 file (root can write those: the program must not), a
read-only bind mount (root only), and a read-only folder as an unprivileged user.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ikigai_tui.cli import main
from tests.conftest import run_ikigai

READERS = [["log"], ["log", "--json"], ["context"], ["context", "--json"], ["agents"],
           ["agents", "--json"], ["export"], ["export", "--format", "json"], ["check"]]
NOBODY = 65534


@pytest.fixture(scope="module")
def original(tmp_path_factory) -> Path:
    """A small log made by the program: a root and a child, a few exchanges."""
    folder = tmp_path_factory.mktemp("orig")
    db = folder / "made.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
    env.update(HOME=str(folder), XDG_DATA_HOME=str(folder / "d"), XDG_CONFIG_HOME=str(folder / "c"),
               IKIGAI_OFFLINE_DELAY="0")
    inputs = "first words\n/mark A\nsecond words\n/fork --name kid hello kid\nthird words\n"
    done = subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(db), "run"],
                          input=inputs, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return db


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def expected(original) -> dict[tuple[str, ...], str]:
    """What each reading command prints on the writable original."""
    out = {}
    for command in READERS:
        done = run_ikigai("--db", str(original), *command)
        assert done.returncode == 0, done.stderr
        # The workspace is the folder the program was started in: named, not compared.
        out[tuple(command)] = done.stdout.replace(str(original), "DB").replace(os.getcwd(), "CWD")
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assert_write_refused(code: int, err: str, db: Path, why: str) -> None:
    assert code == 1
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"Error: cannot write to {db}: ") and why in lines[0], lines[0]


@pytest.mark.parametrize("mode", [0o444, 0o400])
def test_a_read_only_file_is_read_and_never_written_or_re_moded(original, expected, tmp_path,
                                                                capsys, mode):
    db = tmp_path / "ro.db"
    shutil.copy(original, db)
    os.chmod(db, mode)
    before = _sha(db)
    for command in READERS:
        code, out, err = _cli(capsys, "--db", str(db), *command)
        assert (code, err) == (0, ""), (command, err)
        shown = out.replace(str(db), "DB").replace(os.getcwd(), "CWD")
        assert shown == expected[tuple(command)], command
    assert db.stat().st_mode & 0o777 == mode
    code, out, err = _cli(capsys, "--db", str(db), "run", "--script", os.devnull)
    _assert_write_refused(code, err, db, f"the file is read-only (mode {mode:04o})")
    assert out == ""
    assert _sha(db) == before
    assert db.stat().st_mode & 0o777 == mode


def test_the_full_screen_program_refuses_a_read_only_file_in_one_line(original, tmp_path):
    """The TUI opens the log before the screen switches: its error is the same line."""
    from ikigai_tui.config import load
    from ikigai_tui.runtime import create_app

    db = tmp_path / "ro.db"
    shutil.copy(original, db)
    os.chmod(db, 0o444)
    app = create_app(load(db=str(db)))

    async def start() -> None:
        async with app.run_test():
            pass

    import asyncio
    asyncio.run(start())
    assert app.startup_error is not None and "read-only" in app.startup_error
    assert db.stat().st_mode & 0o777 == 0o444


@contextlib.contextmanager
def _read_only_mount(source: Path):
    """`source` seen through a read-only bind mount; skips where mounting is not allowed."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only bind mount needs root and mount(8)")
    view = source.parent / (source.name + "-ro")
    view.mkdir()
    done = subprocess.run(["mount", "--bind", str(source), str(view)], capture_output=True)
    if done.returncode != 0:
        view.rmdir()
        pytest.skip(f"mount --bind is not allowed here: {done.stderr.decode().strip()}")
    try:
        done = subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"remounting read-only is not allowed here: {done.stderr.decode().strip()}")
        yield view
    finally:
        subprocess.run(["umount", str(view)], capture_output=True)
        view.rmdir()


def test_a_read_only_mount_is_read_through_and_writes_are_one_line(original, expected,
                                                                  tmp_path, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(original, folder / "x.db")
    with _read_only_mount(folder) as view:
        db = view / "x.db"
        for command in READERS:
            code, out, err = _cli(capsys, "--db", str(db), *command)
            assert (code, err) == (0, ""), (command, err)
            shown = out.replace(str(db), "DB").replace(os.getcwd(), "CWD")
        assert shown == expected[tuple(command)], command
        # SQLite could not create -wal/-shm there: read as immutable, nothing created.
        assert sorted(p.name for p in view.iterdir()) == ["x.db"]
        code, _, err = _cli(capsys, "--db", str(db), "run", "--script", os.devnull)
        _assert_write_refused(code, err, db, "mounted read-only")


def _as_nobody() -> list[str]:
    if os.geteuid() != 0:
        return []  # already unprivileged: folder and file modes apply as they are
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv(1): cannot drop privileges")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def _public_folder():
    """A folder an unprivileged user can reach (pytest's own is 0700 root's), removed
    after."""
    folder = Path(tempfile.mkdtemp(prefix="ikigai-ro-", dir="/tmp"))
    os.chmod(folder, 0o755)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
    shutil.rmtree(folder, ignore_errors=True)


public_tmp = pytest.fixture(_public_folder)

# Runs each command the test runs, in one process (on a 0444 copy: `run` is refused
# before it writes), then names the files of every module imported from outside the
# standard library: what the program needs besides Python itself.
_PROBE = """
import contextlib, io, json, os, sys, sysconfig
from ikigai_tui.cli import main
commands, out = json.loads(sys.argv[1]), sys.argv[2]
for args in commands:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(args)
        except SystemExit:
            pass
base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix,
        "installed_base": sys.base_prefix, "installed_platbase": sys.base_exec_prefix}
std = tuple(os.path.realpath(sysconfig.get_path(k, vars=base)) + os.sep
            for k in ("stdlib", "platstdlib"))
needed = set()
for name in list(sys.modules):
    top = sys.modules.get(name.partition(".")[0])
    where = getattr(top, "__file__", None)
    if where is None:
        continue
    real = os.path.realpath(where)
    if not real.startswith(std) or any(f"{os.sep}{d}{os.sep}" in real
                                       for d in ("site-packages", "dist-packages")):
        needed.add(os.path.dirname(where) if hasattr(top, "__path__") else where)
with open(out, "w") as handle:
    json.dump(sorted(needed), handle)
"""


def _interpreter(prefix: list[str]) -> str:
    """A Python of this version the unprivileged user can run: the virtual environment's
    own may sit in a folder only its owner enters (a clone under `mktemp -d`)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [sys.executable, os.path.realpath(sys.executable),
                  getattr(sys, "_base_executable", None), shutil.which(f"python{version}"),
                  f"/usr/local/bin/python{version}", f"/usr/bin/python{version}"]
    for python in dict.fromkeys(c for c in candidates if c):
        probe = [*prefix, python, "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
        with contextlib.suppress(OSError):
            done = subprocess.run(probe, capture_output=True, text=True, cwd="/", timeout=30)
            if done.returncode == 0 and done.stdout.strip() == version:
                return python
    pytest.skip(f"no Python {version} that an unprivileged user may run")


@pytest.fixture(scope="module")
def reachable(original):
    """The program as the unprivileged user can run it wherever this clone is: a Python
    it may run, and copies of the package and of the modules it imports, in a folder
    open to all. Returns the start of the command line and the PYTHONPATH."""
    prefix = _as_nobody()
    for folder in _public_folder():
        ro = folder / "probe.db"
        shutil.copy(original, ro)
        os.chmod(ro, 0o444)
        commands = [["--db", str(ro), *c] for c in (*READERS, ["run", "--script", os.devnull])]
        listing = folder / "needed.json"
        done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(commands), str(listing)],
                              capture_output=True, text=True, timeout=120, cwd=folder)
        assert done.returncode == 0, done.stderr
        site = folder / "site"
        site.mkdir()
        for path in map(Path, json.loads(listing.read_text())):
            if path.is_dir():
                shutil.copytree(path, site / path.name,
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(path, site / path.name)
        for path in [site, *site.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        yield [*prefix, _interpreter(prefix), "-S"], str(site)


@pytest.mark.parametrize("what", ["folder", "file"])
def test_an_unprivileged_user_reads_what_it_cannot_write(original, expected, public_tmp,
                                                        reachable, what):
    """A read-only folder (SQLite cannot create -wal/-shm: read as immutable) or a file
    the user may only read: the reports work, `run` is one line, nothing is created."""
    program, path = reachable
    folder = public_tmp / "data"
    folder.mkdir()
    db = folder / "x.db"
    shutil.copy(original, db)
    os.chmod(db, 0o644 if what == "folder" else 0o444)
    if os.geteuid() == 0:
        os.chown(folder, NOBODY, NOBODY)
        os.chown(db, NOBODY if what == "folder" else 0, NOBODY if what == "folder" else 0)
    if what == "folder":
        os.chmod(folder, 0o555)
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
    env.update(HOME=str(public_tmp), XDG_DATA_HOME=str(public_tmp / "d"),
               XDG_CONFIG_HOME=str(public_tmp / "c"), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=path)

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([*program, "-m", "ikigai_tui", "--db", str(db), *args],
                              input=stdin, capture_output=True, text=True, env=env, timeout=60,
                              cwd=public_tmp)

    for command in (["log"], ["context", "--json"], ["agents"], ["check"]):
        done = run(*command)
        assert (done.returncode, done.stderr) == (0, ""), (command, done.stderr)
        shown = done.stdout.replace(str(db), "DB").replace(str(public_tmp), "CWD")
        assert shown == expected[tuple(command)], command
    done = run("run", stdin="hello\n")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"Error: cannot write to {db}: "), done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    if what == "folder":
        assert sorted(p.name for p in folder.iterdir()) == ["x.db"]
    assert db.read_bytes() == original.read_bytes()
