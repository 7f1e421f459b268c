"""The file tools (issue 25 item 1) over real files in tmp_path: each tool's happy path
and caps, binary refused, and the escapes refused: `..`, absolute paths elsewhere, a
symlink that leads out, and a symlink swapped in between the check and the open."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ikigai_tui.core.tools import ToolContext, registry
from ikigai_tui.core.tools import files, workspace
from ikigai_tui.core.tools.file_writes import EditFileTool, WriteFileTool
from ikigai_tui.core.tools.files import ListFilesTool, ReadFileTool, SearchFilesTool


class Host:
    def __init__(self, root: Path) -> None:
        self.root = root

    def workspace(self, agent_id: str) -> Path:
        return self.root


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("the secret\n")
    return folder


async def run(tool, root: Path, **arguments):
    return await tool().execute(ToolContext(Host(root), "a"), arguments)


async def test_read_file_numbers_lines_and_takes_a_range(ws):
    (ws / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    whole = await run(ReadFileTool, ws, path="a.txt")
    assert not whole.is_error
    assert whole.text == "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour"
    part = await run(ReadFileTool, ws, path="a.txt", start_line=2, end_line=3)
    assert part.text.splitlines() == ["     2\ttwo", "     3\tthree"]
    past = await run(ReadFileTool, ws, path="a.txt", start_line=9)
    assert past.is_error and "has 4 lines" in past.text


async def test_read_file_caps_lines_and_says_where_to_go_on(ws):
    (ws / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    first = await run(ReadFileTool, ws, path="long.txt")
    lines = first.text.splitlines()
    assert len(lines) == files.READ_LINES + 1
    assert lines[-2] == f"{files.READ_LINES:6}\tline {files.READ_LINES}"
    assert lines[-1] == (f"[truncated: lines 1-{files.READ_LINES} of 5,000; ask for "
                         f"start_line={files.READ_LINES + 1} to read on]")
    rest = await run(ReadFileTool, ws, path="long.txt", start_line=4001)
    assert rest.text.splitlines()[-1] == "  5000\tline 5000"  # the end: no truncation line


async def test_read_file_caps_bytes_and_long_lines(ws):
    (ws / "wide.txt").write_text(("x" * 1_900 + "\n") * 400)  # ~760 KB in 400 lines
    out = (await run(ReadFileTool, ws, path="wide.txt")).text
    assert len(out.encode()) <= files.READ_BYTES + 200
    assert out.splitlines()[-1].startswith("[truncated: lines 1-")
    (ws / "one.txt").write_text("y" * 10_000)
    cut = (await run(ReadFileTool, ws, path="one.txt")).text
    assert cut.endswith("[line cut: 10,000 characters]") and len(cut) < 2_100


@pytest.mark.parametrize("data", [b"text\x00more", b"\xff\xfe caf\xe9"])
async def test_binary_files_are_refused_and_skipped(ws, data):
    (ws / "b.bin").write_bytes(data)
    result = await run(ReadFileTool, ws, path="b.bin")
    assert result.is_error and ("binary" in result.text or "not UTF-8" in result.text)
    assert (await run(SearchFilesTool, ws, pattern="more|caf")).text.startswith("No matches")
    edit = await run(EditFileTool, ws, path="b.bin", old_text="text", new_text="t")
    assert edit.is_error and (ws / "b.bin").read_bytes() == data


@pytest.mark.parametrize("tool,extra", [
    (ReadFileTool, {}), (WriteFileTool, {"content": "x"}),
    (EditFileTool, {"old_text": "the", "new_text": "a"}),
])
@pytest.mark.parametrize("path", ["../outside/secret.txt", "sub/../../outside/secret.txt",
                                  "{outside}/secret.txt"])
async def test_escapes_in_words_are_refused(ws, outside, tool, extra, path):
    (ws / "sub").mkdir()
    result = await run(tool, ws, path=path.format(outside=outside), **extra)
    assert result.is_error
    assert "'..'" in result.text or "outside the workspace" in result.text
    assert (outside / "secret.txt").read_text() == "the secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_an_absolute_path_inside_the_workspace_is_used(ws):
    (ws / "a.txt").write_text("inside\n")
    assert (await run(ReadFileTool, ws, path=str(ws / "a.txt"))).text == "     1\tinside"


@pytest.mark.parametrize("tool,extra", [
    (ReadFileTool, {}), (WriteFileTool, {"content": "x"}),
    (EditFileTool, {"old_text": "the", "new_text": "a"}),
])
async def test_symlinks_that_lead_out_are_refused(ws, outside, tool, extra):
    os.symlink(outside, ws / "dir_link")  # a folder link, absolute
    os.symlink("../outside/secret.txt", ws / "file_link")  # a file link, relative
    for path in ("dir_link/secret.txt", "file_link"):
        result = await run(tool, ws, path=path, **extra)
        assert result.is_error and "leads out of the workspace" in result.text, result.text
    assert (outside / "secret.txt").read_text() == "the secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_symlinks_inside_the_workspace_are_followed(ws):
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = 1\n")
    os.symlink("src", ws / "alias")
    os.symlink(ws / "src" / "a.py", ws / "a_link.py")
    assert (await run(ReadFileTool, ws, path="alias/a.py")).text == "     1\tx = 1"
    assert (await run(ReadFileTool, ws, path="a_link.py")).text == "     1\tx = 1"
    await run(EditFileTool, ws, path="a_link.py", old_text="1", new_text="2")
    assert (ws / "src" / "a.py").read_text() == "x = 2\n" and (ws / "a_link.py").is_symlink()


async def test_a_folder_swapped_for_a_symlink_before_the_open_is_refused(ws, outside, monkeypatch):
    """The check saw a folder; before the open it became a link out: the O_NOFOLLOW
    open fails, the link is resolved in words, and the path is refused."""
    (ws / "sub").mkdir()
    (ws / "sub" / "secret.txt").write_text("harmless\n")
    real = workspace.open_dir_nofollow
    swapped = []

    def swap_then_open(name, dir_fd):
        if name == "sub" and not swapped:
            os.rename(ws / "sub", ws / "old_sub")
            os.symlink(outside, ws / "sub")
            swapped.append(name)
        return real(name, dir_fd)

    monkeypatch.setattr(workspace, "open_dir_nofollow", swap_then_open)
    result = await run(ReadFileTool, ws, path="sub/secret.txt")
    assert swapped and result.is_error and "leads out of the workspace" in result.text
    assert "the secret" not in result.text


async def test_a_file_swapped_for_a_symlink_before_the_open_is_refused(ws, outside, monkeypatch):
    (ws / "a.txt").write_text("harmless\n")
    real_open = os.open
    swapped = []

    def swap_then_open(path, flags, *args, **kwargs):
        if path == "a.txt" and kwargs.get("dir_fd") is not None and not swapped:
            os.unlink(ws / "a.txt")
            os.symlink(outside / "secret.txt", ws / "a.txt")
            swapped.append(path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(workspace.os, "open", swap_then_open)
    result = await run(ReadFileTool, ws, path="a.txt")
    monkeypatch.undo()
    assert swapped and result.is_error and "leads out of the workspace" in result.text
    assert "the secret" not in result.text


async def test_list_files_is_sorted_respects_gitignore_and_caps(ws, monkeypatch):
    (ws / ".gitignore").write_text("build/\n*.log\n")
    for rel in ("b.txt", "a.txt", "src/z.py", "src/a.py", "build/out.txt", "x.log",
                ".git/HEAD"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x\n")
    listed = (await run(ListFilesTool, ws)).text.splitlines()
    assert listed == [".gitignore", "a.txt", "b.txt", "src/a.py", "src/z.py"]
    assert (await run(ListFilesTool, ws, glob="*.py")).text.splitlines() == ["src/a.py", "src/z.py"]
    assert (await run(ListFilesTool, ws, glob="src/a*")).text == "src/a.py"
    monkeypatch.setattr(files, "LIST_ENTRIES", 2)
    capped = (await run(ListFilesTool, ws)).text.splitlines()
    assert capped == [".gitignore", "a.txt", "[3 more; narrow the glob]"]
    refused = await run(ListFilesTool, ws, glob="../*")
    assert refused.is_error and "'..'" in refused.text


async def test_list_files_does_not_follow_links(ws, outside):
    os.symlink(outside, ws / "out")
    (ws / "a.txt").write_text("a\n")
    assert (await run(ListFilesTool, ws)).text == "a.txt"


async def test_search_files_prints_path_line_text_and_caps(ws, monkeypatch):
    (ws / ".gitignore").write_text("ignored.py\n")
    (ws / "a.py").write_text("import os\n\ndef f():\n    return os.sep\n")
    (ws / "b.py").write_text("nothing here\n")
    (ws / "ignored.py").write_text("import os\n")
    (ws / "c.txt").write_text("import os\n" + "z" * 500 + " os\n")
    out = (await run(SearchFilesTool, ws, pattern=r"\bos\b", glob="*.py")).text
    assert out.splitlines() == ["a.py:1:import os", "a.py:4:    return os.sep"]
    anchored = (await run(SearchFilesTool, ws, pattern="^import")).text.splitlines()
    assert anchored == ["a.py:1:import os", "c.txt:1:import os"]
    wide = (await run(SearchFilesTool, ws, pattern="z+ os")).text
    assert wide == "c.txt:2:" + "z" * files.SEARCH_LINE_CHARS + " ..."
    assert (await run(SearchFilesTool, ws, pattern="IMPORT", ignore_case=True)).text.count(":") == 4
    monkeypatch.setattr(files, "SEARCH_MATCHES", 1)
    capped = (await run(SearchFilesTool, ws, pattern="os")).text.splitlines()
    assert capped == ["a.py:1:import os", "[stopped at 1 matches; narrow the pattern or the glob]"]
    bad = await run(SearchFilesTool, ws, pattern="(")
    assert bad.is_error and "not a valid regular expression" in bad.text


async def test_write_file_creates_folders_and_replaces_keeping_the_mode(ws):
    result = await run(WriteFileTool, ws, path="new/deep/f.txt", content="one\ntwo\n")
    assert result.text == "Created new/deep/f.txt (8 bytes, 2 lines)."
    assert (ws / "new" / "deep" / "f.txt").read_text() == "one\ntwo\n"
    (ws / "run.sh").write_text("old\n")
    os.chmod(ws / "run.sh", 0o750)
    again = await run(WriteFileTool, ws, path="run.sh", content="new\n")
    assert again.text.startswith("Wrote run.sh") and (ws / "run.sh").read_text() == "new\n"
    assert (ws / "run.sh").stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in ws.iterdir()) == ["new", "run.sh"]  # no temporary left


async def test_edit_file_replaces_exactly_one_occurrence(ws):
    (ws / "a.py").write_text("a = 1\nb = 1\nc = 2\n")
    done = await run(EditFileTool, ws, path="a.py", old_text="c = 2", new_text="c = 3")
    assert not done.is_error and done.text == "Edited a.py: 1 replacement at line 3."
    assert (ws / "a.py").read_text() == "a = 1\nb = 1\nc = 3\n"
    twice = await run(EditFileTool, ws, path="a.py", old_text="= 1", new_text="= 9")
    assert twice.is_error and "found 2 times" in twice.text
    none = await run(EditFileTool, ws, path="a.py", old_text="d = 4", new_text="d = 5")
    assert none.is_error and "was not found" in none.text
    missing = await run(EditFileTool, ws, path="nope.py", old_text="x", new_text="y")
    assert missing.is_error and "does not exist" in missing.text
    assert (ws / "a.py").read_text() == "a = 1\nb = 1\nc = 3\n"


def test_describe_shows_the_diff_that_will_be_written(ws):
    (ws / "a.py").write_text("a = 1\nb = 2\n")
    context = ToolContext(Host(ws), "a")
    edit = EditFileTool().describe({"path": "a.py", "old_text": "b = 2", "new_text": "b = 3"},
                                   context)
    assert edit.splitlines() == ["--- a/a.py", "+++ b/a.py", "@@ -1,2 +1,2 @@", " a = 1",
                                 "-b = 2", "+b = 3"]
    write = WriteFileTool().describe({"path": "n.txt", "content": "hi\n"}, context)
    assert write.splitlines() == ["Write n.txt: 3 bytes (a new file)", "--- a/n.txt",
                                  "+++ b/n.txt", "@@ -0,0 +1 @@", "+hi"]
    bad = EditFileTool().describe({"path": "a.py", "old_text": "zz", "new_text": "y"}, context)
    assert bad.startswith("edit_file: old_text was not found") and "\n" not in bad
    assert (ws / "a.py").read_text() == "a = 1\nb = 2\n" and not (ws / "n.txt").exists()


def test_the_tools_are_registered_with_their_access():
    access = {t.name: t.access for t in registry() if hasattr(t, "describe")}
    assert {k: access[k] for k in ("read_file", "list_files", "search_files", "write_file",
                                   "edit_file")} == {
        "read_file": "read", "list_files": "read", "search_files": "read",
        "write_file": "write", "edit_file": "write"}
