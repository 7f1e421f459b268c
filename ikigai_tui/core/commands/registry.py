"""The command registry: every command, its usage, and whether the LLM may call it."""

from __future__ import annotations

from importlib import import_module

from ikigai_tui.core.commands.parse import CommandSpec, Handler, Registry


def _lazy(module: str, name: str) -> Handler:
    """The handler `name` of core/handlers/`module`.py, imported when the command first runs: the
    handlers (and the matchers, compaction and memory they import) stay out of start-up."""

    async def handler(c):
        return await getattr(import_module(f"ikigai_tui.core.handlers.{module}"), name)(c)

    handler.__qualname__ = handler.__name__ = name
    return handler


_FILTER_DETAILS = (
    "A matcher reviews the whole context: the agent's LLM (or --matcher-model M), or the local "
    "matcher for the offline model and with --local. Shows what would change first; "
    "--dry-run only shows it. With --ids, a range (5-9) means the context's messages whose ids "
    "fall in it; a single id must be one of them; they go at once (--preview: review them "
    "first). A tool call and its result leave together. "
    "/undo reverses it.")

_FORGET_DETAILS = _FILTER_DETAILS + (
    " /forget --tool-results [--keep N] [--tool NAME] [--min-tokens T] clears the output of "
    "older tool results (all but the latest N, tool_results_keep: 3; tool_results_exclude "
    "never, the memory tool's) after a review: each is sent as a one-line stub while its call "
    "stays; /restore ID brings one back.")

_COMPACT_DETAILS = (
    "Summarises the context except the latest turns (2, or --keep N) with the agent's model "
    "(or compact_model in the config), into sections: goal, decisions and their reasons, "
    "constraints, files and artefacts, errors and fixes, open questions, next steps, and "
    "every file, command, URL and identifier named, verbatim. FOCUS says what to keep in "
    "full. --upto MARK summarises only what lies before the mark, --from MARK only what "
    "follows it. A context bigger than the model takes is summarised in pieces, then the "
    "pieces' summaries are merged. The offline model makes an extractive summary (the "
    "requests and the first lines of the replies). Shows the summary (editable), what it "
    "replaces and the saving first; --dry-run only shows it. /undo brings the messages back.")

_RESTORE_DETAILS = (
    "IDS as /recall shows them (3,5-9: a range means the messages whose ids fall in it). Each "
    "comes back at its place in log order, a tool call with its result. A message in the "
    "context (pruned by the window too) stays as it is; a summarised one is refused (/undo the "
    "compaction instead). --preview: review them first; --dry-run only shows them. /undo "
    "reverses it.")

