"""Notices (core/notices.py): one union of every notice, subscribe and unsubscribe, and a
listener that raises cannot keep the others from hearing (issue 24)."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import ikigai_tui
from ikigai_tui.core import notices
from ikigai_tui.core.notices import AgentChanged, ErrorNotice, Notices

PACKAGE = Path(ikigai_tui.__file__).parent


def test_a_failing_listener_does_not_stop_the_others(monkeypatch):
    hub, heard, logged = Notices(), [], []
    # The module's logger, replaced: another test's logging set-up cannot hide the record.
    monkeypatch.setattr(notices, "log", type("Log", (), {
        "exception": staticmethod(lambda text, *args: logged.append(text % args))})())

    def broken(notice):
        raise RuntimeError("a broken view")

    hub.subscribe(heard.append)
    hub.subscribe(broken)
    hub.subscribe(heard.append)
    hub.notify(AgentChanged("a1"))
    assert heard == [AgentChanged("a1"), AgentChanged("a1")]
    assert logged == ["a listener failed on AgentChanged"]


def test_unsubscribe_stops_telling_and_is_idempotent():
    hub, heard = Notices(), []
    stop = hub.subscribe(heard.append)
    hub.notify(AgentChanged("a1"))
    stop()
    stop()  # twice: nothing happens
    hub.unsubscribe(print)  # never subscribed: nothing happens
    hub.notify(ErrorNotice("a1", "late"))
    assert heard == [AgentChanged("a1")]


def test_a_listener_may_unsubscribe_while_being_told():
    hub, heard = Notices(), []

    def once(notice):
        heard.append(notice)
        hub.unsubscribe(once)

    hub.subscribe(once)
    hub.subscribe(heard.append)
    hub.notify(AgentChanged("a1"))
    hub.notify(AgentChanged("a2"))
    assert heard == [AgentChanged("a1"), AgentChanged("a1"), AgentChanged("a2")]


def test_the_union_names_every_notice_class_of_the_package():
    """Every NamedTuple called *Notice anywhere in the package is in `Notice`."""
    in_union = {cls.__name__ for cls in typing.get_args(notices.Notice)}
    defined = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Notice") and any(
                    getattr(b, "id", None) == "NamedTuple" for b in node.bases):
                defined.add(node.name)
    assert "CompactionNotice" in defined
    assert defined <= in_union, defined - in_union
