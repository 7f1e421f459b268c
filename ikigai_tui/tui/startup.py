"""What the app does once its first frame is drawn (a mixin of IkigaiApp, tui/app.py):
replay every agent, attach the reviewers, warm the lexers up; and once it is ready
(every agent replayed, the gauge refreshed after that), warm litellm up.

Nothing of it runs before: a busy thread (the replay of 100,000 messages, an import)
takes half the event loop's time while it runs (the GIL), which would draw the first
frame late, in long stalls. litellm's warm-up waits for the app to be ready for the
same reason: its import holds the GIL for seconds in all, in a thread beside the replay
and the reading of kept counts that the gauge's exact count waits for (a log of 100,000
messages on openai/gpt-4o was ready in 4.2 s with a key, 0.9 s without; and the RSS at
ready counted litellm's heap as far as its import had got). A first message is seconds
of typing away: the warm-up is done by then, and one sent sooner loads litellm on its
way, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ikigai_tui.core.ports import StoreError
from ikigai_tui.tui.warmup import languages, preload_lexers, start_markdown

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session
    from ikigai_tui.tui.panes import Panes


class AfterFirstFrame:
    # Held by IkigaiApp (declared here for readers and type checkers).
    session: Session | None
    first_frame: Callable[[], None]
    focused_agent: str | None
    panes: Panes
    _agents_loaded = False  # _load_agents has replayed every agent
    _provider_warmed = False  # _preload_provider has run (once the app is ready)

    def _after_first_frame(self) -> None:
        """Called by on_mount after the first refresh (see the module's docstring)."""
        # What the composition root asks for now: exact token counts (OpenAI models) from
        # a worker process (llm/token_worker.py), as building tiktoken's tables here would
        # freeze the screen (core/tokens/encoders.py); before the first count.
        self.first_frame()
        self.schedule_refresh()
        self.run_worker(self._load_agents(), group="load", exclusive=True)
        start_markdown()  # for the first reply (a page without replies drew no Markdown)
        # The "ask" settings' dialogs (memory diffs, compaction): after the first frame,
        # as their modules are not needed for it; no turn can have started before then.
        from ikigai_tui.tui.submit import attach_reviewers  # the command path's modules

        attach_reviewers(self, self.session)
        pane = self.panes.active
        if pane is not None:  # the code blocks drawn next (the page's other items)
            preload_lexers(languages(item.text for item in pane.scrollback.items))

    def _after_refresh(self) -> None:
        """Called by _refresh once it has updated the gauge: when every agent is replayed
        too, the app is ready, and litellm is warmed up (see the module's docstring)."""
        if self._agents_loaded and not self._provider_warmed:
            self._provider_warmed = True
            self._preload_provider()

    def _preload_provider(self) -> None:
        """After the first frame: warm litellm up for the focused agent's model, in its own
        thread (llm/litellm_thread.py); never for the offline model."""
        preload = getattr(self.session.providers, "preload", None) if self.session else None
        agent = self.session.tree[self.focused_agent] if preload and self.focused_agent else None
        if agent is not None:
            preload(self.session.model_of(agent))

    async def _load_agents(self) -> None:
        """After the first paint, replay every agent so the tree can show its usage."""
        session = self.session
        assert session is not None
        for agent in list(session.tree):
            if agent.replayer is None:
                try:
                    await session.replayer(agent.id)
                except StoreError as exc:
                    self._log_unreadable(exc)
                    return
                self.schedule_refresh()
        self._agents_loaded = True
        self.schedule_refresh()  # at whose end litellm is warmed up (_after_refresh)
