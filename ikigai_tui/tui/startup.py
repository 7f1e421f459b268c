"""What the app does once its first frame is drawn (a mixin of IkigaiApp, tui/app.py):
replay every agent, attach the reviewers, warm litellm and the lexers up.

Nothing of it runs before: a busy thread (the replay of 100,000 messages, an import)
takes half the event loop's time while it runs (the GIL), which would draw the first
frame late, in long stalls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.ports import StoreError
from ikigai_tui.tui.warmup import languages, preload_lexers, start_markdown

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session
    from ikigai_tui.tui.panes import Panes


class AfterFirstFrame:
    # Held by IkigaiApp (declared here for readers and type checkers).
    session: Session | None
    focused_agent: str | None
    panes: Panes

    def _after_first_frame(self) -> None:
        """Called by on_mount after the first refresh (see the module's docstring)."""
        # Exact token counts (OpenAI models) from a worker process: building tiktoken's
        # tables here would freeze the screen (core/encoders.py); before the first count.
        from ikigai_tui.llm import token_worker

        token_worker.install()
        self.schedule_refresh()
        self.run_worker(self._load_agents(), group="load", exclusive=True)
        start_markdown()  # for the first reply (a page without replies drew no Markdown)
        # The "ask" settings' dialogs (memory diffs, compaction): after the first frame,
        # as their modules are not needed for it; no turn can have started before then.
        from ikigai_tui.tui.submit import attach_reviewers  # the command path's modules

        attach_reviewers(self, self.session)
        self._preload_provider()
        pane = self.panes.active
        if pane is not None:  # the code blocks drawn next (the page's other items)
            preload_lexers(languages(item.text for item in pane.scrollback.items))

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
