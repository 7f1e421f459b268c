"""What Enter does: a message to the agent, a command, or a command with a preview."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.commands import CommandError, UsageError, parse_id_list
from ikigai_tui.core.events import message_text
from ikigai_tui.core.session import Session

if TYPE_CHECKING:
    from ikigai_tui.tui.app import IkigaiApp


async def submit(app: IkigaiApp, session: Session, agent_id: str, text: str) -> None:
    stripped = text.strip()
    try:
        if not stripped.startswith("/"):
            await session.say(agent_id, text)
            return
        words = stripped[1:].split()
        name = words[0] if words else ""
        if stripped == "/help":
            app.action_help()
        elif name == "exit" and len(words) == 1:
            app.exit()
        elif name in ("forget", "remember") and len(words) > 1 and words[1].startswith("--ids"):
            await _preview(app, session, agent_id, stripped, name, words[1:])
        else:
            await session.command(agent_id, stripped)  # its output arrives as a logged event
    except CommandError as exc:
        app.note("error", f"Error: {exc}")


async def _preview(app: IkigaiApp, session: Session, agent_id: str, text: str, name: str,
                   args: list[str]) -> None:
    """/forget and /remember with ids: show what would change, apply only on confirmation."""
    from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen
    listed = args[0][len("--ids="):] if args[0].startswith("--ids=") else " ".join(args[1:])
    try:
        ids = parse_id_list(listed)
    except UsageError as exc:
        raise CommandError(f"{exc}. Usage: /{name} --ids LIST") from exc
    replayer = await session.replayer(agent_id)
    missing = [i for i in ids if i not in replayer.ctx]
    if missing or not ids:
        raise CommandError(f"not in this agent's context: {', '.join(map(str, missing[:10]))}")
    window = await session.measure(agent_id)
    meter = session.meter(session.tree[agent_id])
    chosen = replayer.with_partners(set(ids))
    if name == "forget":
        keys = [k for k in replayer.ctx if k in chosen]
        mode = "remove"
    else:
        keys = list(replayer.ctx)
        chosen = set(ids) | {k for k in replayer.with_partners(set(ids))}
        mode = "keep"
    items = []
    for key in keys:
        _seq, kind, payload = replayer.ctx[key]
        tokens = meter.counter.scale(meter.counter.message(kind, payload))
        first = message_text(kind, payload).strip().splitlines()[0] if message_text(kind, payload).strip() else ""
        items.append(PreviewItem(key, kind, first, tokens, key in chosen))
    verb = "Forget" if name == "forget" else "Remember only"
    screen = PreviewScreen(f"{verb}: review the messages", items, window.tokens, mode=mode,
                           note="A tool call and its result always go together.")

    def done(result: list[int] | None) -> None:
        async def apply() -> None:
            try:
                if result is None:
                    await session.record(agent_id, text, ["Cancelled."])
                else:
                    listed = ",".join(map(str, result))
                    await session.command(agent_id, f"/{name} --ids {listed}")
            except CommandError as exc:
                app.note("error", f"Error: {exc}")

        app.run_worker(apply(), group="preview")

    app.push_screen(screen, done)
