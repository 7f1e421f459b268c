"""ikigai-tui: a terminal workbench for long-running LLM conversations."""

__version__ = "0.1.0"
