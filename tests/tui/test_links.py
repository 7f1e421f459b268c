"""Links in a reply: the real target of every clickable link is on screen.

`[https://bank.example/login](http://evil.example/phish)` must not read as the bank and
open the phishing page: the target is shown after the text, and only what reads exactly
as a link's target carries it (an OSC 8 hyperlink on the terminal)."""

from __future__ import annotations

from rich.console import Console
from rich.segment import Segment
from rich.style import Style

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.tui.links import unlink_hidden
from ikigai_tui.tui.render import render_item
from ikigai_tui.tui.transcript import Item

from .conftest import SIZE, idle, root_id, say, settle

PHISH = "Log in at [https://bank.example/login](http://evil.example/phish) now."


def _draw(text: str, width: int = 60) -> list:
    console = Console(width=width, force_terminal=True)
    return list(render_item(console, Item(1, "assistant", text), width))


def _links(strips) -> dict[str, str]:
    """Each link target -> the text of the cells that carry it, in reading order."""
    found: dict[str, str] = {}
    for strip in strips:
        for segment in strip:
            link = segment.style.link if segment.style is not None else None
            if link:
                found[link] = found.get(link, "") + segment.text
    return found


def _text(strips) -> str:
    return " ".join(strip.text.strip() for strip in strips)


def test_a_link_whose_text_is_another_url_shows_its_real_target():
    strips = _draw(PHISH)
    shown = _text(strips)
    assert "https://bank.example/login (http://evil.example/phish)" in shown
    links = _links(strips)
    # Only the target itself is clickable; the bank's address is plain text.
    assert links == {"http://evil.example/phish": "http://evil.example/phish"}


def test_every_link_reads_as_its_target_whatever_its_text():
    text = ("[bank.example](http://evil.example/a) [**click here**](http://evil.example/b) "
            "[`https://bank.example`](http://evil.example/c) [bänk](https://bänk.example/) "
            "[x](javascript:alert(1))")
    strips = _draw(text)
    shown = _text(strips)
    for target in ("http://evil.example/a", "http://evil.example/b", "http://evil.example/c",
                   "https://xn--bnk-qla.example/"):  # a look-alike host in its real form
        assert f"({target})" in shown, shown
    links = _links(strips)
    assert links and all(cells.strip() == target for target, cells in links.items()), links
    assert "javascript" not in "".join(links)  # refused by the parser: plain text


def test_a_link_that_shows_its_own_target_stays_clickable_even_wrapped():
    url = "https://docs.example/a/long/path/" + "segment/" * 12
    strips = _draw(f"See <{url}> and [{url}]({url}).", width=50)
    assert _text(strips).count("docs.example") == 2  # shown once each, no "(url)" added
    links = _links(strips)
    assert set(links) == {url}
    assert links[url] == url * 2


def test_the_guard_unlinks_cells_that_do_not_read_as_their_target():
    evil = Style(link="http://evil.example/")
    lines = [[Segment("https://bank.example/", evil), Segment(" ok ")],
             [Segment("http://evil.example/", evil)]]
    out = unlink_hidden(lines)
    # The bank's address loses the link; the cells that read as the target keep it.
    assert [s.style.link if s.style else None for line in out for s in line] == \
        [None, None, "http://evil.example/"]
    assert [s.text for line in out for s in line] == [s.text for line in lines for s in line]


async def test_the_app_shows_the_target_of_a_reply_link(bench):
    async with bench.prep() as session:
        await say(session, root_id(session), "Where do I log in?")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        batch = WriteBatch()
        batch.add(app.focused_agent, "assistant", {"content": PHISH})
        await app.session.commit(batch)
        await idle(pilot)
        strips = list(app.panes.active.scrollback._lines)
        assert "https://bank.example/login (http://evil.example/phish)" in _text(strips)
        assert _links(strips) == {"http://evil.example/phish": "http://evil.example/phish"}
