"""The errors a command raises: its message is one line, shown after `Error: `."""


class CommandError(Exception):
    """A command that cannot run; the message is one line, shown after `Error: `."""


class UsageError(CommandError):
    """Bad arguments; the dispatcher appends the usage line."""
