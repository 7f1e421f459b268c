"""Embedding models for the local matcher (core/matching/local.py), behind the core's
Embedder protocol. Nothing here is imported at program start: numpy and the model load
on the first embed call."""

from __future__ import annotations

from ikigai_tui.embed.wordllama import WordLlamaEmbedder

__all__ = ["WordLlamaEmbedder", "default_embedder"]


def default_embedder() -> WordLlamaEmbedder:
    """The embedder the program uses; cheap to make (the model loads on first use)."""
    return WordLlamaEmbedder()
