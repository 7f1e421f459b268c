"""The app's side of the cursor mode (F7; tui/widgets/cursor.py): entering and leaving
it, PageUp/PageDown moving the cursor while it is on, and each action on the selected
entry, run through the same command path as typing it (the log and /undo see the same
events): /fork --at ID, /mark NAME --at ID, /forget --preview --ids (its exchange),
/pin TEXT, /restore ID; copying (OSC 52, as F5) and showing it whole are the screen's."""

from __future__ import annotations

from typing import Any

from ikigai_tui.tui.widgets.cursor import CursorAct, applicable


class CursorActions:
    """A mixin of IkigaiApp (before MainScreenActions: its `action_scroll` comes first)."""

    def _cursor_scrollback(self: Any) -> Any:
        pane = self.panes.active
        return None if pane is None else pane.scrollback

    def action_cursor_mode(self: Any) -> None:
        scrollback = self._cursor_scrollback()
        if scrollback is None:
            return
        if scrollback.cursor is not None:
            self._cursor_leave(scrollback)
        elif scrollback.cursor_enter():
            scrollback.focus()
        else:
            self.notify("Nothing to select here.", severity="warning")

    def _cursor_leave(self: Any, scrollback: Any) -> None:
        scrollback.cursor_leave()
        self.prompt_input.focus()

    async def action_scroll(self: Any, how: str) -> None:
        scrollback = self._cursor_scrollback()
        if scrollback is not None and scrollback.cursor is not None and how in ("page_up",
                                                                                 "page_down"):
            await scrollback.cursor_move(how)
            return
        await super().action_scroll(how)  # type: ignore[misc]

    async def on_cursor_act(self: Any, message: CursorAct) -> None:
        scrollback, item, what = message.scrollback, message.item, message.what
        if what == "leave":
            self._cursor_leave(scrollback)
            return
        allowed = applicable(scrollback, item)
        if what == "menu":
            from ikigai_tui.tui.screens.cursor_menu import CursorMenu

            async def chosen(picked: str | None) -> None:
                if picked is not None:
                    await self._cursor_run(scrollback, item, picked)

            self.push_screen(CursorMenu(f"#{item.key} · {item.kind}", allowed), chosen)
            return
        if what not in allowed:
            self.notify(f"'{what}' does not apply to #{item.key}.", severity="warning")
            return
        await self._cursor_run(scrollback, item, what)

    async def _cursor_run(self: Any, scrollback: Any, item: Any, what: str) -> None:
        key = item.key
        if what == "copy":
            self.copy_to_clipboard(item.text)
            self.notify(f"Copied #{key}: {len(item.text):,} characters.")
            return
        if what == "view":
            from ikigai_tui.tui.screens.message_view import MessageScreen
            from ikigai_tui.tui.screens.preview_rows import PreviewItem

            self.push_screen(MessageScreen(PreviewItem(key, item.kind, item.text, 0)))
            return
        text = {
            "fork": f"/fork --at {key}",
            "mark": f"/mark at-{key} --at {key}",
            "forget": "/forget --preview --ids " + ",".join(map(str, scrollback.exchange(item))),
            "pin": "/pin " + " ".join(item.text.split()),
            "restore": f"/restore {key}",
        }[what]
        if what in ("forget", "restore"):  # the context changes: the cursor's place may go
            self._cursor_leave(scrollback)
        if self.session is not None:
            await self.submitter(self.session).submit(scrollback.agent_id, text)
