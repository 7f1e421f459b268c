"""Acceptance gaps against SPEC (found in the QA review, each a test that passes once fixed).

Marked xfail(strict=True) where the fix belongs to a file another engineer owns or is a
feature not built yet: when it lands, the XPASS fails and the marker comes off.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


from tests.integration.acceptance_helpers import Cli


def test_recall_finds_forgotten_and_rewound_messages(tmp_path):
    cli = Cli(tmp_path / "r.db")
    cli.ok("the zebra crossing story", "/mark A", "a note about quokkas")
    ids = [m["id"] for m in cli.context()["messages"]]
    cli.ok(f"/forget --ids {ids[0]}", "/rewind A")
    done = cli.run("/recall zebra", "/recall quokkas")
    assert done.returncode == 0, done.stderr
    assert "zebra crossing" in done.stdout and "quokkas" in done.stdout
    assert f"{ids[0]}" in done.stdout


def test_slash_tool_offers_recall(tmp_path):
    from tests.fakes.server import FakeProvider

    with FakeProvider() as fake:
        Cli(tmp_path / "s.db", fake).ok("hello")
        tools = {t["function"]["name"]: t["function"] for t in fake.requests[0].body["tools"]}
    enum = tools["slash"]["parameters"]["properties"]["command"]["enum"]
    assert "recall" in enum


def test_offline_forget_by_criteria_keeps_other_topics(tmp_path):
    # Every offline reply shares its boilerplate: the local matcher projects it out.
    cli = Cli(tmp_path / "f.db")
    cli.ok("hello", "let us talk about the database schema design",
           "tell me about the weather in paris", "more about database tables and indexes")
    cli.ok("/forget database")
    left = [m["content"] for m in cli.context()["messages"] if m["role"] == "user"]
    assert left == ["hello", "tell me about the weather in paris"]


def test_offline_forget_by_meaning_when_every_reply_quotes_the_first_message(tmp_path):
    # The offline model quotes the first message in every reply: here it is on a topic,
    # so its words are in every exchange; a criterion finds its topic by meaning too.
    cli = Cli(tmp_path / "m.db")
    cli.ok("let us talk about the database schema design", "tell me about the weather in paris",
           "more about database tables and indexes", "how do I bake sourdough bread",
           "what about rain tomorrow in london")

    def forgets(criteria: str) -> list[str]:
        done = cli.run(f"/forget --dry-run {criteria}")
        assert done.returncode == 0, done.stderr
        users = {m["id"]: m["content"] for m in cli.context()["messages"] if m["role"] == "user"}
        return [text for i, text in users.items() if f"#{i} " in done.stdout]

    assert forgets("database") == ["let us talk about the database schema design",
                                   "more about database tables and indexes"]
    assert forgets("the weather") == ["tell me about the weather in paris",
                                      "what about rain tomorrow in london"]
    assert forgets("baking") == ["how do I bake sourdough bread"]
    assert forgets("football") == []


def test_offline_forget_takes_no_unrelated_exchange_between_two_on_the_topic(tmp_path):
    cli = Cli(tmp_path / "p.db")
    cli.ok("hi there", "my cat is called Tom and he likes fish", "what is the capital of France",
           "my dog barks at night, how do I stop it", "explain quicksort in python",
           "the cat scratched the sofa again")
    cli.ok("/forget cats")
    left = [m["content"] for m in cli.context()["messages"] if m["role"] == "user"]
    assert left == ["hi there", "what is the capital of France",
                    "my dog barks at night, how do I stop it", "explain quicksort in python"]


def test_sigint_during_a_scripted_run_exits_130(tmp_path):
    db = tmp_path / "i.db"
    script = tmp_path / "s.txt"
    script.write_text("tell me a long story\nsecond message\n")
    env = dict(os.environ, IKIGAI_OFFLINE_DELAY="0.2")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ikigai_tui", "--db", str(db), "run", "--script", str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.read(8)                   # the reply is streaming
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=20)
    finally:
        proc.kill()
        proc.communicate()
    assert code == 130
    log = json.loads(subprocess.run(
        [sys.executable, "-m", "ikigai_tui", "--db", str(db), "log", "--json"],
        capture_output=True, text=True).stdout)
    assert [e["payload"]["content"] for e in log if e["kind"] == "user"] == ["tell me a long story"]
    assert [e["payload"].get("interrupted") for e in log if e["kind"] == "assistant"] == [True]


def test_window_prunes_for_an_estimated_model_whatever_usage_it_reports(tmp_path):
    from tests.fakes.server import FakeProvider, Reply

    env = {"ANTHROPIC_API_KEY": "test-key", "IKIGAI_SLIDING_CONTEXT_TOKENS": "600"}
    with FakeProvider() as fake:
        cli = Cli(tmp_path / "a.db", fake, env=env)
        where = ["--model", "anthropic/claude-sonnet-4-5", "--api-base", fake.base_url]
        fake.queue(*[Reply(text=" ".join([w] * 60)) for w in ("alpha", "beta", "gamma", "delta")])
        lines = ["one " + "x " * 50, "two", "three", "four"]
        done = cli(*where, "run", input="".join(f"{line}\n" for line in lines))
        assert done.returncode == 0, done.stderr
    ctx = cli.context()
    assert ctx["tokens"] > 300                  # system prompt and tools alone are ~400
    assert ctx["pruned_turns"] >= 1 and not ctx["messages"][0]["in_window"]


def test_a_run_whose_window_prunes_writes_nothing_to_stderr_with_auto_compaction_off(tmp_path):
    cli = Cli(tmp_path / "w.db")
    done = cli.run(*[f"message {i} " + "word " * 40 for i in range(8)],
                   env={"IKIGAI_SLIDING_CONTEXT_TOKENS": "1500"})
    assert done.returncode == 0
    assert cli.context(env={"IKIGAI_SLIDING_CONTEXT_TOKENS": "1500"})["pruned_turns"] >= 1
    assert done.stderr == ""
