"""The one command parser (SPEC §5): shell-like splitting, id lists, the registry."""

from __future__ import annotations

import pytest

from ikigai_tui.core.commands.registry import REGISTRY
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import ArgReader, check_mark_name, parse_id_list
from ikigai_tui.core.tools import slash_tool

# SPEC §5, column "LLM may call": yes.
SPEC_LLM = {"clear", "mark", "rewind", "marks", "context", "recall", "fork", "send",
            "check-mail", "kill", "agents",
            "wait"}  # issue 27: the parent's LLM forks children and waits for them
# SPEC §5: "no" (and `via filter_context`, which is not the slash tool).
SPEC_HUMAN_ONLY = {"undo", "compact", "model", "system", "pin", "unpin", "pins", "help",
                   "exit", "forget", "remember"}


def tokens(text: str) -> list[str]:
    reader = ArgReader(text)
    out = []
    while (token := reader.take()) is not None:
        out.append(token)
    return out


# -- shell-like splitting -------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("a b c", ["a", "b", "c"]),
    ("  a \t b  ", ["a", "b"]),
    ('"two words" next', ["two words", "next"]),
    ("'two words' next", ["two words", "next"]),
    ('a"b c"d', ["ab cd"]),
    (r'"say \"hi\""', ['say "hi"']),
    (r"one\ token", ["one token"]),
    ("''", [""]),
    ("", []),
    ("   ", []),
])
def test_shell_like_splitting(text, expected):
    assert tokens(text) == expected


@pytest.mark.parametrize("text", ["'open", '"open', 'a "b c', "x 'y"])
def test_unbalanced_quote_is_a_usage_error(text):
    with pytest.raises(UsageError, match="unbalanced quote"):
        tokens(text)


def test_peek_does_not_consume():
    reader = ArgReader('"a b" c')
    assert reader.peek() == "a b"
    assert reader.peek() == "a b"
    assert reader.take() == "a b"
    assert reader.take() == "c"
    assert reader.peek() is None


def test_free_text_rest_keeps_apostrophes():
    reader = ArgReader("kid don't stop")
    assert reader.take() == "kid"
    assert reader.rest() == "don't stop"
    assert reader.take() is None


@pytest.mark.parametrize("text, expected", [
    ('"hello world"', "hello world"),          # one quoted token is unquoted
    ("'it is'", "it is"),
    ('"a" and "b"', '"a" and "b"'),            # anything else is raw
    ("it's Bob's", "it's Bob's"),
    ("  padded text  ", "padded text"),
    ("'unbalanced", "'unbalanced"),
    ("", ""),
])
def test_rest_is_raw_free_text(text, expected):
    assert ArgReader(text).rest() == expected


def test_done_rejects_extra_argument():
    reader = ArgReader("one two")
    assert reader.take() == "one"
    with pytest.raises(UsageError, match="unexpected argument 'two'"):
        reader.done()


def test_require_names_what_is_missing():
    with pytest.raises(UsageError, match="missing AGENT"):
        ArgReader("   ").require("AGENT")
    with pytest.raises(UsageError, match="missing N"):
        ArgReader("''").require("N")


async def test_send_with_apostrophe_through_the_session(session):
    root = session.tree.root
    res = await session.command(root.id, "/fork --name kid")
    kid = res.data
    out = await session.command(root.id, "/send kid don't stop")
    assert out.lines == [f"Mail sent to {session.tree.label(kid)}."]
    r = await session.replayer(kid)
    assert [m["text"] for m in r.unread.values()] == ["don't stop"]


@pytest.mark.parametrize("args, prompt", [
    ("go on, don't stop", "go on, don't stop"),
    ("don't stop", "don't stop"),
    ("--name k1 don't stop", "don't stop"),
    ("M it's yours now", "it's yours now"),
    ("M --name k2 it's yours", "it's yours"),
])
async def test_fork_prompt_is_raw_free_text(session, args, prompt):
    root = session.tree.root.id
    await session.command(root, "/mark M")
    res = await session.command(root, f"/fork {args}")
    messages = await session.messages(res.data)
    assert [p["content"] for _, kind, p in messages if kind == "user"] == [prompt]
    await session.wait_idle()


async def test_quotes_group_words_in_a_real_command(session):
    root = session.tree.root.id
    out = await session.command(root, "/mark 'Q1'")
    assert out.lines == ["Checkpoint 'Q1' created."]
    r = await session.replayer(root)
    assert [m.name for m in r.valid_marks()] == ["Q1"]
    with pytest.raises(CommandError, match="not a valid mark name"):
        await session.command(root, '/mark "two words"')
    out = await session.command(root, '/system "Be brief."')
    assert out.lines == ["System prompt set."]
    assert (await session.replayer(root)).system == "Be brief."


