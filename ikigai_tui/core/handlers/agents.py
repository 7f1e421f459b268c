"""Agent commands: /fork /send /check-mail /kill /revive /rename /agents."""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ikigai_tui.core.agents import AgentRuntime, AgentTree
from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import CommandResult, is_mark_name
from ikigai_tui.core.events import AgentRecord, EventRef
from ikigai_tui.core.mailbox import MODES, explicit_mode
from ikigai_tui.core.replay.replayer import Mark, Replayer
from ikigai_tui.core.handlers.entry_ref import context_entry

_AGENT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,31}$")


def _fork_options(c: CommandContext, opts: dict[str, str]) -> bool:
    """Read --model/--name/--mail options and the --report flag into opts; True when `--`
    ended them."""
    while (token := c.args.peek_word()) is not None and token.startswith("--"):
        c.args.take()
        if token == "--":
            return True
        key, eq, value = token[2:].partition("=")
        if key not in ("model", "name", "at", "mail", "report"):
            raise UsageError(f"unknown option '--{key}'")
        if key in opts:
            raise UsageError(f"--{key} given twice")
        if key == "report":
            if eq:
                raise UsageError("--report takes no value")
            opts[key] = "yes"
            continue
        opts[key] = value if eq else c.args.require(f"value after --{key}")
        if key == "mail" and opts[key] not in MODES:
            raise UsageError(f"--mail takes wake or manual, not '{opts[key]}'")
        if not opts[key]:
            raise UsageError(f"empty value for --{key}")
    return False


def _check_agent_name(tree: AgentTree, name: str) -> None:
    if not _AGENT_NAME.match(name):
        raise UsageError(f"'{name}' is not a valid agent name (a letter, then letters, digits, "
                         "_ . -; 32 characters at most)")
    if any(a.name == name for a in tree):
        raise CommandError(f"an agent named '{name}' already exists")


async def fork(c: CommandContext) -> CommandResult:
    r = c.replayer
    opts: dict[str, str] = {}
    ended = _fork_options(c, opts)
    mark = None
    first = None if ended else c.args.peek_word()
    if first is not None and _names_a_mark(c, first, leading=not opts):
        c.args.take()
        mark = _fork_mark(c, first)
        ended = _fork_options(c, opts)
    prompt = c.args.rest()
    if not ended:
        stray = next((w for w in prompt.split() if _OPTION.fullmatch(w)), None)
        if stray is not None:
            raise UsageError(f"'{stray}' inside the prompt: options go before it (to send "
                             "it as text, put -- before the prompt)")
    name = opts.get("name")
    if name is not None:
        _check_agent_name(c.tree, name)
    at_event = _fork_at(c, opts.get("at"), mark)
    model = opts.get("model") or r.model or c.agent.model
    if "model" in opts:
        model = c.services.check_model(model)  # an alias or a bare name: its full name
    child_id = c.services.new_id()
    mark_event = mark.event_id if mark else None
    mark_name = mark.label if mark else None
    at = {"at_event": at_event} if at_event is not None else {}
    mail = opts.get("mail") or await _inherited_mail(c)
    parent_side = c.add("fork", {"child": child_id, "mark": mark_name, "mark_event": mark_event,
                                 **at})
    c.batch.new_agents.append(AgentRecord(
        child_id, c.agent.id, name, model, "idle", 0.0, EventRef(parent_side),  # type: ignore[arg-type]
        c.services.budget_of(c.agent),
    ))
    c.add("fork", {
        "parent": c.agent.id, "parent_event": EventRef(parent_side), "mark": mark_name,
        "mark_event": mark_event, "model": model, "budget": c.services.budget_of(c.agent),
        "name": name,  # so that the agents rows can be rebuilt from the log
        **at,
        # its mail mode when set (core/mailbox.py), and whether its replies go home
        **({"mail": mail} if mail else {}), **({"report": True} if "report" in opts else {}),
    }, agent_id=child_id)
    if prompt:
        c.add("user", {"content": prompt}, agent_id=child_id)
        # Only a prompt starts the child: a plain /fork never has it answer a message it
        # inherited unanswered (the parent's own turn is answering that one).
        c.after_commit.append(lambda: c.services.start_if_pending(child_id))
    suffix = f" (from {_mark_words(mark)})" if mark else ""
    if at_event is not None:
        suffix += f" (up to #{at_event})"
    return CommandResult([f"Forked. Child: {c.tree.short_id(child_id)}{suffix}"], data=child_id)


_OPTION = re.compile(r"--(name|model|at|mail)(=.*)?|--report")


