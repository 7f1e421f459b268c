"""Every way out of the memories folder is refused, with nothing touched outside it:
`..`, absolute paths elsewhere, a sibling sharing the prefix, symlinks pointing out and
in, a symlink swapped in after the check (the race: the check passes, then the open
must still refuse), fifos, huge files."""

from __future__ import annotations

import os
import stat

import pytest

from ikigai_tui.core.memory import change as change_module
from ikigai_tui.core.memory.commands import plan, view
from ikigai_tui.core.memory.sandbox import MemoryRefused, Sandbox, parse


@pytest.fixture
def place(tmp_path):
    """(sandbox, outside folder with a secret file); the memories folder has notes/a.md."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    box = Sandbox(tmp_path / "memories")
    plan(box, {"command": "create", "path": "/memories/notes/a.md", "file_text": "mine"}).make(box)
    return box, outside


def _outside_untouched(outside):
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    assert (outside / "secret.md").read_text() == "secret"


WRITES = [
    {"command": "create", "path": "{p}", "file_text": "x"},
    {"command": "str_replace", "path": "{p}", "old_str": "secret", "new_str": "pwned"},
    {"command": "insert", "path": "{p}", "insert_line": 0, "insert_text": "pwned"},
    {"command": "delete", "path": "{p}"},
    {"command": "rename", "old_path": "{p}", "new_path": "/memories/stolen.md"},
    {"command": "rename", "old_path": "/memories/notes/a.md", "new_path": "{p}"},
]


def _every_command(box, path):
    """Run view and each write on `path`; each must be refused."""
    with pytest.raises(MemoryRefused):
        view(box, {"path": path})
    for template in WRITES:
        args = {k: (v.format(p=path) if isinstance(v, str) else v) for k, v in template.items()}
        with pytest.raises(MemoryRefused):
            plan(box, args).make(box)


@pytest.mark.parametrize("path", [
    "/memories/../outside/secret.md", "/memories/notes/../../outside/secret.md",
    "/memories/notes/..", "/memories/./notes/a.md",
])
def test_dot_dot_and_dot_are_refused(place, path):
    box, outside = place
    with pytest.raises(MemoryRefused, match="uses '"):
        parse(path)
    _every_command(box, path)
    _outside_untouched(outside)


def test_absolute_paths_elsewhere_and_the_prefix_sibling_are_refused(place, tmp_path):
    box, outside = place
    sibling = tmp_path / "memories-evil"
    sibling.mkdir()
    for path in [str(outside / "secret.md"), "/etc/passwd", "/memories-evil/x.md", "memories/a.md",
                 "/Memories/a.md", "", "/memoriesx"]:
        with pytest.raises(MemoryRefused):
            parse(path)
        _every_command(box, path)
    _outside_untouched(outside)
    assert list(sibling.iterdir()) == []


def test_other_bad_paths(place):
    box, _outside = place
    for path in ["/memories/a\x00b", "/memories/a\\b", "/memories/.hidden", None, 7,
                 "/memories/" + "x" * 300]:
        with pytest.raises(MemoryRefused):
            parse(path)


def test_a_symlink_pointing_out_is_never_followed(place):
    box, outside = place
    os.symlink(outside, box.root / "link")  # a folder link
    os.symlink(outside / "secret.md", box.root / "file.md")  # a file link
    for path in ["/memories/link/secret.md", "/memories/link/new.md", "/memories/file.md",
                 "/memories/link"]:
        _every_command(box, path)
    _outside_untouched(outside)
    assert os.path.islink(box.root / "link") and os.path.islink(box.root / "file.md")
    # A listing does not walk into it either.
    assert "secret" not in view(box, {"path": "/memories"})


def test_a_symlink_pointing_in_is_not_followed_either(place):
    box, outside = place
    os.symlink(box.root / "notes", box.root / "alias")
    os.symlink(box.root / "notes" / "a.md", box.root / "alias.md")
    for path in ["/memories/alias/a.md", "/memories/alias.md"]:
        _every_command(box, path)
    assert (box.root / "notes" / "a.md").read_text() == "mine"


def test_a_folder_swapped_for_a_symlink_after_the_check_is_refused_at_the_open(place):
    box, outside = place
    where = box.locate("/memories/notes/new.md")  # the check passes: notes is a folder
    (box.root / "notes" / "a.md").unlink()
    (box.root / "notes").rmdir()
    os.symlink(outside, box.root / "notes")  # ... then the race
    with pytest.raises(MemoryRefused, match="symlink"):
        box.write(where, "pwned", new=True)
    with pytest.raises(MemoryRefused, match="symlink"):
        box.write(where, "pwned", new=False)
    with pytest.raises(MemoryRefused, match="symlink"):
        box.read(where)
    _outside_untouched(outside)


def test_a_file_swapped_for_a_symlink_after_the_check_is_refused_at_the_open(place):
    box, outside = place
    where = box.locate("/memories/notes/a.md")
    os.unlink(box.root / "notes" / "a.md")
    os.symlink(outside / "secret.md", box.root / "notes" / "a.md")
    with pytest.raises(MemoryRefused, match="symlink"):
        box.read(where)
    with pytest.raises(MemoryRefused, match="symlink"):
        box.unlink(where)
    box.write(where, "replaced", new=False)  # a rename replaces the link itself
    assert not os.path.islink(box.root / "notes" / "a.md")
    _outside_untouched(outside)


def test_a_swap_after_every_check_of_a_tool_write_still_cannot_escape(place, monkeypatch):
    """The whole command: plan passes, the check at make time passes, and only then is
    the folder swapped for a symlink out (monkeypatched in between): the write refuses."""
    box, outside = place
    change = plan(box, {"command": "create", "path": "/memories/notes/b.md", "file_text": "x"})
    real_check = change_module._check_now

    def check_then_swap(*args):
        real_check(*args)
        (box.root / "notes" / "a.md").unlink()
        (box.root / "notes").rmdir()
        os.symlink(outside, box.root / "notes")

    monkeypatch.setattr(change_module, "_check_now", check_then_swap)
    with pytest.raises(MemoryRefused, match="symlink"):
        change.make(box)
    _outside_untouched(outside)


def test_a_fifo_is_refused_without_blocking(place):
    box, outside = place
    os.mkfifo(box.root / "pipe")
    with pytest.raises(MemoryRefused, match="not a regular file"):
        view(box, {"path": "/memories/pipe"})
    with pytest.raises(MemoryRefused, match="not a regular file"):
        box.read(parse("/memories/pipe"))
    _every_command(box, "/memories/pipe")
    assert "pipe" not in view(box, {"path": "/memories"})
    _outside_untouched(outside)


def test_a_device_file_is_refused(place):
    box, _outside = place
    os.symlink("/dev/null", box.root / "null")  # a link to a device: never followed
    _every_command(box, "/memories/null")
    try:  # a device node itself (needs the privilege to make one)
        os.mknod(box.root / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except (PermissionError, OSError):
        pytest.skip("cannot make a device node here")
    with pytest.raises(MemoryRefused, match="not a regular file"):
        view(box, {"path": "/memories/zero"})
    _every_command(box, "/memories/zero")
    assert "zero" not in view(box, {"path": "/memories"})


def test_a_huge_file_put_there_by_hand_is_not_read(place):
    box, _outside = place
    with open(box.root / "huge.md", "wb") as handle:
        handle.truncate(box.limits.file_bytes * 5)
    with pytest.raises(MemoryRefused, match="over the size a memory file may have"):
        view(box, {"path": "/memories/huge.md"})
    with pytest.raises(MemoryRefused):
        plan(box, {"command": "create", "path": "/memories/big.md",
                   "file_text": "x" * (box.limits.file_bytes + 1)})
    assert not (box.root / "big.md").exists()


def test_a_file_where_a_folder_is_needed(place):
    box, _outside = place
    with pytest.raises(MemoryRefused, match="a file stands where a directory is needed"):
        plan(box, {"command": "create", "path": "/memories/notes/a.md/b.md", "file_text": "x"})
