"""Who decides whether a tool call runs: the user's rules, per tool.

Each tool says what it may touch (its `access`): "read" (read-only file tools), "write"
(writing files), "shell" (bash), "mcp" (an MCP server's tool) or "ikigai" (the program's
own tools, slash / filter_context / memory, governed by their own reviews). A rule is
`allow` (runs), `ask` (the user is asked first, naming the agent, the tool and exactly
what will run: `tool.describe(arguments)`) or `deny` (never runs; the LLM is told).

The rules, in order:

1. The `[permissions]` table of the config: a tool's name or an fnmatch pattern ->
   "allow", "ask" or "deny" (`bash = "ask"`, `"mcp.github__*" = "allow"`). An MCP tool
   is matched as `mcp.NAME` as well as by its own name. The most specific match wins:
   an exact name over any pattern, a longer pattern over a shorter one; between two
   patterns of one length the stricter (deny, then ask, then allow).
2. No rule matches: the default of the tool's access: read -> allow, write and shell ->
   ask, mcp -> ask, ikigai -> allow. A tool that does not say its access is asked about.
3. The agent's own grants, recorded in its log (`permission` events, {tool, rule}): the
   user's "always for this agent" adds `allow` for that tool. A fork inherits its
   parent's grants as they were at the fork; /undo withdraws the latest.

A grant never widens what the config denies, and a child is never wider than its
parent: the grants it inherited are a ceiling its own cannot lift. Concretely, a tool
runs in an agent only if (a) the config does not deny it, (b) no grant of the agent,
inherited or its own, denies it, and (c) the config allows it or a grant (inherited or
its own) allows it, or the user allows this call. A grant of the child's never reaches
the parent, and an inherited `deny` is never lifted by the child's own `allow`.

Headless (`ikigai run`, `-p`) there is nobody to ask: `--allow TOOL` (repeatable,
patterns allowed) and `--yes` answer "once" for the tools they name; any other `ask`
is refused, and the refusal is the tool's result (the LLM reads it; nothing hangs).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import NamedTuple

ALLOW, ASK, DENY = "allow", "ask", "deny"
RULES = (ALLOW, ASK, DENY)
ACCESS_DEFAULTS: Mapping[str, str] = {"read": ALLOW, "write": ASK, "shell": ASK, "mcp": ASK,
                                      "ikigai": ALLOW}
IKIGAI = "ikigai"
_STRICTNESS = {ALLOW: 0, ASK: 1, DENY: 2}

# The user's answers to an `ask`.
ONCE, REFUSE, ALWAYS = "once", "refuse", "always"


def is_pattern(name: str) -> bool:
    return any(c in name for c in "*?[")


def rule_names(tool: str, access: str) -> tuple[str, ...]:
    """The names a tool is matched by: its own, and `mcp.NAME` for an MCP tool."""
    return (tool, f"mcp.{tool}") if access == "mcp" else (tool,)


class Rules:
    """The `[permissions]` table: tool name or pattern -> allow / ask / deny."""

    def __init__(self, table: Mapping[str, str] | None = None) -> None:
        self.exact: dict[str, str] = {}
        self.patterns: list[tuple[str, str]] = []
        for key, rule in (table or {}).items():
            if rule not in RULES:
                raise ValueError(f"permissions '{key}' must be \"allow\", \"ask\" or \"deny\", "
                                 f"not {rule!r}")
            if not key.strip():
                raise ValueError("permissions: a rule needs a tool name or pattern")
            if is_pattern(key):
                self.patterns.append((key, rule))
            else:
                self.exact[key] = rule
        # Longest first; equally long: the stricter first.
        self.patterns.sort(key=lambda p: (-len(p[0]), -_STRICTNESS[p[1]]))

    def match(self, tool: str, access: str) -> str | None:
        """The most specific rule for the tool, or None."""
        names = rule_names(tool, access)
        exact = [self.exact[n] for n in names if n in self.exact]
        if exact:
            return max(exact, key=_STRICTNESS.__getitem__)
        for pattern, rule in self.patterns:
            if any(fnmatchcase(n, pattern) for n in names):
                return rule
        return None

    def decide(self, tool: str, access: str | None) -> str:
        """The configured rule, or the default of the tool's access (unknown: ask)."""
        found = self.match(tool, access or "")
        if found is not None:
            return found
        return ACCESS_DEFAULTS.get(access or "", ASK)


