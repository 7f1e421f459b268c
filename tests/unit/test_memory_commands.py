"""The memory tool's commands over a temporary folder: view (listing, numbered lines,
view_range), create, str_replace, insert, delete, rename; each answer as Anthropic's
tool words it; each write planned first (nothing written until made) and reversible
from its recorded payload alone."""

from __future__ import annotations

import pytest

from ikigai_tui.core.memory.change import reverse, sha, words
from ikigai_tui.core.memory.commands import plan, view
from ikigai_tui.core.memory.sandbox import MemoryLimits, MemoryRefused, Sandbox


@pytest.fixture
def box(tmp_path):
    return Sandbox(tmp_path / "memories")


def make(box, **args):
    change = plan(box, args)
    change.make(box)
    return change


def test_view_of_an_empty_memory_lists_nothing_and_creates_nothing(box):
    text = view(box, {"path": "/memories"})
    assert text.startswith("Here're the files and directories up to 2 levels deep in /memories")
    assert not box.root.exists()


def test_create_then_view_file_and_listing(box):
    change = make(box, command="create", path="/memories/notes/a.md", file_text="one\ntwo\nthree")
    assert change.result == "File created successfully at: /memories/notes/a.md"
    assert (box.root / "notes" / "a.md").read_text() == "one\ntwo\nthree"
    assert oct((box.root / "notes" / "a.md").stat().st_mode & 0o777) == "0o600"
    listing = view(box, {"path": "/memories"}).splitlines()
    assert listing[1:] == ["13B\t/memories", "4K\t/memories/notes/", "13B\t/memories/notes/a.md"]
    shown = view(box, {"path": "/memories/notes/a.md"}).splitlines()
    assert shown == ["Here's the content of /memories/notes/a.md with line numbers:",
                     "     1\tone", "     2\ttwo", "     3\tthree"]
    ranged = view(box, {"path": "/memories/notes/a.md", "view_range": [2, 3]}).splitlines()
    assert ranged[1:] == ["     2\ttwo", "     3\tthree"]
    to_end = view(box, {"path": "/memories/notes/a.md", "view_range": [3, -1]}).splitlines()
    assert to_end[1:] == ["     3\tthree"]


@pytest.mark.parametrize("bad", [[0, 2], [5, 6], [3, 2], [1], "1-2", [True, 2]])
def test_a_bad_view_range_is_refused(box, bad):
    make(box, command="create", path="/memories/a.md", file_text="one\ntwo\nthree")
    with pytest.raises(MemoryRefused):
        view(box, {"path": "/memories/a.md", "view_range": bad})


def test_view_of_a_missing_path_says_so(box):
    with pytest.raises(MemoryRefused, match="does not exist. Please provide a valid path"):
        view(box, {"path": "/memories/nope.md"})


def test_create_refuses_an_existing_file_and_writes_nothing(box):
    make(box, command="create", path="/memories/a.md", file_text="first")
    with pytest.raises(MemoryRefused, match="already exists"):
        plan(box, {"command": "create", "path": "/memories/a.md", "file_text": "second"})
    assert (box.root / "a.md").read_text() == "first"


def test_str_replace_edits_one_unique_occurrence(box):
    make(box, command="create", path="/memories/a.md", file_text="alpha\nbeta\ngamma\n")
    change = make(box, command="str_replace", path="/memories/a.md", old_str="beta", new_str="BETA")
    assert (box.root / "a.md").read_text() == "alpha\nBETA\ngamma\n"
    assert change.result.startswith("The memory file has been edited.")
    assert "     2\tBETA" in change.result
    with pytest.raises(MemoryRefused, match="did not appear verbatim"):
        plan(box, {"command": "str_replace", "path": "/memories/a.md", "old_str": "delta",
                   "new_str": "x"})
    make(box, command="str_replace", path="/memories/a.md", old_str="gamma", new_str="alpha")
    with pytest.raises(MemoryRefused, match="Multiple occurrences .* in lines: 1, 3"):
        plan(box, {"command": "str_replace", "path": "/memories/a.md", "old_str": "alpha",
                   "new_str": "x"})


def test_insert_at_top_middle_end_and_out_of_range(box):
    make(box, command="create", path="/memories/a.md", file_text="one\ntwo\n")
    make(box, command="insert", path="/memories/a.md", insert_line=0, insert_text="zero\n")
    change = make(box, command="insert", path="/memories/a.md", insert_line=3, insert_text="three")
    assert change.result == "The file /memories/a.md has been edited."
    assert (box.root / "a.md").read_text() == "zero\none\ntwo\nthree\n"
    with pytest.raises(MemoryRefused, match=r"range \[0, 4\]"):
        plan(box, {"command": "insert", "path": "/memories/a.md", "insert_line": 9,
                   "insert_text": "x"})


def test_delete_a_file_and_a_folder_and_never_the_root(box):
    make(box, command="create", path="/memories/a.md", file_text="a")
    make(box, command="create", path="/memories/d/e/b.md", file_text="b")
    assert make(box, command="delete", path="/memories/a.md").result == "Successfully deleted /memories/a.md"
    folder = make(box, command="delete", path="/memories/d")
    assert folder.payload()["files"] == {"e/b.md": "b"} and folder.payload()["dirs"] == ["e"]
    assert not (box.root / "d").exists() and not (box.root / "a.md").exists()
    with pytest.raises(MemoryRefused, match="Cannot delete the /memories directory itself"):
        plan(box, {"command": "delete", "path": "/memories"})
    with pytest.raises(MemoryRefused, match="does not exist"):
        plan(box, {"command": "delete", "path": "/memories/a.md"})


