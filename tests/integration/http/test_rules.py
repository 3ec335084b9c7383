"""http-request / http-response rules, ACLs and use_backend (HAProxy syntax)."""
import time

import pytest

from sluice_harness import free_port
from hutil import Conn, assert_nothing_reached, config, error_page, page_body, preamble


def _start(sluice, cfg, origin, fe="", be="", **kw):
    port = free_port()
    sluice(cfg(config(port, origin.port, fe=fe, be=be, **kw)), wait_ports=[port])
    return port


def _req(port, method="GET", path="/", headers=(), body=b""):
    head = f"{method} {path} HTTP/1.1\r\n"
    if not any(h.lower().startswith("host:") for h in headers):
        head += "Host: a\r\n"
    head += "".join(h + "\r\n" for h in headers)
    if body:
        head += f"Content-Length: {len(body)}\r\n"
    with Conn(port) as c:
        c.send(head.encode() + b"\r\n" + body)
        return c.response(method)


def _one(origin):
    reqs = origin.wait_requests(1)
    assert len(reqs) == 1, reqs
    return reqs[0]


# -- header actions ------------------------------------------------------------------------------

def test_set_header_replaces_all_values(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request set-header X-Set hello")
    assert _req(port, headers=["X-Set: old1", "X-Set: old2"]).status == 200
    assert _one(origin).header_all("x-set") == ["hello"]


def test_add_header_appends(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request add-header X-Add v2")
    assert _req(port, headers=["X-Add: v1"]).status == 200
    assert _one(origin).header_all("x-add") == ["v1", "v2"]


def test_del_header_case_insensitive(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request del-header x-del")
    assert _req(port, headers=["X-DEL: 1", "X-Keep: 2", "X-Del: 3"]).status == 200
    req = _one(origin)
    assert req.header("x-del") is None and req.header("x-keep") == "2", req.head


def test_replace_header_whole_value(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe=r"http-request replace-header X-R ^a(.*)$ b\1")
    assert _req(port, headers=["X-R: abc, axe"]).status == 200
    assert _one(origin).header_all("x-r") == ["bbc, axe"]


def test_replace_value_each_element(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe=r"http-request replace-value X-V ^(.*)$ [\1]")
    assert _req(port, headers=["X-V: a, b"]).status == 200
    # each comma-separated element is rewritten; a replaced element loses the blanks around it
    # (HAProxy 2.6 on the manual's example: "192.168.10.1, 192.168.13.24, 10.0.0.37" ->
    # "172.16.10.1,172.16.13.24, 10.0.0.37")
    assert _one(origin).header_all("x-v") == ["[a],[b]"]


def test_set_header_with_sample_fetches(cfg, sluice, origin):
    port = _start(sluice, cfg, origin,
                  fe="http-request set-header X-Info %[method]:%[path]:%[hdr(host)]:%[src]")
    assert _req(port, method="GET", path="/p/q?x=1", headers=["Host: h.example"]).status == 200
    assert _one(origin).header("x-info") == "GET:/p/q:h.example:127.0.0.1"


def test_set_path_keeps_query(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request set-path /rewritten if { path /old }")
    assert _req(port, path="/old?q=1").status == 200
    assert _req(port, path="/other").status == 200
    assert [r.target for r in origin.wait_requests(2)] == ["/rewritten?q=1", "/other"]


def test_rules_run_in_order(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="""
        http-request set-header X-A first
        http-request set-header X-B %[hdr(x-a)]
        http-request del-header X-A
    """)
    assert _req(port).status == 200
    req = _one(origin)
    assert req.header("x-a") is None and req.header("x-b") == "first", req.head


def test_backend_rules_apply_too(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request set-header X-Fe 1",
                  be="http-request set-header X-Be 2")
    assert _req(port).status == 200
    req = _one(origin)
    assert (req.header("x-fe"), req.header("x-be")) == ("1", "2")


# -- deny / return / redirect / allow --------------------------------------------------------------

def test_deny_default_403_keeps_connection(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request deny if { path_beg /admin }")
    with Conn(port) as c:
        c.send(b"GET /admin/x HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(403)
        c.send(b"GET /ok HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 200, "deny keeps a fully read request's connection"
    assert [r.path for r in origin.requests()] == ["/ok"]


@pytest.mark.parametrize("body", [
    pytest.param(b"Content-Length: 5\r\n\r\nhello", id="content-length"),
    pytest.param(b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
                 id="chunked"),
])
def test_deny_with_whole_body_keeps_connection(cfg, sluice, origin, body):
    # 3.5: the body arrived with the head, so the request was fully read: the pipelined request
    # behind it is served on the same connection
    port = _start(sluice, cfg, origin, fe="http-request deny if { path_beg /deny }")
    with Conn(port) as c:
        c.send(b"POST /deny HTTP/1.1\r\nHost: a\r\n" + body +
               b"GET /after HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(403)
        r = c.response()
        assert r.status == 200 and r.header("connection") is None, r
        assert c.still_open(0.2)
    assert [r.path for r in origin.requests()] == ["/after"]


def test_deny_with_body_still_arriving_closes(cfg, sluice, origin):
    # the body is not waited for: the connection cannot carry another request
    port = _start(sluice, cfg, origin, fe="http-request deny")
    with Conn(port) as c:
        c.send(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhel")
        r = c.response()
        assert r.status == 403 and r.header("connection") == "close", r
        assert c.closed_within(3)


@pytest.mark.parametrize("code", [400, 429, 500, 503])
def test_deny_status(cfg, sluice, origin, code):
    port = _start(sluice, cfg, origin, fe=f"http-request deny deny_status {code}")
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.response()
        assert r.status == code and r.body == page_body(code), r
    assert origin.connection_count() == 0


def test_return_string_with_headers(cfg, sluice, origin):
    port = _start(sluice, cfg, origin,
                  fe='http-request return status 200 content-type text/plain string "pong" '
                     'hdr X-Why health if { path /ping }')
    r = _req(port, path="/ping")
    assert r.status == 200 and r.body == b"pong", r
    assert r.header("content-type") == "text/plain" and r.header("content-length") == "4", r
    assert r.header("x-why") == "health", r
    assert origin.connection_count() == 0
    assert _req(port, path="/other").status == 200


def test_return_file(cfg, sluice, origin, tmp_path):
    f = tmp_path / "page.html"
    f.write_bytes(b"<p>maintenance</p>\n")
    port = _start(sluice, cfg, origin,
                  fe=f"http-request return status 503 content-type text/html file {f}")
    r = _req(port)
    assert r.status == 503 and r.body == b"<p>maintenance</p>\n", r
    assert r.header("content-type") == "text/html", r


def test_return_without_payload_is_empty(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request return status 404")
    r = _req(port)
    assert r.raw == b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n", r


def test_return_default_errorfiles(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request return status 404 default-errorfiles")
    r = _req(port)
    assert r.status == 404 and r.body == page_body(404), r


def test_return_keeps_connection(cfg, sluice, origin):
    port = _start(sluice, cfg, origin,
                  fe='http-request return status 200 content-type text/plain string "x" '
                     'if { path /r }')
    with Conn(port) as c:
        c.send(b"GET /r HTTP/1.1\r\nHost: a\r\n\r\nGET /s HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().body == b"x"
        assert c.response().body == b"hello\n"


def test_redirect_location(cfg, sluice, origin):
    port = _start(sluice, cfg, origin,
                  fe="http-request redirect location /new code 301 if { path /old }")
    r = _req(port, path="/old")
    assert r.status == 301 and r.header("location") == "/new", r
    assert r.header("content-length") == "0" and r.body == b"", r
    assert r.header("cache-control") is None, r
    assert origin.connection_count() == 0


def test_redirect_location_default_code_302(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request redirect location https://b.example/x")
    r = _req(port)
    assert r.status == 302 and r.header("location") == "https://b.example/x", r


def test_redirect_prefix(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="""
        http-request redirect prefix /pfx code 307 drop-query if { path_beg /d }
        http-request redirect prefix /pfx code 308 if { path_beg /k }
    """)
    r = _req(port, path="/d/x?a=1")
    assert r.status == 307 and r.header("location") == "/pfx/d/x", r
    assert r.header("cache-control") == "no-cache", r
    r = _req(port, path="/k/x?a=1")
    assert r.status == 308 and r.header("location") == "/pfx/k/x?a=1", r
    # HAProxy marks only the temporary codes (302, 303, 307) no-cache
    assert r.header("cache-control") is None, r


def test_redirect_scheme(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request redirect scheme https code 301")
    r = _req(port, path="/p?q=1", headers=["Host: www.example.com"])
    assert r.status == 301 and r.header("location") == "https://www.example.com/p?q=1", r


def test_allow_stops_evaluation(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="""
        http-request allow if { path /allowed }
        http-request deny
    """)
    assert _req(port, path="/allowed").status == 200
    assert _req(port, path="/other").raw == error_page(403)


def test_http_response_set_and_del_header(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="""
        http-response set-header X-Resp yes
        http-response del-header X-Conn
        http-response set-header X-Status %[status] if { status 201 }
    """)
    r = _req(port, path="/status/201")
    assert r.status == 201 and r.body == b"status 201\n", r
    assert r.header("x-resp") == "yes" and r.header("x-conn") is None, r
    assert r.header("x-req") == "1" and r.header("x-status") == "201", r
    r = _req(port, path="/")
    assert r.status == 200 and r.header("x-status") is None and r.header("x-resp") == "yes", r


def test_http_response_deny_is_502(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="http-response deny if { status 404 }")
    with Conn(port) as c:
        c.send(b"GET /status/404 HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(502)
        c.send(b"GET /public HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 200


def test_http_response_deny_status(cfg, sluice, origin):
    port = _start(sluice, cfg, origin,
                  fe="http-response deny deny_status 403 if { status 500 }")
    assert _req(port, path="/status/500").raw == error_page(403)
    assert _req(port, path="/status/200").status == 200


# -- local replies to HEAD ---------------------------------------------------------------------------

def test_local_replies_to_head_have_no_body(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="""
        http-request deny if { path /deny }
        http-request return status 200 content-type text/plain string hello if { path /ret }
        http-request redirect location /new code 302 if { path /red }
        use_backend none if { path /none }
    """, extra="backend none\n")
    for path, status in (("/deny", 403), ("/ret", 200), ("/red", 302), ("/none", 503)):
        with Conn(port) as c:
            # pipelined: the second response must start right after the first head (RFC 9110
            # 9.3.2); the length stays the page's, as HAProxy 2.6 sends it
            c.send(f"HEAD {path} HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n".encode())
            r = c.response("HEAD")
            assert r.status == status and r.body == b"", r
            if path == "/deny":
                assert r.header("content-length") == str(len(page_body(403))), r
            r2 = c.response()
            assert r2.status == 200 and r2.body == b"hello\n", r2


# -- framing fields touched by rules (docs/http.md "Framing after rules") -------------------------

_SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"


def test_del_content_length_rechunks_the_body(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request del-header content-length")
    r = _req(port, method="POST", path="/p", body=_SMUGGLED)
    assert r.status == 200, r
    req = _one(origin)
    # HAProxy 2.6: the body goes out chunked; the server never sees a second request
    assert req.header("content-length") is None and req.header("transfer-encoding") == "chunked", req.head
    assert req.body == _SMUGGLED and origin.paths() == ["/p"], origin.paths()


def test_set_content_length_contradicting_body_is_500(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request set-header content-length 0")
    r = _req(port, method="POST", path="/p", body=_SMUGGLED)
    assert r.status == 500, r
    assert_nothing_reached(origin, port)
    # the same value as the body's length is kept
    assert _req(port, method="POST", path="/q", body=b"").status == 200


def test_forwardfor_header_named_content_length_is_500(cfg, sluice, origin):
    # Not a rule, but it adds a field too: the framing check must run for it (with no rule
    # configured it is otherwise skipped). The client address is no valid length: 500.
    port = _start(sluice, cfg, origin, fe="option forwardfor header content-length")
    for method, body in (("POST", b"abc"), ("GET", b"")):
        r = _req(port, method=method, path="/p", body=body)
        assert r.status == 500, r
    time.sleep(0.1)   # (every request fails here, so no barrier request can be used)
    assert origin.raw() == b"", origin.raw()


def test_del_transfer_encoding_keeps_chunked(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-request del-header transfer-encoding")
    with Conn(port) as c:
        c.send(b"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
               + b"%x\r\n" % len(_SMUGGLED) + _SMUGGLED + b"\r\n0\r\n\r\n")
        assert c.response().status == 200
    req = _one(origin)
    assert req.header("transfer-encoding") == "chunked" and req.body == _SMUGGLED, req.head
    assert origin.paths() == ["/p"]


def test_response_del_content_length_is_put_back(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-response del-header content-length")
    with Conn(port) as c:
        c.send(b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
        r1 = c.response()
        assert r1.status == 200 and r1.header("content-length") == str(len(r1.body)), r1
        assert c.response().status == 200


def test_response_del_zero_content_length_is_put_back(cfg, sluice, origin):
    # An empty body framed by `content-length: 0`: without the field the client would read up
    # to the close, taking the next response on the connection as this one's body.
    origin.script("/empty", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    port = _start(sluice, cfg, origin, fe="http-response del-header content-length")
    with Conn(port) as c:
        c.send(b"GET /empty HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
        r1 = c.response()
        assert r1.status == 200 and r1.header("content-length") == "0" and r1.body == b"", r1
        r2 = c.response()
        assert r2.status == 200 and r2.body == b"hello\n", r2


def test_response_content_length_contradicting_body_is_500(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-response set-header content-length 1")
    assert _req(port, path="/").raw == error_page(500)


def test_http_response_return_replaces_the_response(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="""
        http-response return status 202 content-type text/plain string replaced hdr X-R %[status] if { status 200 }
    """)
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.response()
        assert r.status == 202 and r.body == b"replaced" and r.header("x-r") == "200", r
        assert r.header("content-type") == "text/plain", r
        # the connection goes on; the server's unread response was dropped with its connection
        c.send(b"GET /status/201 HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 201


def test_http_response_redirect_location(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-response redirect location /elsewhere code 303 if { status 201 }")
    r = _req(port, path="/status/201")
    assert r.status == 303 and r.header("location") == "/elsewhere" and r.body == b"", r


def test_http_response_deny_payload(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="""
        http-response deny deny_status 403 content-type text/plain string resnope hdr X-Why res if { status 299 }
    """)
    r = _req(port, path="/status/299")
    assert r.status == 403 and r.body == b"resnope" and r.header("x-why") == "res", r


def test_rewritten_request_head_is_bounded_by_bufsize(cfg, sluice, origin):
    # a head that rules grow past tune.bufsize is a 500 with nothing sent (HAProxy 2.6)
    port = _start(sluice, cfg, origin,
                  fe="\n".join(["http-request add-header X-Big %[url]%[url]%[url]%[url]"] * 4))
    r = _req(port, path="/" + "a" * 12000)
    assert r.raw == error_page(500), r
    assert_nothing_reached(origin, port)
    # a head that still fits goes through
    assert _req(port, path="/" + "a" * 100).status == 200


def test_rewritten_response_head_is_bounded_by_bufsize(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="http-response add-header X-Big %[capture.req.uri]%[capture.req.uri]%[capture.req.uri]%[capture.req.uri]")
    assert _req(port, path="/" + "a" * 5000).raw == error_page(500)
    assert _req(port, path="/" + "a" * 100).status == 200


# -- ACLs and use_backend --------------------------------------------------------------------------

def _two_backends(port, o1, o2, fe_lines):
    return preamble() + f"""frontend fe
    bind 127.0.0.1:{port}
{fe_lines}
    default_backend b1
backend b1
    server s1 127.0.0.1:{o1}
backend b2
    server s2 127.0.0.1:{o2}
"""


# (id, frontend lines, [(method, path, headers, expected backend)])
ACL_CASES = [
    ("path", "use_backend b2 if { path /exact }",
     [("GET", "/exact", [], "b2"), ("GET", "/exact?x=1", [], "b2"), ("GET", "/exact/x", [], "b1")]),
    ("path_beg", "use_backend b2 if { path_beg /api/ }",
     [("GET", "/api/v1", [], "b2"), ("GET", "/apx", [], "b1")]),
    ("path_end", "use_backend b2 if { path_end .jpg }",
     [("GET", "/a/b.jpg?x=1", [], "b2"), ("GET", "/a.jpg/x", [], "b1")]),
    ("path_reg", "use_backend b2 if { path_reg ^/u/[0-9]+$ }",
     [("GET", "/u/42", [], "b2"), ("GET", "/u/x", [], "b1")]),
    ("hdr", "use_backend b2 if { hdr(x-env) prod }",
     [("GET", "/", ["X-Env: prod"], "b2"), ("GET", "/", ["X-Env: PROD"], "b1"),
      ("GET", "/", [], "b1")]),
    ("hdr-i", "use_backend b2 if { hdr(x-env) -i PROD }",
     [("GET", "/", ["X-Env: prod"], "b2"), ("GET", "/", ["X-Env: dev"], "b1")]),
    ("hdr_beg", "use_backend b2 if { hdr_beg(host) api. }",
     [("GET", "/", ["Host: api.example.com"], "b2"), ("GET", "/", ["Host: www.example.com"], "b1")]),
    ("hdr_end", "use_backend b2 if { hdr_end(host) .example.com }",
     [("GET", "/", ["Host: a.example.com"], "b2"), ("GET", "/", ["Host: a.example.org"], "b1")]),
    ("hdr_sub", "use_backend b2 if { hdr_sub(user-agent) bot }",
     [("GET", "/", ["User-Agent: mybot/1.0"], "b2"), ("GET", "/", ["User-Agent: curl/8"], "b1")]),
    ("method", "use_backend b2 if { method POST PUT }",
     [("POST", "/", [], "b2"), ("PUT", "/", [], "b2"), ("GET", "/", [], "b1")]),
    ("src-match", "use_backend b2 if { src 127.0.0.0/8 }", [("GET", "/", [], "b2")]),
    ("src-nomatch", "use_backend b2 if { src 10.0.0.0/8 192.168.0.1 }", [("GET", "/", [], "b1")]),
    ("dst_port", "use_backend b2 if { dst_port {port} }\nuse_backend b1 if { dst_port 1 }",
     [("GET", "/", [], "b2")]),
    ("url_param", "use_backend b2 if { url_param(debug) 1 }",
     [("GET", "/x?debug=1", [], "b2"), ("GET", "/x?a=b&debug=1", [], "b2"),
      ("GET", "/x?debug=0", [], "b1"), ("GET", "/x", [], "b1")]),
    ("match-beg", "use_backend b2 if { path -m beg /img }",
     [("GET", "/img/a.png", [], "b2"), ("GET", "/i", [], "b1")]),
    ("match-sub", "use_backend b2 if { path -m sub /tmp/ }",
     [("GET", "/a/tmp/b", [], "b2"), ("GET", "/a/tmpb", [], "b1")]),
    ("match-reg-i", "use_backend b2 if { path -i -m reg ^/CASE$ }",
     [("GET", "/case", [], "b2"), ("GET", "/cases", [], "b1")]),
    ("match-end", "use_backend b2 if { hdr(host) -m end .internal }",
     [("GET", "/", ["Host: db.internal"], "b2"), ("GET", "/", ["Host: internal.com"], "b1")]),
    ("negation", "use_backend b2 if !{ path_beg /public }",
     [("GET", "/private", [], "b2"), ("GET", "/public/x", [], "b1")]),
    ("or", "use_backend b2 if { path /a } || { path /b }",
     [("GET", "/b", [], "b2"), ("GET", "/a", [], "b2"), ("GET", "/c", [], "b1")]),
    ("or-word", "use_backend b2 if { path /a } or { path /b }",
     [("GET", "/b", [], "b2"), ("GET", "/c", [], "b1")]),
    ("implicit-and", "use_backend b2 if { path_beg /x } { method POST }",
     [("POST", "/x/1", [], "b2"), ("GET", "/x/1", [], "b1"), ("POST", "/y", [], "b1")]),
    ("named", "acl is_api path_beg /api\nacl is_post method POST\nuse_backend b2 if is_api is_post",
     [("POST", "/api/x", [], "b2"), ("GET", "/api/x", [], "b1")]),
    ("named-ored-lines", "acl special path /one\nacl special path /two\nuse_backend b2 if special",
     [("GET", "/two", [], "b2"), ("GET", "/one", [], "b2"), ("GET", "/three", [], "b1")]),
    ("named-negated-or", "acl a path /a\nacl b hdr(x-b) 1\nuse_backend b2 if !a b || a !b",
     [("GET", "/a", [], "b2"), ("GET", "/z", ["X-B: 1"], "b2"), ("GET", "/a", ["X-B: 1"], "b1"),
      ("GET", "/z", [], "b1")]),
    ("unless", "use_backend b2 unless { path_beg /keep }",
     [("GET", "/other", [], "b2"), ("GET", "/keep/1", [], "b1")]),
    ("first-match-wins", "use_backend b2 if { path_beg /f }\nuse_backend b1 if { path_beg /f }",
     [("GET", "/f", [], "b2")]),
    ("predefined", "use_backend b2 if METH_POST || HTTP_1.0",
     [("POST", "/", [], "b2"), ("GET", "/", [], "b1")]),
]


@pytest.mark.parametrize("lines,cases", [pytest.param(l, c, id=i) for i, l, c in ACL_CASES])
def test_acl_use_backend(cfg, sluice, servers, lines, cases):
    from http_origin import HttpOrigin
    o1, o2 = servers.add(HttpOrigin()), servers.add(HttpOrigin())
    port = free_port()
    fe_lines = "\n".join("    " + l for l in lines.replace("{port}", str(port)).splitlines())
    sluice(cfg(_two_backends(port, o1.port, o2.port, fe_lines)), wait_ports=[port])
    for method, path, headers, expected in cases:
        n1, n2 = len(o1.requests()), len(o2.requests())
        r = _req(port, method, path, headers, body=b"x" if method in ("POST", "PUT") else b"")
        assert r.status == 200, (method, path, headers, r)
        got = "b1" if len(o1.requests()) > n1 else "b2" if len(o2.requests()) > n2 else None
        assert got == expected, f"{method} {path} {headers}: expected {expected}, went to {got}"


def test_use_backend_sees_rewritten_request(cfg, sluice, servers):
    # http-request rules run before use_backend; the origin of b2 gets the rewritten head
    from http_origin import HttpOrigin
    o1, o2 = servers.add(HttpOrigin()), servers.add(HttpOrigin())
    port = free_port()
    sluice(cfg(_two_backends(port, o1.port, o2.port,
                             "    http-request set-header X-Route two if { path_beg /echo }\n"
                             "    use_backend b2 if { hdr(x-route) two }")), wait_ports=[port])
    r = _req(port, path="/echo")
    assert r.status == 200
    assert r.body == b"GET /echo HTTP/1.1\r\nhost: a\r\nx-route: two\r\n\r\n", r
    assert not o1.requests()


def test_use_backend_sees_rewritten_path(cfg, sluice, servers):
    # HAProxy evaluates use_backend after the frontend's http-request rules, set-path included
    from http_origin import HttpOrigin
    o1, o2 = servers.add(HttpOrigin()), servers.add(HttpOrigin())
    port = free_port()
    sluice(cfg(_two_backends(port, o1.port, o2.port,
                             "    http-request set-path /api%[path] if { path_beg /v1 }\n"
                             "    use_backend b2 if { path_beg /api }")), wait_ports=[port])
    assert _req(port, path="/v1/users").status == 200
    assert [q.target for q in o2.wait_requests(1)] == ["/api/v1/users"]
    assert not o1.requests()


def test_local_reply_honours_client_close(cfg, sluice, origin):
    # 3.1/3.5: a deny keeps a persistent connection, but not when the client asked to close
    port = _start(sluice, cfg, origin, fe="http-request deny")
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        r = c.response()
        assert r.status == 403 and r.header_all("connection") == ["close"], r
        assert c.closed_within(3)


@pytest.mark.parametrize("fe_lines,needle", [
    ("use_backend nope if { path /x }", "nope"),
    ("http-request deny if no_such_acl", "no_such_acl"),
    ("acl a path_beg", "path_beg"),
])
def test_config_errors_are_reported(cfg, tmp_path, fe_lines, needle):
    from sluice_harness import run_sluice
    path = cfg(config(free_port(), free_port(), fe=fe_lines))
    rc, out, err = run_sluice(["-c", "-f", str(path)])
    assert rc != 0, (out, err)
    assert needle in err, err


def test_pipelined_request_after_deny_and_redirect_is_processed(cfg, sluice, origin):
    # 3.5 (v): deny/redirect keep a fully read request's connection; the next pipelined
    # request is processed
    port = _start(sluice, cfg, origin, fe="""
        http-request deny if { path /d }
        http-request redirect location /elsewhere if { path /r }
    """)
    with Conn(port) as c:
        c.send(b"GET /d HTTP/1.1\r\nHost: a\r\n\r\nGET /r HTTP/1.1\r\nHost: a\r\n\r\n"
               b"GET /ok HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(403)
        r = c.response()
        assert r.status == 302 and r.header("location") == "/elsewhere", r
        r = c.response()
        assert r.status == 200 and r.body == b"hello\n", r
    assert origin.paths() == ["/ok"]
