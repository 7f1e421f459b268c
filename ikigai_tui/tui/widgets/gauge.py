"""The context gauge: ``Sent: ~1.9K of 2K window · 1% of 200K`` for the focused agent
(the words: core/tokens/words.py).

The state (``normal`` / ``warning`` / ``critical`` / ``full``) is one CSS class at a time,
``-normal`` ... ``-full``; colours live in ``styles/widgets.tcss``.
"""

from __future__ import annotations

from rich.text import Text

from ikigai_tui.core.tokens.limits import STATES, format_tokens
from ikigai_tui.core.tokens.words import SENT_LABEL, sent_line
from ikigai_tui.tui.fit import fit_parts
from ikigai_tui.tui.widgets.one_line import OneLine

__all__ = ["STATES", "ContextGauge", "format_tokens", "gauge_text"]

_STATE_CLASSES = tuple(f"-{state}" for state in STATES)


def gauge_text(
    tokens: int,
    limit: int,
    percent: float,
    exact: bool,
    budget: int = 0,
    pruned_turns: int = 0,
    width: int | None = None,
) -> Text:
    """The gauge's line as plain rich Text (the italic tail carries a style):
    ``Sent: ~1.9K of 2K window · 1% of 200K · 3 turns pruned``. The figures are
    rounded as /context rounds them (core/tokens/limits.py); `percent` only picks the state.
    Within `width` cells, whole phrases are dropped (fit.py): with a window, the share of
    the model's limit first (the window is the nearer bound), then from the end."""
    parts = sent_line(tokens, limit, budget, exact).split(" · ")
    pruned = f"{pruned_turns:,} turn{'s' if pruned_turns != 1 else ''} pruned"
    if pruned_turns > 0:
        parts.append(pruned)
    drop = (1,) if budget > 0 and limit > 0 and len(parts) > 2 else ()
    line = " · ".join(parts) if width is None else fit_parts(parts, width, drop)
    text = Text(line)
    if pruned_turns > 0 and line.endswith(pruned):
        # Set apart in italic, not dim: dimmed, it fell to 2.7:1 in light themes.
        text.stylize("italic", len(line) - len(pruned))
    return text


class ContextGauge(OneLine):
    """One line; always visible for the focused agent."""

    DEFAULT_CSS = """
    ContextGauge {
        height: 1;
        width: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes, markup=False)
        self._shown: tuple | None = None
        self.set_unknown()

    def update_usage(
        self,
        tokens: int,
        limit: int,
        percent: float,
        state: str,
        exact: bool,
        budget: int = 0,
        pruned_turns: int = 0,
    ) -> None:
        key = (tokens, limit, percent, state, exact, budget, pruned_turns)
        if key == self._shown:
            return
        self._shown = key
        self._set_state(state)
        self.update(gauge_text(tokens, limit, percent, exact, budget, pruned_turns))

    def set_unknown(self) -> None:
        """While the focused agent is still loading."""
        if self._shown == ("unknown",):
            return
        self._shown = ("unknown",)
        self._set_state("normal")
        self.update(Text(f"{SENT_LABEL}: …"))

    def render(self) -> Text:
        """The line (`content`, in full) fitted to the width it has now: a narrow pane,
        the key panel open."""
        if self._shown is None or len(self._shown) == 1:
            return Text(f"{SENT_LABEL}: …")
        tokens, limit, percent, _state, exact, budget, pruned_turns = self._shown
        return gauge_text(tokens, limit, percent, exact, budget, pruned_turns,
                          self.content_size.width or None)

    @property
    def state(self) -> str:
        for state in STATES:
            if self.has_class(f"-{state}"):
                return state
        return "normal"

    def _set_state(self, state: str) -> None:
        if state not in STATES:
            state = "normal"
        wanted = f"-{state}"
        self.set_class(True, wanted)
        for cls in _STATE_CLASSES:
            if cls != wanted:
                self.set_class(False, cls)
