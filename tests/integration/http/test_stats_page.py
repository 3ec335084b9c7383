"""The HTTP statistics page, `stats uri` and friends (as HAProxy 3.5 serves them), and
`monitor-uri`: what a frontend answers itself for operators and load balancers."""
import base64
import json

from hutil import Conn, assert_nothing_reached, config, error_page, get, preamble
from sluice_harness import free_port


def _auth(user_pass: str) -> str:
    return "Authorization: Basic " + base64.b64encode(user_pass.encode()).decode() + "\r\n"


def _stats_listen(sluice, cfg, origin, stats_lines, fe=""):
    """A `listen stats` serving the page plus the usual fe -> be on the origin."""
    sport, port = free_port(), free_port()
    text = config(port, origin.port, fe=fe) + f"""
listen stats
    bind 127.0.0.1:{sport}
{stats_lines}
"""
    sluice(cfg(text), wait_ports=[sport, port])
    return sport, port


def test_csv_and_headers(sluice, cfg, origin):
    sport, port = _stats_listen(sluice, cfg, origin, "    stats enable\n    stats uri /st\n")
    assert get(port, "/warm").status == 200
    r = get(sport, "/st;csv")
    assert r.status == 200, r
    assert r.header("content-type") == "text/plain"
    assert r.header("cache-control") == "no-cache"
    assert r.chunked and r.header("refresh") is None
    lines = r.body.decode().split("\n")
    assert lines[0].startswith("# pxname,svname,qcur,qmax,scur,smax,slim,stot,")
    # The same rows as `show stat`, with no final empty line.
    assert lines[-1] == "" and lines[-2] != ""
    rows = {tuple(l.split(",")[:2]) for l in lines[1:-1]}
    assert {("fe", "FRONTEND"), ("be", "s1"), ("be", "BACKEND"), ("stats", "FRONTEND")} <= rows
    fe_row = next(l.split(",") for l in lines if l.startswith("fe,FRONTEND,"))
    assert fe_row[7] == "1"   # stot: the request above
    # HTML by default; HEAD has the head only; JSON and typed forms.
    html = get(sport, "/st")
    assert html.header("content-type") == "text/html" and b"<table>" in html.body
    with Conn(sport) as c:
        c.send(b"HEAD /st;csv HTTP/1.1\r\nHost: a\r\n\r\n")
        h = c.response("HEAD")
        assert h.status == 200 and h.header("transfer-encoding") is None
        assert c.still_open()
    j = get(sport, "/st;json")
    assert j.header("content-type") == "application/json"
    assert isinstance(json.loads(j.body), list)
    t = get(sport, "/st;typed")
    assert t.body.startswith(b"F.") and b".0.pxname.1:KNSV:str:" in t.body
    # Not the prefix, or another method: not the page (this listen has no server).
    assert get(sport, "/other").status == 503
    with Conn(sport) as c:
        c.send(b"PUT /st HTTP/1.1\r\nHost: a\r\ncontent-length: 0\r\n\r\n")
        assert c.final_response().status == 503


def test_refresh_scope_and_filters(sluice, cfg, origin):
    sport, _ = _stats_listen(sluice, cfg, origin,
                             "    stats uri /\n    stats refresh 7s\n    stats scope be\n"
                             "    stats scope .\n")
    r = get(sport, "/;csv")
    assert r.header("refresh") == "7"
    names = {l.split(",")[0] for l in r.body.decode().splitlines()[1:]}
    assert names == {"be", "stats"}
    assert get(sport, "/;csv;norefresh").header("refresh") is None
    # scope= narrows further, case-insensitively; an invalid character cancels it.
    names = {l.split(",")[0] for l in get(sport, "/;csv;scope=ST").body.decode().splitlines()[1:]}
    assert names == {"stats"}
    names = {l.split(",")[0] for l in get(sport, "/;csv;scope=s$").body.decode().splitlines()[1:]}
    assert names == {"be", "stats"}


def test_basic_auth(sluice, cfg, origin):
    sport, _ = _stats_listen(sluice, cfg, origin,
                             "    stats uri /admin\n    stats realm Ops\\ only\n"
                             "    stats auth alice:pw1\n    stats auth bob:pw2\n")
    r = get(sport, "/admin;csv")
    assert r.status == 401
    assert r.header("www-authenticate") == 'Basic realm="Ops only"'
    assert r.body == error_page(401).split(b"\r\n\r\n", 1)[1]
    assert get(sport, "/admin;csv", headers="Host: a\r\n" + _auth("alice:pw1")).status == 200
    assert get(sport, "/admin;csv", headers="Host: a\r\n" + _auth("bob:pw2")).status == 200
    assert get(sport, "/admin;csv", headers="Host: a\r\n" + _auth("bob:pw1")).status == 401
    assert get(sport, "/admin;csv", headers="Host: a\r\nAuthorization: Basic !!!\r\n").status == 401
    assert get(sport, "/admin;csv", headers="Host: a\r\nAuthorization: Bearer x\r\n").status == 401
    # POST without `stats admin`: HAProxy's refusal.
    with Conn(sport) as c:
        c.send(b"POST /admin HTTP/1.1\r\nHost: a\r\ncontent-length: 3\r\n" +
               _auth("alice:pw1").encode() + b"\r\nabc")
        p = c.final_response()
        # HAProxy 2.6's bytes.
        assert p.raw == (b"HTTP/1.1 303 See Other\r\ncache-control: no-cache\r\n"
                         b"content-type: text/plain\r\ncontent-length: 0\r\n"
                         b"location: /admin;st=DENY\r\n\r\n"), p
        # The body was read: the connection goes on.
        c.send(b"GET /admin;csv HTTP/1.1\r\nHost: a\r\n" + _auth("alice:pw1").encode() + b"\r\n")
        assert c.final_response().status == 200


