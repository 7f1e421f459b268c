"""Dependency-free helpers every layer may use: inert text, heap tuning, private
folders, the debug log."""
