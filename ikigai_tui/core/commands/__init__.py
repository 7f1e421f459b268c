"""Slash commands: parse, the registry, the bus that runs them, proposals; handlers/
holds one module per family of commands."""
