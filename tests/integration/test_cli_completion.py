"""`ikigai completion bash|zsh|fish` (issue 16, item 7): scripts that load in their shell
and complete the subcommands and options the parser has."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ikigai_tui.cli import build_parser
from ikigai_tui.cli.completion import script

CLI = f"{sys.executable} -m ikigai_tui"


def _bash(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    return subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True,
                          text=True, env=env, timeout=60)


def test_bash_script_loads_and_registers():
    done = _bash(f"ikigai() {{ {CLI} \"$@\"; }}\nsource <(ikigai completion bash) && complete -p ikigai")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.strip() == "complete -o default -F _ikigai ikigai"


@pytest.mark.parametrize("line, wanted, unwanted", [
    ("ikigai ", ["ask", "run", "paths", "completion", "--model"], []),
    ("ikigai co", ["context", "completion"], ["run"]),
    ("ikigai run --", ["--agent", "--script", "--output-format"], ["--recover"]),
    ("ikigai run --output-format ", ["text", "json", "stream-json"], ["--agent"]),
    ("ikigai completion ", ["bash", "zsh", "fish"], []),
    ("ikigai export --format ", ["md", "json"], []),
])
def test_bash_completes(tmp_path, line, wanted, unwanted):
    path = tmp_path / "c.bash"
    path.write_text(script("bash", build_parser()))
    words = line.split(" ")
    code = (f"source {path}\nCOMP_WORDS=({' '.join(repr(w) for w in words)})\n"
            f"COMP_CWORD={len(words) - 1}\n_ikigai\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"")
    done = _bash(code)
    assert done.returncode == 0, done.stderr
    got = done.stdout.split()
    assert set(wanted) <= set(got), got
    assert not set(unwanted) & set(got), got


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts(shell, tmp_path):
    text = script(shell, build_parser())
    for name in ("ask", "run", "context", "paths", "completion", "output-format"):
        assert name in text
    path = tmp_path / f"c.{shell}"
    path.write_text(text)
    if shutil.which(shell) is None:
        # Not installed here: at least the quoting balances on every line.
        for line in text.splitlines():
            assert line.count("'") % 2 == 0 or "\\'" in line, line
        pytest.skip(f"{shell} is not installed: syntax not checked by the shell")
    check = [shell, "-n", str(path)] if shell == "zsh" else [shell, "--no-execute", str(path)]
    done = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_unknown_shell_is_a_usage_error(ikigai):
    done = ikigai("completion", "tcsh")
    assert done.returncode == 2
    assert "invalid choice" in done.stderr


def test_zsh_registers_the_function(tmp_path):
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed")
    path = tmp_path / "c.zsh"
    path.write_text(script("zsh", build_parser()))
    done = subprocess.run(["zsh", "-f", "-c", f"autoload -Uz compinit; compinit -u -D; "
                           f"source {path}; print -r -- $_comps[ikigai]"],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "_ikigai"


@pytest.mark.parametrize("line, wanted, unwanted", [
    ("ikigai r", ["run"], ["ask"]),
    ("ikigai run --output-format ", ["text", "json", "stream-json"], ["README.md"]),
    ("ikigai completion ", ["bash", "zsh", "fish"], []),
])
def test_fish_completes(tmp_path, line, wanted, unwanted):
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed")
    path = tmp_path / "c.fish"
    path.write_text(script("fish", build_parser()))
    (tmp_path / "README.md").write_text("")
    done = subprocess.run(["fish", "-N", "-c", f"source {path}; complete -C '{line}'"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    got = [row.split("\t")[0] for row in done.stdout.splitlines()]
    assert set(wanted) <= set(got), got
    assert not set(unwanted) & set(got), got
