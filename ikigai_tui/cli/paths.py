"""`ikigai paths`: where the program keeps its files (whether they exist yet or not)."""

from __future__ import annotations

import sys

from ikigai_tui.cli.print_mode import Channel
from ikigai_tui.config import Config, memories_dir
from ikigai_tui.support.diagnostics import default_log_dir
from ikigai_tui.support.inert import dumps


def locations(config: Config) -> dict[str, str]:
    return {"config": str(config.config_path), "database": config.db_shown,
            "memories": str(memories_dir()), "logs": str(default_log_dir())}


def paths(config: Config, *, as_json: bool = False) -> int:
    out = Channel(sys.stdout)
    found = locations(config)
    if as_json:
        out.line(dumps(found, indent=2))
        return 0
    width = max(map(len, found))
    for name, path in found.items():
        out.line(f"{name + ':':<{width + 1}} {path}")
    return 0
