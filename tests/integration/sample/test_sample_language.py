"""The sample language on real requests: variables of each scope (txn for one request, sess for
the client connection across keep-alive requests), converters in ACLs and formats, the
proxy's names and server counts, `return ... lf-string`. The same configuration gives the
same answers on HAProxy 3.5 (checked by hand when this was written)."""
from __future__ import annotations

import http.client

from sluice_harness import HTTP_DEFAULTS, free_port


def config(port: int, echo_port: int) -> str:
    return HTTP_DEFAULTS + f"""frontend f
  bind 127.0.0.1:{port}
  http-request set-var(txn.host) req.hdr(host),lower
  http-request set-var(sess.n) int(1),add(sess.n) if {{ var(sess.n) -m found }}
  http-request set-var(sess.n) int(1) unless {{ var(sess.n) -m found }}
  acl is_api path,lower -m beg /api
  http-request return status 200 content-type text/plain lf-string "api %[var(sess.n)]" if is_api
  http-request set-header X-Host %[var(txn.host)]
  http-request set-header X-Fe %[fe_name]/%[fe_id]/%[nbsrv(b)]
  http-request set-header X-N %[var(sess.n)]
  http-request set-var(req.seen) str(yes) if {{ var(txn.host) -m end .example.com }}
  http-request set-header X-Seen %[var(req.seen)]
  http-response set-header X-Back %[var(txn.host)]-%[be_name]-%[srv_name]
  default_backend b
backend b
  server s 127.0.0.1:{echo_port}
frontend echo
  bind 127.0.0.1:{echo_port}
  http-request return status 200 content-type text/plain lf-string "host=%[req.hdr(x-host)] fe=%[req.hdr(x-fe)] n=%[req.hdr(x-n)] seen=%[req.hdr(x-seen)]"
"""


def get(conn: http.client.HTTPConnection, path: str, host: str) -> tuple[str, str]:
    conn.request("GET", path, headers={"Host": host})
    r = conn.getresponse()
    body = r.read().decode()
    return body, r.getheader("X-Back") or ""


def test_variables_converters_and_names(sluice):
    port, echo = free_port(), free_port()
    sluice(config(port, echo), wait_ports=[port, echo])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        body, back = get(c, "/x", "WWW.Example.COM")
        assert body == "host=www.example.com fe=f/2/1 n=1 seen=yes"
        assert back == "www.example.com-b-s"
        # Same connection: sess.n counts on; txn and req variables start again.
        body, back = get(c, "/y", "Other.ORG")
        assert body == "host=other.org fe=f/2/1 n=2 seen="
        assert back == "other.org-b-s"
        # A converter in an ACL decides; lf-string renders the answer.
        body, back = get(c, "/API/v1", "a")
        assert body == "api 3"
        assert back == ""
    finally:
        c.close()
    # A new connection is a new session.
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        body, _ = get(c, "/z", "h")
        assert body.endswith("n=1 seen=")
    finally:
        c.close()


def after_config(port: int, echo_port: int) -> str:
    return HTTP_DEFAULTS + f"""frontend f
  bind 127.0.0.1:{port}
  http-request set-var(txn.p) path
  http-request return status 200 content-type text/plain string "ret" if {{ path /ret }}
  http-request redirect location /x if {{ path /redir }}
  http-after-response set-header X-After %[var(txn.p)]-%[status]
  http-after-response set-status 299 if {{ status 503 }}
  use_backend dead if {{ path /dead }}
  default_backend b
backend b
  http-after-response add-header X-Be yes
  server s 127.0.0.1:{echo_port}
backend dead
  server s 127.0.0.1:1
frontend echo
  bind 127.0.0.1:{echo_port}
  http-request return status 200 content-type text/plain string "echo"
"""


def test_after_response_rules_on_every_response(sluice):
    """http-after-response runs on the server's responses and on sluice's own (return,
    redirect, an error page), backend rules first; HAProxy 3.5 answers the same heads."""
    port, echo = free_port(), free_port()
    sluice(after_config(port, echo), wait_ports=[port, echo])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        def ask(path):
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            return r.status, r.reason, r.getheader("x-after"), r.getheader("x-be")
        assert ask("/ok") == (200, "OK", "/ok-200", "yes")
        assert ask("/ret") == (200, "OK", "/ret-200", None)
        assert ask("/redir") == (302, "Found", "/redir-302", None)
        assert ask("/dead") == (299, "Success", "/dead-503", None)
    finally:
        c.close()


def header_conv_config(port: int) -> str:
    return HTTP_DEFAULTS + f"""frontend f
  bind 127.0.0.1:{port}
  http-request set-var(txn.fwd) req.fhdr(forwarded)
  http-request return status 200 content-type text/plain lf-string "user=%[req.fhdr(x-json),json_query('\\$.user.name')] id=%[req.fhdr(x-json),json_query('\\$.id','int'),add(1)] ok=%[req.fhdr(x-json),json_query('\\$.ok')] role=%[req.fhdr(x-json),json_query('\\$.roles[1]')] roles=%[req.fhdr(x-json),json_query('\\$.roles')] valid=%[var(txn.fwd),rfc7239_is_valid] for=%[var(txn.fwd),rfc7239_field(for)] nn=%[var(txn.fwd),rfc7239_field(for),rfc7239_n2nn] np=%[var(txn.fwd),rfc7239_field(for),rfc7239_n2np] proto=%[var(txn.fwd),rfc7239_field(proto)] date=%[req.fhdr(x-date),date]"
"""


def test_json_query_and_rfc7239_converters(sluice):
    """json_query on a JSON header, the rfc7239_* converters on Forwarded and date on an HTTP
    date; HAProxy 3.5 gives the same answers to the same requests."""
    port = free_port()
    sluice(header_conv_config(port), wait_ports=[port])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        def ask(headers):
            c.request("GET", "/", headers=headers)
            r = c.getresponse()
            return r.status, r.read().decode("latin-1")   # \u00XX gives one byte
        status, body = ask({
            "X-Json": '{"id":41,"user":{"name":"J\\u00f8e \\"x\\""},"ok":true,'
                      '"roles":["a","b"]}',
            "Forwarded": 'for="[2001:db8::1]:4711";proto=https;by=_lb',
            "X-Date": "Tue, 14 Nov 2023 22:13:20 GMT",
        })
        assert status == 200
        assert body == ('user=J\xf8e "x" id=42 ok=1 role=b roles=["a","b"] valid=1 '
                        'for=[2001:db8::1]:4711 nn=2001:db8::1 np=4711 proto=https '
                        'date=1700000000'), body
        # Malformed inputs give no sample (nothing in lf-string), never an error; "x" is a
        # string, which add() reads as 0.
        status, body = ask({
            "X-Json": '{"id":"x", "user":',
            "Forwarded": "for=1.2.3.4, for=5.6.7.8",
            "X-Date": "yesterday",
        })
        assert status == 200
        assert body == "user= id=1 ok= role= roles= valid=0 for= nn= np= proto= date=", body
    finally:
        c.close()
