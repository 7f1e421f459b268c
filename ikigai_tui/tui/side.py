"""/btw on the full screen: its panel (screens/side_answer.py, handed in as `panel`:
this module imports no screen) opens at once and shows the answer as it streams (the
core's SideDelta notices); the command runs as any other (core/handlers/btw.py), so the
scrollback gets its record from the log. Esc while it streams stops the request:
nothing is written."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import Notice, SideDelta

if TYPE_CHECKING:
    from ikigai_tui.core.commands.parse import ParsedCommand
    from ikigai_tui.core.session import Session


async def ask(host: Any, session: Session, agent_id: str, parsed: ParsedCommand,
              panel: Callable[[str, str], Any]) -> None:
    """`panel(question, model)`: the screen to push; it has add(text), finish(answer,
    error) and `done`."""
    screen = panel(parsed.args.strip(), session.model_of(session.tree[agent_id]))
    task = asyncio.current_task()

    def closed(_: object) -> None:
        if not screen.done and task is not None and not task.done():
            task.cancel()

    def on_notice(notice: Notice) -> None:
        if isinstance(notice, SideDelta) and notice.agent_id == agent_id:
            screen.add(notice.text)

    host.push_screen(screen, closed)
    session.subscribe(on_notice)
    try:
        result = await session.propose(agent_id, parsed)
    except asyncio.CancelledError:
        screen.done = True
        host.note("note", "Cancelled: the side question stopped; nothing was written.")
        return
    except CommandError as exc:
        screen.finish(None, f"Error: {exc}")
        return
    finally:
        with contextlib.suppress(ValueError):
            session.unsubscribe(on_notice)
    screen.finish(getattr(result, "data", None))
