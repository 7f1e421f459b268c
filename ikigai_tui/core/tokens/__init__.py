"""Tokens: encoders, counting (kept counts), limits, the sliding window and its words."""
