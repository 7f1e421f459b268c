"""The full-screen application: agent tree, scrollbacks, gauge, input.

The app holds no state the core does not hold: it shows the session and hands it the
user's input. Session notices arrive as plain records on the same event loop; the app
turns each into a Textual message (tui/messages.py) for the widget that reacts to it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding

from ikigai_tui.config import Config
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import Notice, StoreTrouble, TurnFinished
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.session import Session
from ikigai_tui.core.ports import StoreError
from ikigai_tui.core.tokens.window import CONTEXT_FULL
from ikigai_tui.support.heap import freeze_at_start, trim
from ikigai_tui.tui.cursor_actions import CursorActions
from ikigai_tui.tui.find_bar import FindActions
from ikigai_tui.tui.actions import MainScreenActions
from ikigai_tui.tui.attention import Attention
from ikigai_tui.tui.completion import SlashCommands, completions
from ikigai_tui.tui.editor import EditorAction
from ikigai_tui.tui.history import typed_history
from ikigai_tui.tui.main_screen import MainScreen
from ikigai_tui.tui import bindings
from ikigai_tui.tui.keymap import check_keymap, help_bindings, key_names
from ikigai_tui.tui.keys import key_name
from ikigai_tui.tui.messages import AgentsChanged, LogUnreadable, changes_agents, pane_message
from ikigai_tui.tui.outbox import Outbox, QueueActions, QueuedLine
from ikigai_tui.tui.panes import MAX_PANES, Panes
from ikigai_tui.tui.status import StatusLine, status_text
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.terminal import StopOnSignal
from ikigai_tui.tui.news import NewsToasts
from ikigai_tui.tui.ui_state import PlaceKeeper, ThemeKeeper, start_theme
from ikigai_tui.tui.usage_plans import UsagePlans
from ikigai_tui.tui.widgets.agent_tree import AgentTreeView
from ikigai_tui.tui.widgets.gauge import ContextGauge
from ikigai_tui.tui.widgets.keybar import KeyBar
from ikigai_tui.tui.widgets.prompt import PromptInput
from ikigai_tui.tui.widgets.styled_lines import BareHorizontal, BareVertical
from ikigai_tui.tui.widgets import strip_cycles
from ikigai_tui.tui.startup import AfterFirstFrame
from ikigai_tui.tui.warmup import markdown_ready
from ikigai_tui.tui.zoom import PaneZoom

if TYPE_CHECKING:
    from ikigai_tui.tui.submit import SubmitController

SessionFactory = Callable[[Config], Awaitable[Session]]
SessionCloser = Callable[[Session], Awaitable[None]]


class IkigaiApp(AfterFirstFrame, StopOnSignal, EditorAction, CursorActions, MainScreenActions,
                QueueActions, NewsToasts, Attention, PaneZoom, FindActions, App[None]):
    CSS_PATH = [stylesheet("app.tcss"), stylesheet("widgets.tcss")]
    TITLE = "ikigai"
    COMMANDS = App.COMMANDS | {SlashCommands}
    BINDINGS = bindings.APP  # each with an id, for the [keymap] (tui/keymap.py)

    def __init__(self, config: Config, *, session_factory: SessionFactory,
                 session_closer: SessionCloser, first_frame: Callable[[], None] = lambda: None,
                 db_label: str | None = None, model_override: str | None = None) -> None:
        """Handed by the composition root (runtime.create_app): `session_factory` opens the
        session the app shows, `session_closer` closes it and its store, `first_frame`
        runs once the first frame is drawn (the token worker's install)."""
        super().__init__()
        freeze_at_start()
        strip_cycles.install()  # painted lines freed when dropped, not by the collector
        self.config = config
        self.open_session = session_factory
        self.close_session = session_closer
        self.first_frame = first_frame
        self.model_override = model_override
        self.session: Session | None = None
        self.focused_agent: str | None = None
        self.db_label = db_label or config.db_shown
        self.store_trouble: str | None = None  # the database's server lost (StoreTrouble)
        self._refresh_pending = False
        self._refreshing = False
        self._trimmed = False
        self._refresh_again = False
        self.panes = Panes()
        self.outbox = Outbox()
        self.usage_plans = UsagePlans()  # each agent's window, planned again when stale
        self._start_attention(config)  # news no pane showed, who needs you (tui/attention.py)
        self._news_toast = None  # the news toast shown (tui/news.py)
        self.show_outside = True  # the scrollbacks' toggles (F8, F9), for every pane
        self.show_ids = False
        self.startup_error: str | None = None
        # The user's theme and keys; a bad one is a ConfigError before anything starts.
        self.keymap = check_keymap(config)
        self.set_keymap(self.keymap)
        self.key_names = key_names(  # by binding id, as the welcome and the scrollback say them
            [*bindings.APP, *bindings.INPUT], self.keymap)
        theme = start_theme(config, self.available_themes)
        if theme is not None:
            self.theme = theme
        self._histories: dict[str, list[str]] = {}  # agent id -> what was typed to it
        self._history_agent: str | None = None
        self.place_keeper = PlaceKeeper(self, config)  # where the user left off
        self.tree_width: int | None = self.place_keeper.tree_width()  # None: the CSS's

    def get_key_display(self, binding: Binding) -> str:
        """Keys as they are pressed ("Ctrl+T", "Esc", "PgUp"), not Textual's "^t": the
        footer and the palette's key panel name them as the welcome and Help do."""
        return binding.key_display or key_name(binding.key)

    def get_default_screen(self) -> MainScreen:
        return MainScreen()

    crash: tuple[str, object] | None = None  # (what failed, the log with its traceback)
    worker_errors_as_notices: bool | None = None  # None: yes, but not under Pilot

    def _handle_exception(self, error: Exception) -> None:
        from ikigai_tui.tui.crash import handle

        if not handle(self, error):  # logged; a worker's is a notice, the rest ends the app
            super()._handle_exception(error)

    async def on_load(self) -> None:
        """Open the log before the terminal switches to the full screen.

        The first frame then already holds the focused agent's latest page (one frame
        drawn, not an empty one and then another), and a database that cannot be opened
        ends the program with one line on the ordinary terminal.
        """
        self.catch_stop_signals()
        try:
            self.session = session = await self.open_session(self.config)
        except (StoreError, ProviderError, CommandError) as exc:
            self.startup_error = str(exc)  # the CLI prints it, unwrapped, after the run
            self.exit(return_code=1)
            return
        root = session.tree.root
        assert root is not None
        # The place left last time on this database; agents gone since fall back to the root.
        shown, active = self.place_keeper.place(lambda a: a in session.tree, root.id, MAX_PANES)
        self.focused_agent = shown[active]
        self._attention_ready(session, shown)
        try:
            override = self.model_override
            if override and session.model_of(root) != session.models.resolved(override):
                await session.command(root.id, f"/model {override}")
            await self.panes.start(session, shown, active)
            # From here on the panes are told (what came before is in the page they read).
            session.subscribe(self._on_notice)
            if any(i.kind == "assistant" for p in self.panes.panes for i in p.scrollback.items):
                await markdown_ready()  # its replies are Markdown: imported in a thread first
        except StoreError as exc:  # a damaged page or a full disk, met while loading
            self.startup_error = str(exc)
            self.session = None
            await self.close_session(session)
            self.exit(return_code=1)

    def compose(self) -> ComposeResult:
        self.status_line = StatusLine(id="status")
        self.agent_tree = AgentTreeView(id="tree", hide_dead=self.attention_keeper.hide_dead)
        self.gauge = ContextGauge(id="gauge")
        self.prompt_input = PromptInput(completer=self._complete, recall=self.take_back,
                                        id="prompt", menu=True)
        self.prompt_input.use_keymap(self.keymap)
        self.queued_line = QueuedLine(id="queued")
        yield self.status_line
        with BareHorizontal(id="body"):
            yield self.agent_tree
            with BareVertical(id="main"):
                yield self.panes
                yield self.gauge
                yield self.queued_line
                yield self.prompt_input
        yield KeyBar()

    def on_mount(self) -> None:
        self.theme_keeper = ThemeKeeper(self, self.config)
        self.fit_tree()
        if self.session is None:
            return
        self._show_status()
        self.prompt_input.focus()
        self.call_after_refresh(self._after_first_frame)

    async def on_unmount(self) -> None:
        # Workers still reading the log must stop before the database closes under them.
        self.workers.cancel_all()
        for worker in list(self.workers):
            with contextlib.suppress(Exception):
                await worker.wait()
        if self.session is not None:
            session, self.session = self.session, None
            with contextlib.suppress(Exception):
                await self.close_session(session)

    # -- session notices ---------------------------------------------------------

    def _on_notice(self, notice: Notice) -> None:
        """Each notice becomes a message for the widget that reacts to it: what a pane
        shows goes to the panes (one queue keeps a reply's pieces before its events)."""
        message = pane_message(notice)
        if message is not None:
            self.panes.post_message(message)
        if self.session is not None:
            self.usage_plans.mark(notice, self.session)
            self._tell_news(notice, self.session)
            self._heed(notice)
        if changes_agents(notice):
            self.post_message(AgentsChanged())
        if isinstance(notice, StoreTrouble):  # the status line says it until it is over
            self.store_trouble = notice.line
            self._show_status()
        if isinstance(notice, TurnFinished) and notice.agent_id in self.outbox:
            self.run_worker(self.send_queued(notice.agent_id, notice.ok), group="queued")

    def on_agents_changed(self, _message: AgentsChanged) -> None:
        self.schedule_refresh()

    def schedule_refresh(self) -> None:
        """Coalesce many notices into one update of the tree, gauge, titles and rules."""
        if not self._refresh_pending:
            self._refresh_pending = True
            self.set_timer(0.03, self._start_refresh)

    def _start_refresh(self) -> None:
        # In a worker, not in the timer's callback: a first refresh can wait a second for
        # an agent's replay (400,000 events), and a callback would hold every key press
        # for that long. One refresh at a time; a request meanwhile runs once more after.
        if self._refreshing:
            self._refresh_pending, self._refresh_again = False, True
            return
        self._refreshing = True
        self.run_worker(self._refresh_while_asked(), group="refresh")

    async def _refresh_while_asked(self) -> None:
        try:
            while True:
                self._refresh_again = False
                await self._refresh()
                if not self._refresh_again:
                    return
        except StoreError as exc:
            self._log_unreadable(exc)
        finally:
            self._refreshing = False

    def on_log_unreadable(self, message: LogUnreadable) -> None:
        message.stop()
        self._log_unreadable(message.error)

    def _log_unreadable(self, exc: Exception) -> None:
        """A damaged page met while replaying: leave with its one line (the command line
        prints it once the terminal is restored); everything committed is on disk."""
        self.startup_error = str(exc)
        self.exit(return_code=1)

    async def _refresh(self) -> None:
        self._refresh_pending = False
        session = self.session
        if session is None or self.focused_agent is None:
            return
        focused = session.tree[self.focused_agent]
        if self._history_agent != focused.id:  # the input walks this agent's history
            self._history_agent = focused.id
            if focused.id not in self._histories:
                self._histories[focused.id] = await typed_history(session, focused.id)
            self.prompt_input.use_history(self._histories[focused.id])
        # Planned: the agents on screen, and those whose window changed (usage_plans.py).
        shown = await self.usage_plans.refresh(
            session, [focused.id, *(pane.agent_id for pane in self.panes.all())])
        window = shown[focused.id]
        self.gauge.update_usage(window.tokens, window.limit, window.percent, window.state,
                                window.exact, window.budget, window.pruned_turns)
        self.prompt_input.set_blocked(CONTEXT_FULL if window.state == "full" else None)
        self._show_status()
        await self.panes.refresh_titles_and_rules(shown)
        self._after_refresh()
        if not self._trimmed:  # the first read the log: what it freed goes back (support/heap.py)
            self._trimmed = trim()

    def _show_status(self) -> None:
        """The status line and the tree, from what is known without waiting."""
        session = self.session
        if session is None or self.focused_agent is None:
            return
        tree = session.tree
        focused = tree[self.focused_agent]
        self.status_line.update(status_text(tree.label(focused.id), session.model_of(focused),
                                            self.db_label, self.store_trouble))
        self.agent_tree.refresh_agents(self.tree_rows(session), focused.id)

    # -- input -------------------------------------------------------------------

    def _complete(self, before: str) -> list[str]:
        return completions(self.session, self.focused_agent, before)

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        """To the agent of the active pane (the one the user sees as active)."""
        pane = self.panes.active
        agent_id = pane.agent_id if pane is not None else self.focused_agent
        if self.session is None or agent_id is None:
            return
        await self.submitter(self.session).submit(agent_id, message.text)

    def submitter(self, session: Session) -> SubmitController:
        """Enter's controller (tui/submit.py), handed the dialogs it opens (by a proposal's
        presentation kind, tui/screens/dialogs.py). Loaded with the command path, after
        the first frame."""
        from ikigai_tui.tui.screens.dialogs import SCREENS
        from ikigai_tui.tui.submit import SubmitController

        return SubmitController(self, session, SCREENS, self.doings)

    async def show_end(self) -> None:
        """Bring the active pane to its end (where what is sent shows)."""
        pane = self.panes.active
        if pane is not None and not (pane.scrollback.following and pane.scrollback.at_end):
            await pane.scrollback.action_scroll_end()

    def on_key(self, event: events.Key) -> None:
        """A character typed while the tree or a pane has the focus goes to the input."""
        if (event.is_printable and event.character and event.character != " "
                and self.screen is self.screen_stack[0] and self.focused is not self.prompt_input):
            event.stop()
            self.prompt_input.focus()
            self.prompt_input.insert(event.character)

    def note(self, kind: str, text: str) -> None:
        """A line in the focused pane that is not part of the log (an error that wrote nothing)."""
        pane = self.panes.active
        if pane is not None:
            self.panes.add_note(pane.agent_id, kind, text)

    def start_command(self, name: str) -> None:
        self.prompt_input.text = f"/{name} "
        self.prompt_input.move_cursor(self.prompt_input.document.end)
        self.prompt_input.focus()

    async def on_agent_tree_view_selected(self, message: AgentTreeView.Selected) -> None:
        await self.focus_agent(message.agent_id)
        self.prompt_input.focus()  # chosen: back to typing, to that agent

    async def focus_agent(self, agent_id: str) -> None:
        if self.session is None or agent_id not in self.session.tree:
            return
        self.focused_agent = agent_id
        await self.panes.show(agent_id)
        self.show_queued()
        self.schedule_refresh()

    # -- actions -----------------------------------------------------------------

    async def action_stop_reply(self) -> None:
        """Esc: closes the key panel (the palette's "Keys"); from the tree or a pane, back to
        the input; in the input, take back the queued message if there is one, else stop
        the reply."""
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
            return
        if self.focused is not self.prompt_input:
            self.prompt_input.focus()
            return
        queued = self.take_back()
        if queued is not None:
            self.prompt_input.put_back(queued)
            return
        if self.session is not None and self.focused_agent is not None:
            await self.session.cancel_turns([self.focused_agent])

    def action_help(self) -> None:
        from ikigai_tui.tui.screens.help import HelpScreen, help_keys
        from ikigai_tui.core.commands.registry import REGISTRY

        commands = [(s.usage, s.summary, s.llm) for s in REGISTRY]
        main = help_bindings()  # the app's, the input's, the palette's, the tree's
        self.push_screen(HelpScreen(commands, help_keys(main, self.keymap)))

    def on_resize(self, _event: events.Resize) -> None:
        self.fit_tree()  # a chosen width leaves the panes room in a smaller terminal too

    def on_panes_active_changed(self, message: Panes.ActiveChanged) -> None:
        shown = [p.agent_id for p in self.panes.all()]
        self.place_keeper.keep_place(shown, self.panes.index)
        if self.unseen.seen(shown):
            self.schedule_refresh()  # their badges go
        if message.agent_id != self.focused_agent:
            self.focused_agent = message.agent_id
            self.show_queued()
            self.schedule_refresh()


__all__ = ["IkigaiApp", "CommandError", "ProviderError"]
