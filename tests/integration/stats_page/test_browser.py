"""The HTML stats page as a real browser sees it: headless Chromium renders it (a screenshot and
the DOM after parsing), and, with `stats admin`, submits the page's own admin form (tick a
server, choose an action, Apply) the way an operator does, through the Chrome DevTools
Protocol. The server states are read back through the stats socket."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urlsplit


import sluice_harness as h
from stats_browser import png_info
from stats_layout import PROXIES, SERVER_STATES

# The <select name=action> of HAProxy's admin form, in page order ("" is the empty choice).
ADMIN_ACTIONS = ["", "ready", "drain", "maint", "dhlth", "ehlth", "hrunn", "hnolb", "hdown",
                 "dagent", "eagent", "arunn", "adown", "shutdown"]
DONE_TEXT = "Action processed successfully."
STATUS_WORDS = re.compile(r"\b(UP|DOWN|MAINT|DRAIN|NOLB)\b|no check")


# ----------------------------------------------------------------------------------------------
# The DOM Chromium dumps
# ----------------------------------------------------------------------------------------------

class PageParser(HTMLParser):
    """Collects from serialized HTML: the table rows (each a list of cell texts; a cell's text
    includes what nested elements such as tooltips hold), the page text, and the form
    controls."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self.inputs: list[dict] = []
        self.selects: list[dict] = []
        self.forms: list[dict] = []
        self._rows: list[list[str]] = []
        self._cells: list[list[str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":
            self._rows.append([])
        elif tag in ("td", "th"):
            self._cells.append([])
        elif tag == "input":
            self.inputs.append(a)
        elif tag == "select":
            self.selects.append(a)
        elif tag == "form":
            self.forms.append(a)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cells:
            text = " ".join("".join(self._cells.pop()).split())
            if self._rows:
                self._rows[-1].append(text)
        elif tag == "tr" and self._rows:
            self.rows.append(self._rows.pop())

    def handle_data(self, data):
        self.text.append(data)
        for cell in self._cells:
            cell.append(data)


def parse_page(html: str) -> PageParser:
    p = PageParser()
    p.feed(html)
    p.close()
    return p


def server_row(page: PageParser, server: str) -> list[str]:
    rows = [r for r in page.rows if server in r]
    assert len(rows) == 1, f"expected one table row with a cell {server!r}, found {len(rows)}"
    return rows[0]


def row_statuses(row: list[str]) -> set[str]:
    return {m.group(0) for cell in row for m in STATUS_WORDS.finditer(cell)}


def check_tables(page: PageParser) -> None:
    """The proxies' tables: every proxy named, a summary row per side, one row per server
    carrying its state."""
    text = " ".join(" ".join(page.text).split())
    for name in PROXIES:
        assert re.search(rf"(?<![\w-]){name}(?![\w-])", text), f"proxy {name} not on the page"
    first_cells = [c.lower() for r in page.rows for c in r]
    # web_fe and stats_px have a frontend line, app_be and stats_px a backend line.
    assert first_cells.count("frontend") >= 2, "fewer than 2 frontend summary rows"
    assert first_cells.count("backend") >= 2, "fewer than 2 backend summary rows"
    for server, status in SERVER_STATES.items():
        row = server_row(page, server)
        assert row_statuses(row) == {status}, (server, row_statuses(row), row)


# ----------------------------------------------------------------------------------------------
# The page, rendered
# ----------------------------------------------------------------------------------------------

def test_stats_page_screenshot_and_dom(layout, chromium, tmp_path):
    lay = layout()
    shot = tmp_path / "stats.png"
    chromium.run(f"--screenshot={shot}", lay.stats_url)
    assert shot.is_file(), f"chromium wrote no {shot}"
    data = shot.read_bytes()
    info = png_info(data)
    assert 1024 <= info["width"] <= 4096 and 1024 <= info["height"] <= 6400, info
    # A rendered page, not a blank one: tens of KB, many colours.
    assert len(data) > 10_000 and info["distinct_bytes"] > 32, (len(data), info)

    dom, _ = chromium.run("--dump-dom", lay.stats_url)
    (tmp_path / "stats.dom.html").write_text(dom)
    assert dom.lstrip().lower().startswith(("<html", "<!doctype")), dom[:200]
    page = parse_page(dom)
    check_tables(page)
    # Without `stats admin`: no admin form (no server checkboxes, no action select, no POST).
    assert not [i for i in page.inputs if i.get("name") == "s"], page.inputs
    assert not [s for s in page.selects if s.get("name") == "action"], page.selects
    assert not [f for f in page.forms if (f.get("method") or "").lower() == "post"], page.forms


# ----------------------------------------------------------------------------------------------
# The admin form, submitted by the browser
# ----------------------------------------------------------------------------------------------

_FORMS_JS = """
[...document.querySelectorAll('form')]
  .filter(f => (f.getAttribute('method') || '').toLowerCase() === 'post')
  .map(f => ({
    action: f.getAttribute('action'),
    b: f.elements.b ? f.elements.b.value : null,
    b_type: f.elements.b ? f.elements.b.type : null,
    servers: [...f.querySelectorAll('input[type=checkbox][name=s]')].map(c => c.value),
    actions: f.elements.action ? [...f.elements.action.options].map(o => o.value) : null,
    submit: !!f.querySelector('input[type=submit], button[type=submit], button:not([type])'),
  }))
"""

# Ticks exactly the servers in NAMES, chooses ACTION and clicks the form's submit button (on
# the next turn of the event loop, so that Runtime.evaluate returns before the navigation).
# The marker tells the old document from the one the POST leads to.
_SUBMIT_JS = """
(() => {
  const B = %s, NAMES = %s, ACTION = %s;
  const f = [...document.forms].find(f => f.elements.b && f.elements.b.value === B);
  if (!f) throw new Error('no admin form with b=' + B);
  const boxes = [...f.querySelectorAll('input[type=checkbox][name=s]')];
  for (const n of NAMES)
    if (!boxes.some(c => c.value === n)) throw new Error('no checkbox for ' + n);
  for (const c of boxes) c.checked = NAMES.includes(c.value);
  const sel = f.elements.action;
  sel.value = ACTION;
  if (sel.value !== ACTION) throw new Error('no option ' + ACTION);
  sel.dispatchEvent(new Event('change', {bubbles: true}));
  const btn = f.querySelector('input[type=submit], button[type=submit], button:not([type])');
  window.__beforeSubmit = true;
  setTimeout(() => btn.click(), 0);
  return true;
})()
"""


def _header(headers: dict, name: str):
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def submit_admin_form(browser, b: str, servers: list[str], action: str, expect_url: str):
    """Submits the form through the page and follows it to `expect_url`; returns
    (post url, post body, the POST's response status, its location, the new page's text)."""
    cdp = browser.cdp
    cdp.events.clear()
    browser.evaluate(_SUBMIT_JS % (json.dumps(b), json.dumps(servers), json.dumps(action)))
    post = cdp.wait_event(lambda e: e.get("method") == "Network.requestWillBeSent"
                          and e["params"]["request"]["method"] == "POST",
                          what="the form's POST request")["params"]
    body = post["request"].get("postData")
    if body is None:
        body = cdp.call("Network.getRequestPostData", requestId=post["requestId"])["postData"]
    redirect = cdp.wait_event(lambda e: e.get("method") == "Network.requestWillBeSent"
                              and e["params"]["requestId"] == post["requestId"]
                              and "redirectResponse" in e["params"],
                              what="the redirect answering the POST")["params"]
    resp = redirect["redirectResponse"]
    assert redirect["request"]["method"] == "GET", redirect["request"]

    def loaded():
        href, state, old = browser.evaluate(
            "[location.href, document.readyState, !!window.__beforeSubmit]")
        return href == expect_url and state == "complete" and not old
    h.wait_until(loaded, 20, interval=0.05,
                 message=lambda: f"the page after the POST to be {expect_url}\n"
                                 f"{browser.describe()}")
    text = browser.evaluate("document.body.innerText")
    return (post["request"]["url"], body, _header(post["request"]["headers"], "content-type"),
            resp["status"], _header(resp["headers"], "location"), text)


def test_admin_form_through_browser(layout, chromium, tmp_path):
    lay = layout("    stats admin if TRUE\n")
    b = "#" + lay.iid("app_be")
    browser = chromium.start_devtools()
    try:
        browser.navigate(lay.stats_url)
        forms = browser.evaluate(_FORMS_JS)
        # One form, for app_be (web_fe has no servers, stats_px none either).
        assert len(forms) == 1, forms
        form = forms[0]
        assert form["b"] == b and form["b_type"] == "hidden", form
        assert form["servers"] == ["web1", "web2", "web3", "web4"], form
        assert form["actions"] == ADMIN_ACTIONS, form
        assert form["submit"] and not form["action"], form   # posts to the page's own URL
        (tmp_path / "admin.png").write_bytes(browser.screenshot())

        done_url = lay.stats_url + ";st=DONE"
        path = urlsplit(lay.stats_url).path

        # maint: both a checked server and one without checks go to maintenance.
        url, body, ctype, status, location, text = submit_admin_form(
            browser, b, ["web1", "web4"], "maint", done_url)
        assert url == lay.stats_url, url
        assert ctype == "application/x-www-form-urlencoded", ctype
        assert sorted(parse_qsl(body)) == sorted(
            [("s", "web1"), ("s", "web4"), ("action", "maint"), ("b", b)]), body
        assert (status, location) == (303, path + ";st=DONE"), (status, location)
        assert DONE_TEXT in text, text[:2000]
        lay.wait_status("web1", "MAINT", timeout=5)
        lay.wait_status("web4", "MAINT", timeout=5)
        for server in ("web2", "web3"):
            assert lay.status(server) == SERVER_STATES[server]

        # ready, from the result page (so the form posts to <uri>;st=DONE): back in service.
        url, body, ctype, status, location, text = submit_admin_form(
            browser, b, ["web1", "web4"], "ready", done_url)
        assert url == done_url, url
        assert sorted(parse_qsl(body)) == sorted(
            [("s", "web1"), ("s", "web4"), ("action", "ready"), ("b", b)]), body
        assert (status, location) == (303, path + ";st=DONE"), (status, location)
        assert DONE_TEXT in text, text[:2000]
        lay.wait_status("web4", "no check", timeout=5)
        lay.wait_status("web1", "UP", timeout=10)   # after its checks pass again
        for server in ("web2", "web3"):
            assert lay.status(server) == SERVER_STATES[server]
    finally:
        browser.close()
