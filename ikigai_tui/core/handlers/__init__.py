"""The command handlers, one module per family of commands (core/commands/parse/registry.py
names each one; it is imported when its command first runs)."""