REGISTRY = Registry([
    CommandSpec("clear", "/clear [MARK]", "Empty the context, or rewind to MARK.",
                _lazy("context", "clear"), llm=True, deferred=True),
    CommandSpec("mark", "/mark [NAME] [--at ID]", "Create a checkpoint (re-using a name moves it).",
                _lazy("context", "mark"), llm=True,
                details="With --at ID the mark is at that earlier entry of the context: a "
                        "later /rewind to it keeps up to and including ID."),
    CommandSpec("rewind", "/rewind [MARK]", "Rewind to MARK (default: the latest valid mark).",
                _lazy("context", "rewind"), llm=True, deferred=True),
    CommandSpec("marks", "/marks", "List the valid marks with their positions.",
                _lazy("context", "marks"), llm=True),
    CommandSpec("forget", "/forget [--dry-run] [--local] [--matcher-model M] CRITERIA | [--preview] --ids LIST"
                " | --tool-results [--keep N] [--tool NAME] [--min-tokens T]",
                "Remove the messages that match CRITERIA (or the ids, like 3,5-9).",
                _lazy("context", "forget"), deferred=True, details=_FORGET_DETAILS),
    CommandSpec("remember", "/remember [--dry-run] [--local] [--matcher-model M] CRITERIA | [--preview] --ids LIST",
                "Keep only the messages that match CRITERIA (or the ids).",
                _lazy("context", "remember"), deferred=True, details=_FILTER_DETAILS),
    CommandSpec("undo", "/undo [--to ID]", "Undo the latest context change, saying what comes back.",
                _lazy("undo", "undo"), deferred=True,
                details="Context changes: /clear, /rewind, /forget, /remember, /compact, /pin, "
                "/unpin, /budget, and the LLM's memory changes (the file goes back as it was). "
                "Repeat it to walk further back. /system and /model are not undone: set them "
                "again. --to ID undoes every change from the latest back to ID (as /history lists "
                "them) in one step: the context as it was just before it."),
    CommandSpec("history", "/history [--all]", "List this agent's context changes: who, when, "
                "what, the sizes before and after, what is undone.",
                _lazy("history", "history"),
                details="The latest 20 (--all: every one), oldest first. /undo --to ID takes "
                "the context back to just before one of them."),
    CommandSpec("compact", "/compact [FOCUS] [--keep N] [--upto MARK | --from MARK] [--dry-run]",
                "Replace older context by a summary you review (and may edit) first.",
                _lazy("compact", "compact"), deferred=True,
                details=_COMPACT_DETAILS),
    CommandSpec("context", "/context", "Show what is sent: messages, tokens, budget.",
                _lazy("context", "context"), llm=True),
    CommandSpec("btw", "/btw QUESTION", "Ask the model a side question; it never enters a context.",
                _lazy("btw", "btw"),
                details="The model sees the context exactly as the next request would send it "
                "(system prompt, pins, window) and the question, without tools. The answer shows "
                "in a panel (Esc closes it, c copies it) and in the log as a side exchange that "
                "no request ever holds: not this agent's, not a child's, not after a restart. "
                "Its tokens count in the agent's usage. During a turn it asks about the context "
                "as committed so far."),
    CommandSpec("recall", "/recall [--local] [--matcher-model M] QUERY", "Search all of this "
                "agent's messages and its ancestors', those out of the context too, by words and "
                "by meaning, and say where each stands.",
                _lazy("recall", "recall"), llm=True,
                details="Words: the query's topic words (framing and common words dropped), each "
                "in any inflection (cats finds cat), all of them. Meaning: the /forget matcher "
                "(the LLM one with a provider model, the local one offline or with --local) over "
                "every message. Each hit shows its id, role, state (in the context, pruned by "
                "the window, forgotten, rewound, cleared, summarised or not inherited) and why. "
                "A query ending in ? with a provider model is also answered from the hits, "
                "citing their ids (never added to the context). /forget --ids and /remember "
                "--ids take the ids shown. --restore brings the hits out of the context back "
                "(--dry-run: only show what would come back); in the TUI a dialog lists them to "
                "tick."),
    CommandSpec("restore", "/restore [--dry-run] [--preview] IDS",
                "Bring messages of this agent or its ancestors back into the context.",
                _lazy("restore", "restore"), deferred=True, details=_RESTORE_DETAILS),
    CommandSpec("fork", "/fork [MARK] [--at ID] [--model M] [--name N] [--mail wake|manual] "
                "[--report] [PROMPT]",
                "Create a child agent with this context (or only what follows MARK).",
                _lazy("agents", "fork"), llm=True,
                details="With PROMPT the child starts working at once. With --at ID the child "
                "gets the context up to and including the entry ID (a tool call with its "
                "result). --mail sets the child's mail mode (see /mail; by default the "
                "parent's when set, else the config's mail, else wake). --report: each time "
                "the child goes idle after a turn that answered its prompt or mail, its final "
                "reply (or its failure) is mailed to this agent, marked a report. A dead agent "
                "can fork too: the child is alive, with the dead agent's context."),
    CommandSpec("send", "/send AGENT MESSAGE", "Put a message in another agent's inbox.",
                _lazy("agents", "send"), llm=True,
                details="The LLM may send only to its own descendants and its ancestors."),
    CommandSpec("check-mail", "/check-mail", "Read unread mail into the context.",
                _lazy("agents", "check_mail"), llm=True),
    CommandSpec("mail", "/mail [wake|manual]", "Show or set whether mail wakes this agent.",
                _lazy("mail", "mail"),
                details="wake: mail arriving while the agent is idle makes it read its mail "
                "(/check-mail) and take a turn by itself; mail arriving during a turn waits "
                "for its end, then wakes it once for all of it. manual: mail waits for "
                "/check-mail. Recorded in the log; children forked afterwards inherit it. "
                "Without /mail: the config's mail, else wake for a child and manual for the "
                "root. After wake_limit (10) woken turns in a row without a message from you, "
                "mail no longer wakes it until you write to it. A dead agent never wakes."),
    CommandSpec("wait", "/wait AGENT... [--timeout SECONDS]",
                "Wait until the agents are idle, then show their latest replies.",
                _lazy("mail", "wait"), llm=True,
                details="Idle or dead, here or in another ikigai process. Each reply is cut "
                "at 2000 characters (its message id names the whole). Esc stops the wait. "
                "Refused for the agent itself and its ancestors (it would never end). The "
                "LLM's wait ends after wait_timeout (600 s) unless it gives --timeout; the "
                "reports of the agents it waited for are marked read (the result holds them)."),
    CommandSpec("kill", "/kill AGENT", "Stop an agent and its descendants.",
                _lazy("agents", "kill"), llm=True,
                details="The root cannot be killed; the LLM may kill only its own descendants."),
    CommandSpec("revive", "/revive AGENT", "Bring a killed agent back, its context as it was.",
                _lazy("agents", "revive"),
                details="The agent is idle again and takes messages; its descendants stay dead "
                "unless revived too. A turn the kill cut can be sent again with /retry there. "
                "Recorded in the log (a revive event)."),
    CommandSpec("rename", "/rename AGENT NAME", "Give an agent a new name.",
                _lazy("agents", "rename"),
                details="AGENT by name or id (the root included, and dead agents). NAME: a "
                "letter, then letters, digits, _ . -; not another agent's. The id stays: "
                "/send, /kill and --agent take the new name; the old one is free again. "
                "Recorded in the log; /undo does not reverse it: rename again."),
    CommandSpec("agents", "/agents", "Show the agent tree.",
                _lazy("agents", "agents"), llm=True),
    CommandSpec("model", "/model [MODEL]", "Show or switch this agent's model.",
                _lazy("settings", "model")),
    CommandSpec("system", "/system [TEXT]", "Show or set the system prompt.",
                _lazy("settings", "system")),
    CommandSpec("budget", "/budget [TOKENS|off]", "Show or set this agent's window budget.",
                _lazy("settings", "budget"),
                details="Whole turns are dropped from the front of what is sent until the request "
                "fits it (after each turn). TOKENS like 50000 or 50K; off disables the window. "
                "Children forked afterwards inherit it; /undo reverses it."),
    CommandSpec("pin", "/pin TEXT", "Pin a note that is always sent and never pruned.",
                _lazy("settings", "pin")),
    CommandSpec("unpin", "/unpin N", "Remove pin number N.",
                _lazy("settings", "unpin")),
    CommandSpec("pins", "/pins", "List the pins.", _lazy("settings", "pins")),
    CommandSpec("memory", "/memory [PATH]", "Show the memory files (the LLM's memory tool).",
                _lazy("memory", "memory"),
                details="PATH shows one file with line numbers. The files live outside the log: "
                "they survive /clear and compaction. /undo reverses the latest change."),
    CommandSpec("cwd", "/cwd [PATH]", "Show or set this agent's workspace (its file tools' folder).",
                _lazy("cwd", "cwd"),
                details="The file tools (read_file, list_files, search_files, write_file, "
                "edit_file) never reach outside it. PATH is relative to the current workspace; "
                "it must be an existing folder. Without --cwd or /cwd it is the folder ikigai "
                "was started in. Recorded in the log (it survives restarts); children forked "
                "afterwards inherit it. /undo does not reverse it: set it again."),
    CommandSpec("mcp", "/mcp [restart NAME]", "List the MCP servers, their state and tools.",
                _lazy("mcp", "mcp"),
                details="Servers are [mcp.NAME] tables in the config file: command = [...] "
                "(run over stdio) or url = \"...\" (streamable HTTP), with optional env, cwd, "
                "headers and timeout (seconds, 30). They start with the first turn; their "
                "tools are offered as NAME__tool, and ask before they run unless [permissions] "
                "says otherwise (\"mcp.NAME__*\" = \"allow\"). A server that fails to start, "
                "dies or does not answer in time loses its tools until /mcp restart NAME."),
    CommandSpec("help", "/help [COMMAND]", "List the commands, or explain one.",
                _lazy("settings", "help_")),
    CommandSpec("retry", "/retry", "Send the unanswered last message again (after a failed turn).",
                _lazy("retry", "retry")),
    CommandSpec("exit", "/exit", "Leave ikigai.", _lazy("settings", "exit_")),
])

# Commands that change nothing, so they also work on a dead agent.
READ_ONLY = frozenset({"marks", "context", "history", "agents", "model", "system", "budget",
                       "pins", "help", "exit", "memory", "mcp", "mail"})
# Commands that write from a dead agent: a child with its context, an agent revived.
ON_DEAD = frozenset({"fork", "revive"})