def test_rename_moves_files_and_folders_and_refuses_an_existing_destination(box):
    make(box, command="create", path="/memories/a.md", file_text="a")
    make(box, command="create", path="/memories/b.md", file_text="b")
    with pytest.raises(MemoryRefused, match="already exists"):
        plan(box, {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"})
    change = make(box, command="rename", old_path="/memories/a.md", new_path="/memories/x/c.md")
    assert change.result == "Successfully renamed /memories/a.md to /memories/x/c.md"
    assert (box.root / "x" / "c.md").read_text() == "a" and not (box.root / "a.md").exists()
    make(box, command="rename", old_path="/memories/x", new_path="/memories/y")
    assert (box.root / "y" / "c.md").read_text() == "a"
    with pytest.raises(MemoryRefused, match="inside itself"):
        plan(box, {"command": "rename", "old_path": "/memories/y", "new_path": "/memories/y/z"})


def test_a_planned_change_writes_nothing_until_made(box):
    make(box, command="create", path="/memories/a.md", file_text="a")
    plan(box, {"command": "str_replace", "path": "/memories/a.md", "old_str": "a", "new_str": "b"})
    plan(box, {"command": "delete", "path": "/memories/a.md"})
    plan(box, {"command": "create", "path": "/memories/new.md", "file_text": "n"})
    assert sorted(p.name for p in box.root.iterdir()) == ["a.md"]
    assert (box.root / "a.md").read_text() == "a"


def test_a_change_planned_against_older_text_is_refused_when_made(box):
    make(box, command="create", path="/memories/a.md", file_text="a")
    change = plan(box, {"command": "str_replace", "path": "/memories/a.md", "old_str": "a",
                        "new_str": "b"})
    (box.root / "a.md").write_text("edited by hand")
    with pytest.raises(MemoryRefused, match="changed since"):
        change.make(box)
    assert (box.root / "a.md").read_text() == "edited by hand"


@pytest.mark.parametrize("args", [
    {"command": "create", "path": "/memories/new/deep/a.md", "file_text": "hello\n"},
    {"command": "str_replace", "path": "/memories/keep.md", "old_str": "keep", "new_str": "kept"},
    {"command": "insert", "path": "/memories/keep.md", "insert_line": 1, "insert_text": "more"},
    {"command": "delete", "path": "/memories/keep.md"},
    {"command": "delete", "path": "/memories/dir"},
    {"command": "rename", "old_path": "/memories/keep.md", "new_path": "/memories/moved/k.md"},
    {"command": "rename", "old_path": "/memories/dir", "new_path": "/memories/dir2"},
])
def test_every_write_is_reversed_from_its_payload(box, args):
    make(box, command="create", path="/memories/keep.md", file_text="keep\nthis\n")
    make(box, command="create", path="/memories/dir/sub/x.md", file_text="x")
    before = _tree(box)
    change = make(box, **args)
    assert _tree(box) != before
    assert reverse(box, change.payload())
    assert _tree(box) == before
    assert words(change.payload()).startswith(f"memory {args['command']} ")


def test_reversing_refuses_when_the_file_changed_since(box):
    change = make(box, command="create", path="/memories/a.md", file_text="a")
    assert change.payload()["after_sha256"] == sha("a")
    (box.root / "a.md").write_text("changed")
    with pytest.raises(MemoryRefused, match="changed since"):
        reverse(box, change.payload())
    assert (box.root / "a.md").read_text() == "changed"
    deleted = make(box, command="delete", path="/memories/a.md")
    (box.root / "a.md").write_text("new one")
    with pytest.raises(MemoryRefused, match="exists again"):
        reverse(box, deleted.payload())
    assert (box.root / "a.md").read_text() == "new one"


def test_limits_file_size_file_count_and_total_each_refused_clearly(tmp_path):
    box = Sandbox(tmp_path / "m", MemoryLimits(file_bytes=100, files=3, total_bytes=250))
    with pytest.raises(MemoryRefused, match="101 bytes, over the limit of 100 bytes a memory file"):
        plan(box, {"command": "create", "path": "/memories/big.md", "file_text": "x" * 101})
    for n in range(2):
        make(box, command="create", path=f"/memories/{n}.md", file_text="y" * 100)
    with pytest.raises(MemoryRefused, match="260 bytes, over its limit of 250 bytes"):
        plan(box, {"command": "create", "path": "/memories/2.md", "file_text": "z" * 60})
    make(box, command="create", path="/memories/2.md", file_text="z" * 10)
    with pytest.raises(MemoryRefused, match="4 files, over its limit of 3"):
        plan(box, {"command": "create", "path": "/memories/3.md", "file_text": "w"})
    with pytest.raises(MemoryRefused, match="over the limit of 100 bytes"):
        plan(box, {"command": "str_replace", "path": "/memories/0.md", "old_str": "y" * 100,
                   "new_str": "y" * 101})
    with pytest.raises(MemoryRefused, match="over its limit of 250 bytes"):
        plan(box, {"command": "insert", "path": "/memories/2.md", "insert_line": 0,
                   "insert_text": "q" * 50})
    assert sorted(p.name for p in box.root.iterdir()) == ["0.md", "1.md", "2.md"]
    assert (box.root / "2.md").read_text() == "z" * 10


def _tree(box):
    out = {}
    for path in sorted(box.root.rglob("*")):
        rel = str(path.relative_to(box.root))
        out[rel] = path.read_text() if path.is_file() else None
    return out
