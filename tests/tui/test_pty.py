"""The real program in a pseudo-terminal: `python -m ikigai_tui --db X` at 120x40, a
message typed and answered by the offline model, then `/exit` ends it with status 0."""

from __future__ import annotations

import asyncio
import re
import sys

import pytest

from .conftest import id_counter, open_prep, root_id
from .pty_harness import launch, strip_ansi  # noqa: F401  (launch: a fixture)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")


@pytest.fixture
def terminal(launch, tmp_path):
    return launch(tmp_path / "pty.db")


def test_message_and_exit_in_a_real_terminal(terminal):
    terminal.wait_for("offline model, no network", "Sent:", "Send", timeout=10)
    terminal.type("hello from the pty")
    terminal.wait_for("hello from the pty", timeout=5)
    terminal.type("\r")
    terminal.wait_for('You said: "hello from the pty"', timeout=5)

    terminal.type("/exit")
    terminal.wait_for("/exit", timeout=5)
    terminal.type("\r")
    status = terminal.wait_exit(timeout=5)
    assert status == 0, f"exit status {status}; screen:\n{terminal.text()[-3000:]}"
    shown = terminal.text()
    assert "Offline model here." in shown
    assert "Traceback" not in shown


def test_a_file_that_is_not_a_database_gets_one_line_and_is_left_alone(launch, tmp_path):
    """The log is opened before the full screen starts: the error is one line on the
    ordinary terminal, the status is 1, and the file is not touched."""
    bad = tmp_path / "notes.db"
    original = b"these are my notes, not a database\n" * 20
    bad.write_bytes(original)
    term = launch(bad)
    status = term.wait_exit(timeout=10)
    shown = term.text()
    assert status == 1, f"exit status {status}; screen:\n{shown[-3000:]}"
    lines = [line for line in shown.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: ") and "is not an ikigai database" in lines[0], lines
    assert "Traceback" not in shown
    assert b"\x1b[?1049h" not in term.raw  # never switched to the full screen
    assert bad.read_bytes() == original


# An OSC 8 hyperlink: ESC ] 8 ; params ; URL ST  text  ESC ] 8 ; ; ST
OSC8 = re.compile(rb"\x1b\]8;[^;\x07\x1b]*;([^\x07\x1b]*)(?:\x1b\\|\x07)(.*?)\x1b\]8;;(?:\x1b\\|\x07)",
                  re.DOTALL)


def test_hyperlinks_sent_to_the_terminal_read_as_their_targets(launch, tmp_path):
    """A reply's `[https://bank.example/login](http://evil.example/phish)`: the screen
    shows the real target, and every OSC 8 link written reads as (part of) its target."""
    db = tmp_path / "links.db"

    async def prepare() -> None:
        async with open_prep(db, id_counter()) as session:
            root = root_id(session)
            await session.store.append(root, "user", {"content": "Where do I log in?"})
            await session.store.append(root, "assistant", {
                "content": "At [https://bank.example/login](http://evil.example/phish), "
                           "or see <https://help.example/login>."})

    asyncio.run(prepare())
    term = launch(db)
    term.wait_for("(http://evil.example/phish)", "https://help.example/login", timeout=10)
    links = [(url.decode(), strip_ansi(text)) for url, text in OSC8.findall(bytes(term.raw))]
    assert links, "no hyperlink written at all"
    for url, text in links:
        assert text and text in url, (url, text)
    assert {url for url, _ in links} == {"http://evil.example/phish", "https://help.example/login"}
    term.type("/exit\r")
    assert term.wait_exit(timeout=5) == 0