def test_page_in_a_frontend_does_not_reach_the_backend(sluice, cfg, origin):
    port = free_port()
    sluice(cfg(config(port, origin.port, fe="stats enable")), wait_ports=[port])
    origin.reset()
    r = get(port, "/haproxy?stats;csv")
    assert r.status == 200 and r.body.startswith(b"# pxname,")
    assert_nothing_reached(origin, port)
    # Everything else is proxied as usual.
    assert get(port, "/x").status == 200


def test_http10_client_gets_a_length(sluice, cfg, origin):
    sport, _ = _stats_listen(sluice, cfg, origin, "    stats uri /s\n")
    with Conn(sport) as c:
        c.send(b"GET /s;csv HTTP/1.0\r\n\r\n")
        r = c.final_response()
        assert r.status == 200 and not r.chunked
        assert int(r.header("content-length")) == len(r.body) > 0


def test_tcp_mode_warns(sluice, cfg):
    sport = free_port()
    text = preamble() + f"""
listen t
    mode tcp
    bind 127.0.0.1:{sport}
    stats enable
"""
    proc = sluice(cfg(text), wait_ports=[sport])
    assert "'stats' statement ignored for proxy 't' as it requires HTTP mode." in proc.stderr()


def test_monitor_uri(sluice, cfg, origin, udp_log):
    """`monitor-uri`: answered by the frontend (200, or 503 under `monitor fail`), before any
    rule, with no log line, and nothing reaches the server."""
    port = free_port()
    text = config(port, origin.port, glob=f"log 127.0.0.1:{udp_log.port} format raw local0",
                  defaults="log global\noption httplog",
                  fe="monitor-uri /healthz\nmonitor fail if { hdr(x-down) -m found }\n"
                     "http-request deny")
    sluice(cfg(text), wait_ports=[port])
    origin.reset()
    r = get(port, "/healthz")
    assert r.raw == error_page(200), r
    assert get(port, "/healthz", headers="Host: a\r\nx-down: 1\r\n").status == 503
    # Exactly the URI; anything else meets the deny rule.
    assert get(port, "/healthz?x").status == 403
    assert get(port, "/other").status == 403
    # The denied requests are logged (after the monitor ones), the monitor requests are not.
    udp_log.wait_for(lambda m: '"GET /other ' in m)
    texts = udp_log.texts()
    assert any('"GET /healthz?x ' in t for t in texts), texts
    assert not any('"GET /healthz ' in t for t in texts), texts
    assert origin.requests() == []


def _parse_exposition(text):
    """{(name, frozenset(labels)): value} from the Prometheus text format, checking that every
    sample follows its family's `# TYPE` line and that values are numbers."""
    import re
    sample = re.compile(r'^([a-z_]+)(?:\{(.*)\})? (-?[0-9.e+]+)$')
    typed, out = set(), {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("gauge", "counter"), line
            typed.add(name)
            continue
        if line.startswith("# HELP ") or not line:
            continue
        m = sample.match(line)
        assert m, line
        assert m.group(1) in typed, line
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def test_prometheus_exporter(sluice, cfg, origin):
    port = free_port()
    text = config(port, origin.port,
                  fe="http-request use-service prometheus-exporter if { path /metrics }",
                  extra="    server s2 127.0.0.1:1 disabled")
    sluice(cfg(text), wait_ports=[port])
    for _ in range(3):
        assert get(port, "/x").status == 200
    origin.reset()
    r = get(port, "/metrics")
    assert r.status == 200 and r.header("content-type") == "text/plain; version=0.0.4"
    assert origin.requests() == []
    m = _parse_exposition(r.body.decode())
    fe = frozenset({("proxy", "fe")})
    be = frozenset({("proxy", "be")})
    s1 = frozenset({("proxy", "be"), ("server", "s1")})
    s2 = frozenset({("proxy", "be"), ("server", "s2")})
    assert m[("haproxy_process_nbthread", frozenset())] == 1
    assert m[("haproxy_frontend_http_requests_total", fe)] == 4   # this one included
    assert m[("haproxy_backend_http_responses_total", be | {("code", "2xx")})] == 3
    assert m[("haproxy_server_sessions_total", s1)] == 3
    assert m[("haproxy_frontend_intercepted_requests_total", fe)] == 1
    assert m[("haproxy_frontend_status", fe | {("state", "UP")})] == 1
    assert m[("haproxy_server_status", s1 | {("state", "UP")})] == 1
    assert m[("haproxy_server_status", s2 | {("state", "MAINT")})] == 1
    assert m[("haproxy_server_status", s2 | {("state", "UP")})] == 0
    # scope= picks the groups; no-maint leaves servers in maintenance out.
    only = _parse_exposition(get(port, "/metrics?scope=server&no-maint").body.decode())
    assert {k[0].split("_")[1] for k in only} == {"server"}
    assert all(("server", "s2") not in k[1] for k in only)
    assert ("haproxy_server_sessions_total", s1) in only
