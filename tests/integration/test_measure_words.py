"""One measure, one word (issue 23, item 7): an agent has two sizes, what is *sent* (the
request, inside the window) and its *history* (the turns the window pruned included,
what auto-compaction measures). The gauge, the warning, `/context` and `ikigai context`
name each the same way everywhere, so "Context at 113% (2.2K of 2K budget)" never again
sits above "Context: ~1.6K of 2K window". Over a real session on the offline model."""

from __future__ import annotations

import math
import re

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from ikigai_tui.tui.widgets.gauge import gauge_text
from tests.integration.session_helpers import talk

BUDGET = 2_700  # the system prompt and the tools take ~1,370 of it
# A first turn under compact_warn (80%), then one that takes the history over the window
# while the window prunes the first: sent fits the window, history does not.
TURNS = (450, 700)
LABELLED = re.compile(r"\b(Context|Sent|History|history)\b(?:: | at \d+% \(| )~?([\d.]+[KM]?)")


def labelled(*texts: str) -> dict[str, set[str]]:
    """Each size-word shown and the figures it names, across `texts`."""
    named: dict[str, set[str]] = {}
    for text in texts:
        for word, figure in LABELLED.findall(text):
            named.setdefault(word.lower(), set()).add(figure)
    return named


async def test_sent_and_history_have_one_name_each_everywhere(db_path):
    store = await Store.open(db_path)
    session = await Session.open(store, Providers(), SessionSettings(budget=BUDGET))
    try:
        notices: list[CompactionNotice] = []
        session.listeners.append(
            lambda n: notices.append(n) if isinstance(n, CompactionNotice) else None)
        root = session.tree.root.id
        for words in TURNS:
            await talk(session, root, " ".join(f"w{i}" for i in range(words)))
        w = await session.measure(root)
        history = w.tokens + w.outside
        assert w.pruned_turns == 1 and w.tokens <= BUDGET < history, w  # the case of the issue
        sent, whole = format_tokens(w.tokens), format_tokens(history)

        [warning] = [n.text for n in notices if n.kind == "warning"]
        share = math.floor(100 * history / BUDGET)
        assert warning == (f"History {whole} over the 2.7K window ({share}%), {sent} sent: "
                           "/compact or /forget to make room")
        gauge = gauge_text(w.tokens, w.limit, w.percent, w.exact, w.budget, w.pruned_turns).plain
        assert gauge.startswith(f"Sent: ~{sent} of 2.7K window · 1% of 200K"), gauge

        shown = (await session.command(root, "/context")).lines
        assert shown[0].startswith(f"Sent: ~{sent} of 2.7K window · 1% of 200K, normal"), shown[0]
        assert f"  history        {history:>9,}  (sent + outside window)" in shown
        assert any(line.startswith("Window: 2,700 tokens; starts at message ") for line in shown)

        # One word, one figure: no word names two sizes, no size has two words.
        named = labelled(warning, gauge, shown[0])
        assert named == {"sent": {sent}, "history": {whole}}, named
        assert sent != whole

        data = await context_data(session, session.tree[root])
        assert (data["sent"], data["history"]) == (w.tokens, history)
        assert (data["tokens"], data["budget"]) == (w.tokens, BUDGET)  # kept: only added
    finally:
        await session.close()
        await store.close()
