"""Context changes the LLM asks for are reviewed (issue 28 item 1): through the loopback
fake provider and real litellm, an LLM `slash clear` and `filter_context apply` under
llm_context_changes = "ask" are refused headless without --yes (the context unchanged,
one stderr line), applied with it; "allow" applies, "deny" refuses without asking; the
tool result in the next request says which; an untick applies exactly the ticked ids;
an apply's result names its call, which the filter event records (item 2); the LLM's
check-mail is not a change to review (item 3)."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.core.commands.proposals import REFUSE, Verdict
from tests.fakes.server import FakeProvider, Reply

KEY_ENV = {"OPENAI_API_KEY": "test-key"}


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def slash(command: str, args: str = "") -> Reply:
    return Reply(tool_calls=[("slash", {"command": command, "args": args})])


def apply(ids: list[int], mode: str = "forget") -> Reply:
    return Reply(tool_calls=[("filter_context", {"action": "apply", "mode": mode,
                                                 "message_ids": ids})])


def run(ikigai, tmp_path, fake, script: str, *extra: str, config: str = ""):
    (tmp_path / "script.txt").write_text(script)
    (tmp_path / "config.toml").write_text(config)
    return ikigai("--db", str(tmp_path / "c.db"), "--model", "openai/x", "--api-base",
                  fake.openai_base, "--config", str(tmp_path / "config.toml"), "run",
                  "--script", str(tmp_path / "script.txt"), *extra, env=KEY_ENV)


def context_ids(ikigai, tmp_path) -> list[int]:
    out = ikigai("--db", str(tmp_path / "c.db"), "context", "--json")
    assert out.returncode == 0, out.stderr
    return [m["id"] for m in json.loads(out.stdout)["messages"]]


def last_tool_result(fake) -> str:
    """The tool result the LLM read: in the body of the request after the call."""
    messages = fake.requests[-1].body["messages"]
    return next(m["content"] for m in reversed(messages) if m["role"] == "tool")


def two_exchanges(fake) -> None:
    fake.queue(Reply(text="Hi."), Reply(text="Sunny."))


SCRIPT = "hello\nweather?\nclean up\n"


def test_headless_clear_is_refused_without_yes(ikigai, tmp_path, fake):
    two_exchanges(fake)
    fake.queue(slash("clear"), Reply(text="I could not clear it."))
    done = run(ikigai, tmp_path, fake, SCRIPT)
    assert done.returncode == 0, done.stderr
    refusals = [line for line in done.stderr.splitlines() if line.startswith("Refused:")]
    assert len(refusals) == 1 and "asked to clear the context" in refusals[0]
    assert "--yes" in refusals[0]
    result = last_tool_result(fake)
    assert json.loads(result.splitlines()[-1])["result"] == "refused"
    # Nothing left the context: the two exchanges, then this whole turn.
    ids = context_ids(ikigai, tmp_path)
    assert len(ids) == 4 + 4
    log = json.loads(ikigai("--db", str(tmp_path / "c.db"), "log", "--json").stdout)
    assert not [e for e in log if e["kind"] == "clear"]
    (command,) = [e for e in log if e["kind"] == "command"]
    assert command["payload"]["refused"] == "nobody was there to review it"
    words = ikigai("--db", str(tmp_path / "c.db"), "log").stdout
    assert "/clear (the LLM's; refused: nobody was there to review it)" in words


def test_headless_clear_with_yes_applies_as_proposed(ikigai, tmp_path, fake):
    two_exchanges(fake)
    fake.queue(slash("clear"), Reply(text="Cleared."))
    done = run(ikigai, tmp_path, fake, SCRIPT, "--yes")
    assert done.returncode == 0, done.stderr
    assert "the LLM's change of its context accepted by --yes" in done.stderr
    reply = json.loads(last_tool_result(fake).splitlines()[-1])
    assert reply["result"] == "applied" and len(reply["ids_leaving"]) == 6
    assert reply["context_after"]["messages"] == 0
    assert context_ids(ikigai, tmp_path) == []


def test_headless_filter_apply_refused_then_applied_with_yes(ikigai, tmp_path, fake):
    two_exchanges(fake)
    fake.queue(apply([1, 2]), Reply(text="Refused."))
    done = run(ikigai, tmp_path, fake, SCRIPT)
    assert done.returncode == 0, done.stderr
    assert json.loads(last_tool_result(fake))["result"] == "refused"
    before = context_ids(ikigai, tmp_path)
    assert before[:2] == [1, 2] and len(before) == 8
    fake.queue(apply([1, 2]), Reply(text="Done."))
    (tmp_path / "more.txt").write_text("forget the greeting\n")
    done = ikigai("--db", str(tmp_path / "c.db"), "--model", "openai/x", "--api-base",
                  fake.openai_base, "--config", str(tmp_path / "config.toml"), "run",
                  "--script", str(tmp_path / "more.txt"), "--yes", env=KEY_ENV)
    assert done.returncode == 0, done.stderr
    reply = json.loads(last_tool_result(fake))
    assert reply["result"] == "applied" and reply["ids_leaving"][:2] == [1, 2]
    # The greeting left, and with it the planning (both turns holding a filter_context
    # call); the weather exchange stays.
    assert context_ids(ikigai, tmp_path) == before[2:4]


@pytest.mark.parametrize("setting, applied", [("allow", True), ("deny", False)])
def test_allow_applies_and_deny_refuses_without_asking(ikigai, tmp_path, fake, setting, applied):
    two_exchanges(fake)
    fake.queue(slash("clear"), Reply(text="ok"))
    done = run(ikigai, tmp_path, fake, SCRIPT, config=f'llm_context_changes = "{setting}"\n')
    assert done.returncode == 0, done.stderr
    assert "Refused:" not in done.stderr  # nobody was asked
    reply = json.loads(last_tool_result(fake).splitlines()[-1])
    assert reply["result"] == ("applied" if applied else "refused")
    if not applied:
        assert reply["refused_by"] == 'llm_context_changes = "deny"'
    assert (context_ids(ikigai, tmp_path) == []) is applied


# -- a reviewer that unticks: in process, over the same fake ---------------------------

openai = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


class Reviewer:
    def __init__(self, answer) -> None:
        self.answer = answer
        self.changes: list = []

    async def __call__(self, change):
        self.changes.append(change)
        return self.answer(change.proposal)


@openai
async def test_an_untick_turns_the_clear_into_a_forget_of_the_ticked(make, fake, fmt):
    h = await make(settings_of_session={"llm_context_changes": "ask"})
    fake.queue(Reply(text="Hi."), Reply(text="Sunny."))
    await h.say("hello")
    await h.say("weather?")
    first = [i for i, _k, _p in await h.context()]
    ticked: list[int] = []

    def keep_the_greeting(proposal):  # the user unticks the greeting
        ticked.extend(i.id for i in proposal.items if i.id not in first[:2])
        return Verdict.accept(ticked)

    reviewer = Reviewer(keep_the_greeting)
    h.session.context_review.reviewer = reviewer
    fake.queue(slash("clear"), Reply(text="Done."))
    await h.say("clean up")
    (change,) = reviewer.changes
    assert [i.id for i in change.proposal.items if i.chosen] == first + ticked[2:]
    assert change.agent == h.session.tree.label(h.root)
    assert "LLM" in change.proposal.title and "clear the context" in change.proposal.title
    reply = json.loads(last_tool_result(fake).splitlines()[-1])
    assert reply["result"] == "edited"
    assert reply["ids_leaving"] == ticked and reply["kept_by_the_user"] == first[:2]
    ctx = [i for i, _k, _p in await h.context()]
    assert ctx[:2] == first[:2] and not set(ticked) & set(ctx)
    (event,) = await h.events(kind="filter")
    assert event.payload["ids"] == ticked and await h.events(kind="clear") == []


@openai
async def test_a_refused_filter_apply_writes_only_the_command_record(make, fake, fmt):
    h = await make(settings_of_session={"llm_context_changes": "ask"})
    fake.queue(Reply(text="Hi."))
    await h.say("hello")
    h.session.context_review.reviewer = Reviewer(lambda _p: REFUSE)
    fake.queue(apply([1]), Reply(text="Kept."))
    await h.say("forget hello")
    reply = json.loads(last_tool_result(fake))
    assert reply["result"] == "refused" and reply["refused_by"] == "the user"
    assert await h.events(kind="filter") == []
    (command,) = await h.events(kind="command")
    assert command.payload["refused"] == "the user" and command.payload["source"] == "llm"
    assert 1 in [i for i, _k, _p in await h.context()]


# -- the apply result's reference to its change (issue 28 item 2) -------------------------


@openai
@pytest.mark.parametrize("setting", ["allow", "ask"])
async def test_the_apply_result_names_the_call_its_filter_event_records(
        make, fake, fmt, ikigai, setting):
    """The filter of an LLM's apply is written when the turn ends, after its result: the
    result names the apply call's id, the filter event written records that id (`call`),
    and /history and `log --json` show it; the projected size is the one recorded, and
    the one the context has after (the planning conversation gone too)."""
    h = await make(settings_of_session={"llm_context_changes": setting})
    fake.queue(Reply(text="Hi."), Reply(text="Sunny."))
    await h.say("hello")
    await h.say("weather?")
    first = [i for i, _k, _p in await h.context()]
    if setting == "ask":  # the user unticks the greeting's reply: an edited change
        h.session.context_review.reviewer = Reviewer(lambda _p: Verdict.accept(first[:1]))
    fake.queue(apply(first[:2]), Reply(text="Done."))
    await h.say("forget the greeting")
    reply = json.loads(last_tool_result(fake))
    assert reply["result"] == ("applied" if setting == "allow" else "edited")
    (call,) = [e for e in await h.events(kind="tool_call")
               if e.payload.get("name") == "filter_context"]
    (event,) = await h.events(kind="filter")
    assert reply["change"] == {"call": call.id, "applies": "when this turn ends",
                               "find": f"the event with call {call.id} "
                                       "(/history, ikigai log --json)"}
    assert event.payload["call"] == call.id and event.id > call.id
    after = [i for i, _k, _p in await h.context()]
    assert after == [i for i in first if i not in event.payload["ids"]]
    assert reply["context_after"] == {"messages": len(after),
                                      "tokens": event.payload["after"]["tokens"]}
    assert event.payload["after"]["messages"] == len(after)
    shown = (await h.session.command(h.root, "/history")).lines
    (line,) = [s for s in shown if s.startswith(f"  #{event.id} ")]
    assert line.endswith(f"(asked in call #{call.id})") and "the LLM" in line
    log = ikigai("--db", str(h.path), "log", "--json")
    assert log.returncode == 0, log.stderr
    (logged,) = [e for e in json.loads(log.stdout) if e["kind"] == "filter"]
    assert logged["id"] == event.id and logged["payload"]["call"] == call.id


@openai
@pytest.mark.parametrize("edited", [False, True])
async def test_a_slash_clear_result_names_the_call_its_event_records(make, fake, fmt, edited):
    """The LLM's /clear, accepted whole (a clear event) or edited (a filter of the ticked):
    the result names the slash call, the event written at the turn's end records it, and
    /history says so; a refused one names nothing."""
    h = await make(settings_of_session={"llm_context_changes": "allow" if not edited else "ask"})
    fake.queue(Reply(text="Hi."), Reply(text="Sunny."))
    await h.say("hello")
    await h.say("weather?")
    first = [i for i, _k, _p in await h.context()]
    if edited:  # the user keeps the greeting
        h.session.context_review.reviewer = Reviewer(
            lambda p: Verdict.accept([i.id for i in p.items if i.id not in first[:2]]))
    fake.queue(slash("clear"), Reply(text="Done."))
    await h.say("clean up")
    reply = json.loads(last_tool_result(fake).splitlines()[-1])
    (call,) = [e for e in await h.events(kind="tool_call") if e.payload.get("name") == "slash"]
    assert reply["result"] == ("edited" if edited else "applied")
    assert reply["change"]["call"] == call.id and reply["change"]["applies"] == "when this turn ends"
    (event,) = await h.events(kind="filter" if edited else "clear")
    assert event.payload["call"] == call.id and event.id > call.id
    shown = (await h.session.command(h.root, "/history")).lines
    (line,) = [s for s in shown if s.startswith(f"  #{event.id} ")]
    assert line.endswith(f"(asked in call #{call.id})")


@openai
async def test_a_refused_slash_clear_names_no_change(make, fake, fmt):
    h = await make(settings_of_session={"llm_context_changes": "deny"})
    fake.queue(Reply(text="Hi."), slash("clear"), Reply(text="Not cleared."))
    await h.say("hello")
    await h.say("clean up")
    reply = json.loads(last_tool_result(fake).splitlines()[-1])
    assert reply["result"] == "refused" and "change" not in reply
    assert await h.events(kind="clear") == []


# -- what is not a change to review: the LLM reading its mail (issue 28 item 3) ----------


@openai
async def test_the_llms_check_mail_is_not_put_to_review(make, fake, fmt):
    """Reading mail only adds, as the LLM's own tool result (a file read is no different):
    nothing the agent sees leaves or is rewritten, so under "ask" nobody is asked; the
    mail is in the result, read, and no user message is put into the turn."""
    h = await make(settings_of_session={"llm_context_changes": "ask"})
    reviewer = Reviewer(lambda _p: REFUSE)
    h.session.context_review.reviewer = reviewer
    await h.session.command(h.root, "/mail manual")  # no wake: the turn below reads it
    kid = (await h.session.command(h.root, "/fork --name kid")).data
    await h.session.command(kid, "/send root the build is green", source="llm")
    fake.queue(Reply(tool_calls=[("slash", {"command": "check-mail", "args": ""})]),
               Reply(text="Noted."))
    await h.say("any news?")
    assert reviewer.changes == []
    result = last_tool_result(fake)
    assert result == f"Mail from {h.session.tree.label(kid)}: the build is green"
    assert h.session.tree[h.root].unread == 0
    kinds = [k for _i, k, _p in await h.context()]
    assert kinds.count("user") == 1 and len(await h.events(kind="mail_read")) == 1