async def _inherited_mail(c: CommandContext) -> str | None:
    """The parent's mail mode when its own events set it: the child inherits it."""
    mode = explicit_mode(c.replayer)
    return mode.mode if mode is not None else None


_WORD = re.compile(r"[A-Za-z0-9_.:-]+")


def _fork_at(c: CommandContext, word: str | None, mark: Mark | None) -> int | None:
    """The entry of /fork --at ID: one of the context (after MARK when one is given)."""
    if word is None:
        return None
    key = context_entry(c, word)
    if mark is not None and c.replayer.ctx[key][0] <= mark.event_id:
        raise CommandError(f"#{key} is not after mark {_mark_words(mark)}")
    return key


def _names_a_mark(c: CommandContext, first: str, *, leading: bool) -> bool:
    """Whether the first word of /fork's arguments is meant as its MARK. A valid mark, a
    name this agent used for a mark, `#N`, or a near miss of one always is. Right after
    /fork, a word that could be a mark name is one too when nothing follows it, an option
    follows it, or one more plain word does: a typo must not become the prompt
    ("/fork nosuchmark hello"). A longer prompt is taken as it is; `--` forces that."""
    r = c.replayer
    if r.find_mark(first) or first in r.mark_names_seen or re.fullmatch(r"#\d+", first):
        return True
    if not is_mark_name(first):
        return False
    if _near_mark(c, first) is not None:
        return True
    if not leading:
        return False
    after = c.args.text[c.args.pos:].split()[1:]
    return (not after or after[0].startswith("--")
            or (len(after) == 1 and _WORD.fullmatch(after[0]) is not None))


def _near_mark(c: CommandContext, word: str) -> str | None:
    """A mark name of this agent that `word` probably mistypes."""
    names = {m.name for m in c.replayer.valid_marks() if m.name} | c.replayer.mark_names_seen
    folded = {n.casefold(): n for n in names}
    if word.casefold() in folded:
        return folded[word.casefold()]
    close = difflib.get_close_matches(word, sorted(names), n=1, cutoff=0.75)
    return close[0] if close else None


def _fork_mark(c: CommandContext, word: str) -> Mark:
    try:
        return c.resolve_mark(word)
    except CommandError as exc:
        near = _near_mark(c, word)
        hint = (f" Did you mean '{near}'?" if near is not None and near != word else
                f" To give a prompt that starts with '{word}', put -- before it: "
                f"/fork -- {word} ...")
        raise CommandError(f"{exc}{hint}") from None


def _mark_words(mark: Mark) -> str:
    return mark.name if mark.name is not None else "the unnamed mark"


async def send(c: CommandContext) -> CommandResult:
    ref = c.args.require("AGENT")
    text = c.args.rest()
    if not text:
        raise UsageError("missing MESSAGE")
    target = c.tree.resolve(ref)
    if c.source == "llm" and not _llm_may_mail(c, target.id):
        # SPEC §11: the LLM cannot reach agents outside its own subtree; it reports up the
        # line that delegated to it (its parent, theirs), never to a sibling or a cousin.
        raise CommandError("the LLM may only send to its own descendants or its ancestors")
    if target.dead:
        raise CommandError(f"agent {c.tree.label(target.id)} is dead; mail would never be read")
    c.add("mail", {"from": c.agent.id, "from_label": c.tree.label(c.agent.id), "text": text},
          agent_id=target.id)
    return CommandResult([f"Mail sent to {c.tree.label(target.id)}."])


def _llm_may_mail(c: CommandContext, target_id: str) -> bool:
    me = c.agent.id
    return (target_id != me and (c.tree.is_descendant(target_id, me)
                                 or c.tree.is_descendant(me, target_id)))


async def check_mail(c: CommandContext) -> CommandResult:
    c.args.done()
    unread = c.replayer.unread
    if not unread:
        return CommandResult(["No new mail."])
    lines = []
    c.add("mail_read", {"ids": list(unread)})
    for mail_id, mail in unread.items():
        sender = mail.get("from")
        who = c.tree.label(sender) if sender in c.tree else str(sender)
        what = ("Report" + ("" if mail.get("ok", True) else " (failed)")) if mail.get("report") else "Mail"
        text = f"{what} from {who}: {mail.get('text', '')}"
        lines.append(text)
        if c.source != "llm":
            # The LLM gets its mail in the tool result; a user message mid-turn would
            # split a tool exchange.
            c.add("user", {"content": text, "mail": mail_id})
    if c.source == "llm":
        return CommandResult(lines)
    # Each mail is now a message of the context, shown as one: not repeated here.
    return CommandResult([f"{len(lines)} mail{'s' if len(lines) != 1 else ''} read into the "
                          "context."])