class Grants(NamedTuple):
    """An agent's recorded rules: those inherited at its fork, and its own."""

    inherited: Sequence[tuple[str, str]] = ()
    own: Sequence[tuple[str, str]] = ()


def _matches(grants: Iterable[tuple[str, str]], names: Sequence[str], rule: str) -> bool:
    return any(r == rule and any(fnmatchcase(n, pattern) for n in names) for pattern, r in grants)


def decide(rules: Rules, tool: str, access: str | None, grants: Grants = Grants()) -> str:
    """allow / ask / deny for one tool in one agent (the module's rules 1-3)."""
    configured = rules.decide(tool, access)
    if configured == DENY:
        return DENY  # no grant widens what the config denies
    names = rule_names(tool, access or "")
    if _matches(grants.inherited, names, DENY) or _matches(grants.own, names, DENY):
        return DENY  # the parent's deny is a ceiling the child's allow cannot lift
    if configured == ALLOW or _matches(grants.inherited, names, ALLOW) or _matches(grants.own, names, ALLOW):
        return ALLOW
    return configured


class PermissionRequest(NamedTuple):
    """One `ask`: who asks (the agent's id and its name as shown), for which tool, and
    exactly what will run."""

    agent_id: str
    agent: str
    tool: str
    access: str
    description: str


class PermissionAnswer(NamedTuple):
    choice: str  # ONCE, REFUSE or ALWAYS
    reason: str = ""  # why it was refused, for the LLM (headless: how to allow it)


Reviewer = Callable[[PermissionRequest], Awaitable[PermissionAnswer]]
NOBODY = ("nobody is here to approve it (headless: allow it with --allow TOOL or --yes)")


class PermissionService:
    """A session's rules and who answers an `ask`: the reviewer the front end installs
    (the full screen's modal, or the headless flags); none installed: refused."""

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules or Rules()
        self.reviewer: Reviewer | None = None

    def decide(self, tool: str, access: str | None, grants: Grants = Grants()) -> str:
        return decide(self.rules, tool, access, grants)

    async def ask(self, request: PermissionRequest) -> PermissionAnswer:
        if self.reviewer is None:
            return PermissionAnswer(REFUSE, NOBODY)
        return await self.reviewer(request)


def headless_reviewer(allowed: Sequence[str], yes: bool,
                      say: Callable[[str], None] | None = None) -> Reviewer:
    """`--allow TOOL` (patterns allowed) and `--yes`: each `ask` they cover runs once (its
    description printed through `say`); any other is refused, saying how to allow it."""

    async def review(request: PermissionRequest) -> PermissionAnswer:
        names = rule_names(request.tool, request.access)
        by = "--yes" if yes else next((f"--allow {p}" for p in allowed
                                       if any(fnmatchcase(n, p) for n in names)), None)
        if by is None:
            return PermissionAnswer(REFUSE, f"not allowed without a screen: run with --allow "
                                            f"{request.tool} or --yes to allow it")
        if say is not None:
            say(f"{request.agent}: {request.tool} allowed by {by}:")
            for line in request.description.splitlines():
                say(f"  {line}")
        return PermissionAnswer(ONCE)

    return review


def grant_payload(tool: str, rule: str = ALLOW) -> dict[str, str]:
    """The payload of a `permission` event: the tool (a name or a pattern) and its rule."""
    return {"tool": tool, "rule": rule}


def grant_words(payload: Mapping[str, object]) -> str:
    """A `permission` event in a few words (/undo's, the log's)."""
    rule = payload.get("rule", ALLOW)
    verb = "always allow" if rule == ALLOW else "always deny" if rule == DENY else f"{rule}"
    return f"{verb} {payload.get('tool', '?')} for this agent"
