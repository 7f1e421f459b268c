"""A conversation of several topics in a real store, and an embedder that counts its calls,
for the local matcher's tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ikigai_tui.core.events import AgentRecord, WriteBatch, message_text
from ikigai_tui.core.matching import Candidate
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.embed import WordLlamaEmbedder

# Exchanges: cooking (2), football (2), the database (2, one with a tool round), travel (2),
# and one of made-up words. No message says "food", "meal", "soccer", "sport" or "astronomy".
CONVERSATION: list[tuple[str, str]] = [
    ("user", "Can you suggest a recipe for a quick weeknight dinner?"),
    ("assistant", "Try a stir-fry: slice chicken, peppers and onions, fry them in a hot pan "
                  "with garlic, soy sauce and ginger, and serve over rice."),
    ("user", "How long should I roast potatoes in the oven?"),
    ("assistant", "Cut them into chunks, toss with olive oil and salt, and roast at 200 C for "
                  "about 40 minutes, turning once."),
    ("user", "Which league has the best football teams this season?"),
    ("assistant", "The Premier League is very competitive this season; several clubs are "
                  "fighting for the title and the top four places."),
    ("user", "Who scored the winning goal in the cup final?"),
    ("assistant", "The striker headed in a corner in extra time, and the goalkeeper saved a "
                  "penalty earlier in the match."),
    ("user", "Let's design the database schema for the orders service."),
    ("assistant", "Create tables orders and customers, with a foreign key from "
                  "orders.customer_id to customers.id."),
    ("tool_call", '{"query": "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER)"}'),
    ("tool_result", "Table created."),
    ("assistant", "The orders table is ready; next the customers table."),
    ("user", "Add an index on the customer id column and a migration for it."),
    ("assistant", "Added CREATE INDEX orders_customer ON orders(customer_id) in migration 0002."),
    ("user", "What should I pack for a week of hiking in the mountains?"),
    ("assistant", "Bring layers, a waterproof jacket, sturdy boots, a map, a first-aid kit "
                  "and enough water."),
    ("user", "Is it better to take the train or fly to Rome?"),
    ("assistant", "The train is slower but goes from city centre to city centre; flying is "
                  "faster for long distances."),
    ("user", "Rename the frobnicator in the quuxbar module."),
    ("assistant", "Done: it is now called the widget loader."),
]
# The exchanges, as (first, last) positions in CONVERSATION.
COOKING = [(0, 1), (2, 3)]
FOOTBALL = [(4, 5), (6, 7)]
DATABASE = [(8, 12), (13, 14)]
MADE_UP = [(19, 20)]


class CountingEmbedder:
    """The real embedder, counting calls and texts."""

    def __init__(self, inner: WordLlamaEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> tuple[Any, Any]:
        self.calls.append(len(texts))
        return self.inner.embed(texts)

    def word_vectors(self, words: Sequence[str]) -> Any:
        return self.inner.embed(words)[0]  # single words, not counted as texts embedded


async def conversation_store(path: Path) -> tuple[Store, list[Candidate]]:
    store = await Store.open(path)
    batch = WriteBatch()
    batch.new_agents.append(AgentRecord("a", None, "a", "offline", "idle", 0.0, None))
    for kind, text in CONVERSATION:
        batch.add("a", kind, {"name": "sql", "arguments": text} if kind == "tool_call"
                  else {"content": text})
    events = await store.write(batch)
    return store, [Candidate(e.id, e.kind, message_text(e.kind, e.payload)) for e in events]


def ids_of(cands: list[Candidate], spans: list[tuple[int, int]]) -> set[int]:
    return {cands[i].id for first, last in spans for i in range(first, last + 1)}