async def kill(c: CommandContext) -> CommandResult:
    ref = c.args.require("AGENT")
    c.args.done()
    tree = c.tree
    target = tree.resolve(ref)
    if target.parent_id is None:
        raise CommandError("the root agent cannot be killed")
    if target.dead:
        raise CommandError(f"agent {tree.label(target.id)} is already dead")
    if c.source == "llm" and not tree.is_descendant(target.id, c.agent.id):
        raise CommandError("the LLM may only kill its own descendants")
    victims = [target] + [a for a in tree.descendants(target.id) if not a.dead]
    for victim in victims:
        c.add("kill", {"by": c.agent.id}, agent_id=victim.id)
        c.batch.agent_updates.append((victim.id, "status", "dead"))
    # Nothing stops before the kill is on disk: a kill that cannot be saved leaves the
    # agents running. Their partial replies are then kept, flagged interrupted.
    victim_ids = [v.id for v in victims]
    c.after_commit.append(lambda: c.services.cancel_turns(victim_ids))
    others = len(victims) - 1
    more = f" and {others} descendant{'s' if others != 1 else ''}" if others else ""
    return CommandResult([f"Killed {tree.label(target.id)}{more}."])


async def revive(c: CommandContext) -> CommandResult:
    """/revive AGENT: a killed agent is idle again, its context as it was (a `revive`
    event); its descendants stay dead unless revived too."""
    ref = c.args.require("AGENT")
    c.args.done()
    tree = c.tree
    target = tree.resolve(ref)
    if not target.dead:
        raise CommandError(f"agent {tree.label(target.id)} is not dead")
    c.add("revive", {"by": c.agent.id}, agent_id=target.id)
    c.batch.agent_updates.append((target.id, "status", "idle"))
    line = f"Revived {tree.label(target.id)}: idle, its context as it was."
    if c.services.replayer is not None and unanswered_in(await c.services.replayer(target.id)):
        line += " Its last message was not answered: /retry there sends it again."
    dead = sum(1 for a in tree.descendants(target.id) if a.dead)
    if dead:
        line += f" {dead} descendant{'s' if dead != 1 else ''} stay dead (/revive each)."
    return CommandResult([line], data=target.id)


async def rename(c: CommandContext) -> CommandResult:
    """/rename AGENT NAME: a new name for an agent (its id stays; /send, /kill, --agent and
    Tab take the new one; the old one is free again)."""
    ref = c.args.require("AGENT")
    name = c.args.require("NAME")
    c.args.done()
    tree = c.tree
    target = tree.resolve(ref)
    if target.name == name:
        return CommandResult([f"Agent {tree.label(target.id)} is already named {name}."])
    _check_agent_name(tree, name)
    before = tree.label(target.id)
    c.add("rename", {"name": name, "previous": target.name}, agent_id=target.id)
    c.batch.agent_updates.append((target.id, "name", name))
    return CommandResult([f"Renamed {before} to {name}."], data=target.id)


async def agents(c: CommandContext) -> CommandResult:
    c.args.done()
    elsewhere = c.services.elsewhere
    statuses = {a.id: await status_of(a, elsewhere) for a, _ in c.tree.walk()}
    return CommandResult(format_tree(c, statuses))


async def status_of(agent: AgentRuntime, elsewhere: Callable[[str], Awaitable[Any]] | None
                    ) -> tuple[str, dict | None]:
    """(the agent's status, the other process running its turn as {"pid", "host"}, or
    None): an agent idle here may be working in another ikigai process on the database."""
    if agent.status != "idle" or elsewhere is None:
        return agent.status, None
    holder = await elsewhere(agent.id)
    if holder is None:
        return "idle", None
    return "working", {"pid": holder.pid, "host": holder.host}


def status_words(status: str, where: dict | None) -> str:
    return f"{status} (pid {where['pid']} on {where['host']})" if where is not None else status


def format_tree(c: CommandContext, statuses: dict[str, tuple[str, dict | None]] | None = None
                ) -> list[str]:
    tree = c.tree
    lines = []
    for agent, depth in tree.walk():
        here = " <- you" if agent.id == c.agent.id else ""
        mail = f", {agent.unread} unread" if agent.unread else ""
        status = status_words(*(statuses or {}).get(agent.id, (agent.status, None)))
        lines.append(f"{'  ' * depth}{tree.label(agent.id)}  {status}  {agent.model}{mail}{here}")
    return lines


def unanswered_in(replayer: Replayer) -> bool:
    """Whether the context ends with a user message flagged unanswered (a cut turn)."""
    if not replayer.ctx:
        return False
    entry = replayer.ctx[next(reversed(replayer.ctx))]
    return entry[1] == "user" and "failed" in entry[2]
