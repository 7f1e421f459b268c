"""`ikigai export` (issue 23, item 11, the export parts), through the real command line:
multi-line command output stays lines in the Markdown, a forked agent's export says how
many messages it inherited (`--inherited` includes them, Markdown and JSON alike), and
`export --help` lists export's own options, each with its help."""

from __future__ import annotations

import json

from ikigai_tui.cli import build_parser


def _log(ikigai, db, agent: str | None = None) -> list[dict]:
    who = ["--agent", agent] if agent else []
    done = ikigai("--db", str(db), "log", *who, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _export(ikigai, db, *args: str) -> str:
    done = ikigai("--db", str(db), "export", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_multi_line_command_output_is_kept_as_its_lines(ikigai, tmp_path):
    db = tmp_path / "x.db"
    done = ikigai("--db", str(db), "run", input="hello\n/mark A\n/context\n/help mark\n")
    assert done.returncode == 0, done.stderr
    outputs = {e["payload"]["text"]: e["payload"]["output"]
               for e in _log(ikigai, db) if e["kind"] == "command"}
    lines = _export(ikigai, db).splitlines()
    for command in ("/context", "/help mark"):
        said = outputs[command]
        assert len(said) > 1, said
        start = lines.index(f"> `{command}`")
        # The output as it was shown, line for line (indents kept), in a code block.
        assert lines[start + 1: start + 4 + len(said)] == ["", "```text", *said, "```"]
    assert "> `/mark A` — Checkpoint 'A' created." in lines  # one line stays on one line


def test_a_fence_is_longer_than_any_backticks_in_the_output(ikigai, tmp_path):
    db = tmp_path / "b.db"
    done = ikigai("--db", str(db), "run", input="/pin use ```code``` here\n/pin two\n/pins\n")
    assert done.returncode == 0, done.stderr
    lines = _export(ikigai, db).splitlines()
    assert "> ````/pin use ```code``` here```` — Pinned #1." in lines  # inline code too
    start = lines.index("> `/pins`")
    assert lines[start + 2] == "````text" and lines[start + 5] == "````"


def test_a_childs_export_counts_what_it_inherited_and_includes_it_when_asked(ikigai, tmp_path):
    db = tmp_path / "f.db"
    script = "hello\n/mark R\nthe brief\n/fork --name kid look into this\n/fork R --name tail\n"
    done = ikigai("--db", str(db), "run", input=script)
    assert done.returncode == 0, done.stderr
    root_messages = [e for e in _log(ikigai, db) if e["kind"] in ("user", "assistant")]
    assert len(root_messages) == 4

    short = _export(ikigai, db, "--agent", "kid").splitlines()
    assert short[3].startswith("Forked from root") and short[3].endswith(
        ": 4 inherited messages (not shown; `--inherited` includes them).")
    assert "hello" not in short and "look into this" in short

    whole = _export(ikigai, db, "--agent", "kid", "--inherited").splitlines()
    assert whole[3].endswith(": 4 inherited messages, shown first.")
    headings = [line for line in whole if line.startswith("## ")]
    assert headings[:4] == [f"## {e['kind']} #{e['id']} (inherited)" for e in root_messages]
    assert whole.index("hello") < whole.index("the brief") < whole.index("look into this")
    assert "> The messages of kid" in " ".join(whole)

    tail = _export(ikigai, db, "--agent", "tail").splitlines()
    assert tail[3].endswith(": 2 inherited messages (not shown; `--inherited` includes them).")

    data = json.loads(_export(ikigai, db, "--agent", "kid", "--format", "json"))
    assert data["inherited"] == 4 and "inherited_messages" not in data
    data = json.loads(_export(ikigai, db, "--agent", "kid", "--format", "json", "--inherited"))
    assert [(m["id"], m["kind"], m["payload"]["content"], m["in_context"])
            for m in data["inherited_messages"]] == [
        (e["id"], e["kind"], e["payload"]["content"], True) for e in root_messages]
    assert json.loads(_export(ikigai, db, "--format", "json"))["inherited"] == 0
    root_md = _export(ikigai, db).splitlines()
    assert not any(line.startswith("Forked from") for line in root_md)


def test_export_help_lists_its_own_options_each_with_help(ikigai):
    done = ikigai("export", "--help")
    assert done.returncode == 0, done.stderr
    options = done.stdout.split("options:")[1].split("examples:")[0]
    listed = {word.rstrip(",") for line in options.splitlines()
              if line.startswith("  -") for word in line.split() if word.startswith("-")}
    assert listed == {"-h", "--help", "--db", "--config", "--agent", "--format",
                      "--inherited", "--output", "-o"}
    parser = build_parser()
    export = next(a for a in parser._actions if a.dest == "command").choices["export"]
    for action in export._actions:
        assert action.help and action.help.strip(), action.option_strings