# -- id lists -------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("3", [3]),
    ("3,5-9", [3, 5, 6, 7, 8, 9]),
    ("1-1", [1]),
    ("3, 5 - 6", [3, 5, 6]),
    ("4,2,4,1-3", [4, 2, 1, 3]),  # duplicates once, first order kept
    ("10-12,1", [10, 11, 12, 1]),
])
def test_parse_id_list(text, expected):
    assert parse_id_list(text) == expected


@pytest.mark.parametrize("text", [
    "", "x", "3,", ",3", "3-", "-3", "3--5", "3;4", "1.5", "3,,4", "a-b", "1-2-3", "+3",
])
def test_parse_id_list_rejects_bad_lists(text):
    with pytest.raises(UsageError, match="not a list of message ids"):
        parse_id_list(text)


@pytest.mark.parametrize("text", ["9-5", "1,7-6"])
def test_parse_id_list_rejects_backwards_ranges(text):
    with pytest.raises(UsageError, match="runs backwards"):
        parse_id_list(text)


def test_parse_id_list_limit():
    assert parse_id_list("1-5", limit=5) == [1, 2, 3, 4, 5]
    with pytest.raises(UsageError, match="too many ids"):
        parse_id_list("1-6", limit=5)
    with pytest.raises(UsageError, match="too many ids"):
        parse_id_list("1-999999999999")


def test_id_list_errors_are_command_errors():
    assert issubclass(UsageError, CommandError)


# -- mark names -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["A", "r1", "_x", "step.2", "a:b-c", "x" * 64])
def test_valid_mark_names(name):
    assert check_mark_name(name) == name


@pytest.mark.parametrize("name", ["-x", "#3", "a b", "", "x" * 65, "é", ".a"])
def test_invalid_mark_names(name):
    with pytest.raises(UsageError, match="not a valid mark name"):
        check_mark_name(name)


# -- registry -------------------------------------------------------------------------


def test_parse_finds_command_and_raw_args():
    parsed = REGISTRY.parse("  /fork   R --name kid  it's yours  ")
    assert parsed.spec.name == "fork"
    assert parsed.args == "R --name kid  it's yours"
    assert parsed.text == "/fork   R --name kid  it's yours"
    assert REGISTRY.parse("/check-mail").spec.name == "check-mail"


@pytest.mark.parametrize("text, shown", [
    ("/nosuch", "/nosuch"),
    ("/nosuch with args", "/nosuch"),
    ("/", "/"),
    ("/Mark A", "/Mark"),
])
def test_unknown_command_message(text, shown):
    with pytest.raises(CommandError) as info:
        REGISTRY.parse(text)
    message = str(info.value)
    assert message == f"unknown command '{shown}'. Type /help for the list."
    assert "\n" not in message


def test_text_without_slash_is_not_a_command():
    with pytest.raises(CommandError, match="starts with '/'"):
        REGISTRY.parse("mark A")


def test_every_spec_has_usage_starting_with_its_name():
    for spec in REGISTRY:
        assert spec.usage.split()[0] == f"/{spec.name}"
        assert spec.summary


def test_llm_names_are_exactly_the_spec_llm_set():
    names = REGISTRY.llm_names()
    registered = {s.name for s in REGISTRY}
    assert len(names) == len(set(names))
    assert set(names) == SPEC_LLM & registered
    # The ones this build must have, at least.
    assert {"clear", "mark", "rewind", "marks", "context", "fork", "send", "check-mail",
            "kill", "agents"} <= set(names)


def test_llm_names_exclude_human_only():
    names = set(REGISTRY.llm_names())
    assert not names & SPEC_HUMAN_ONLY
    for name in ("undo", "model", "system", "pin", "unpin", "pins", "help", "exit",
                 "forget", "remember"):
        assert REGISTRY.get(name) is not None, name
        assert name not in names


def test_slash_tool_enum_is_llm_names():
    tool = slash_tool()["function"]
    assert tool["name"] == "slash"
    command = tool["parameters"]["properties"]["command"]
    assert command["enum"] == REGISTRY.llm_names()
    assert tool["parameters"]["properties"]["args"]["type"] == "string"


def test_deferred_commands_are_the_context_changing_ones():
    deferred = {s.name for s in REGISTRY if s.deferred}
    assert {"clear", "rewind"} <= deferred
    assert "mark" not in deferred
