"""The errors of the settings: a bad setting, or a command-line value that cannot be used."""

from __future__ import annotations


class ConfigError(Exception):
    """A bad setting; the message names where it came from. Exit status 2."""


class OptionError(ConfigError):
    """A command-line value that cannot be used (an unknown agent, a script that cannot
    be read): reported like a bad setting, before anything is written."""
