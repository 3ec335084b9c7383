"""What a stream knows of itself, as HAProxy 3.5 answers it: the last final rule that matched
(last_rule_file, last_rule_line, last_entity), its termination state (txn.sess_term_state),
the error codes of its connections (fc_err, bc_err and their texts), cpu_calls and cpu_usage_*,
the timeouts a TCP log line reports (cur_*_timeout), and the tcp-request content rules of an
HTTP backend and the tcp-response content rules of HTTP mode. The expected texts are HAProxy
3.5-dev5's for the same configurations and requests (run side by side when this was written);
cpu_calls counts differently by design (events here, task wake-ups there) and is only checked
to be counted."""
from __future__ import annotations

import http.client
import re
import socket
import struct
import time

from fake_servers import TcpServer
from sluice_harness import free_port, line_of, refused_port, run_sluice, wait_until


def log_lines(s, prefix: str) -> list[str]:
    return [ln[len(prefix):] for ln in s.stdout().splitlines() if ln.startswith(prefix)]


def wait_lines(s, prefix: str, n: int) -> list[str]:
    wait_until(lambda: len(log_lines(s, prefix)) >= n, 5, message=f"{n} '{prefix}' lines")
    return log_lines(s, prefix)


def get(port: int, path: str) -> bytes:
    """The raw answer to one request (b"" when the connection closes without one)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        got = b""
        while True:
            try:
                d = c.recv(65536)
            except ConnectionResetError:
                break
            if not d:
                break
            got += d
        return got


def status(resp: bytes) -> int:
    return int(resp.split(b" ", 2)[1]) if resp else -1


def reset_close(c: socket.socket) -> None:
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()


def reset_after_request(c: socket.socket, _srv) -> None:
    """A server that fails: reads the request and resets the connection."""
    c.settimeout(2)
    c.recv(65536)
    reset_close(c)


def echo_frontend(port: int) -> str:
    """An HTTP frontend that answers every request itself: the servers of these tests."""
    return f"""frontend echo
  mode http
  bind 127.0.0.1:{port}
  http-request return status 200 content-type text/plain string ok
"""


def start_named(sluice, tmp_path, name: str, cfg: str, ports: list[int]):
    """sluice on `cfg` written to `name` (the rules' file:line name it), and that path."""
    path = tmp_path / name
    path.write_text(cfg)
    return sluice(str(path), wait_ports=ports), path


HTTP_HEAD = """global
  log stdout format raw local0
defaults
  mode http
  log global
  timeout client 5s
  timeout server 5s
  timeout connect 300ms
  retries 1
"""


def test_last_rule_and_termination_state(sluice, tmp_path):
    """The final rule that matched, of every HTTP rule set and of the frontend's and the
    backend's tcp-request content rules; nothing when only non-final rules ran. The
    termination state is `--` while rules run and the two letters in the log line."""
    port, echo = free_port(), free_port()
    cfg = HTTP_HEAD + f"""frontend f
  bind 127.0.0.1:{port}
  log-format "R %HP lrf=%[last_rule_file] lrl=%[last_rule_line] le=%[last_entity] st=%[txn.sess_term_state] rq=%[var(txn.st)] rs=%[var(txn.rs)] %ST"
  http-request set-var(txn.p) path
  http-request set-var(txn.st) txn.sess_term_state
  http-response set-var(txn.rs) txn.sess_term_state
  tcp-request content accept if {{ path /tcpacc }}
  http-request allow if {{ path /allow }}
  http-request redirect location /x if {{ path /redir }}
  http-request deny if {{ path /deny }}
  http-response deny if {{ var(txn.p) -m str /rdeny }}
  http-after-response set-header X-A b
  http-after-response allow if {{ var(txn.p) -m str /aallow }}
  default_backend b
backend b
  tcp-request content accept if {{ path /bacc }}
  http-request allow if {{ path /ballow }}
  http-response allow if {{ var(txn.p) -m str /brallow }}
  server s 127.0.0.1:{echo}
""" + echo_frontend(echo)
    s, path = start_named(sluice, tmp_path, "rules.cfg", cfg, [port, echo])
    paths = ["/tcpacc", "/allow", "/redir", "/deny", "/rdeny", "/aallow", "/bacc", "/ballow",
             "/brallow", "/none"]
    got = [status(get(port, p)) for p in paths]
    assert got == [200, 200, 302, 403, 502, 200, 200, 200, 200, 200]
    lines = wait_lines(s, "R ", len(paths))

    def at(needle: str) -> str:
        n = line_of(path, needle)
        return f"lrf={path} lrl={n} le={path}:{n}"

    want = [
        f"/tcpacc {at('accept if { path /tcpacc }')} st=-- rq=-- rs=-- 200",
        f"/allow {at('allow if { path /allow }')} st=-- rq=-- rs=-- 200",
        f"/redir {at('redirect location')} st=LR rq=-- rs=- 302",
        f"/deny {at('deny if { path /deny }')} st=PR rq=-- rs=- 403",
        f"/rdeny {at('deny if { var(txn.p) -m str /rdeny }')} st=PH rq=-- rs=-- 502",
        f"/aallow {at('allow if { var(txn.p) -m str /aallow }')} st=-- rq=-- rs=-- 200",
        f"/bacc {at('accept if { path /bacc }')} st=-- rq=-- rs=-- 200",
        f"/ballow {at('allow if { path /ballow }')} st=-- rq=-- rs=-- 200",
        f"/brallow {at('allow if { var(txn.p) -m str /brallow }')} st=-- rq=-- rs=-- 200",
        "/none lrf=- lrl=- le=- st=-- rq=-- rs=-- 200",
    ]
    assert lines == want


def test_connection_error_codes(sluice):
    """fc_err / bc_err and their texts: a refused server (after the retry), a server that
    resets, a client that resets inside its request head (the 400 of a head that never
    parsed), and one that resets while its request waits to be retried (no server error
    then: the failed attempt was given back)."""
    port = free_port()
    srv = TcpServer(reset_after_request)
    dead = refused_port()
    cfg = HTTP_HEAD + f"""frontend f
  bind 127.0.0.1:{port}
  log-format "E fe=%[fc_err] fes=%[fc_err_str] fen=%[fc_err_name] be=%[bc_err] bes=%[bc_err_str] ben=%[bc_err_name] %ST %tsc cc=%[cpu_calls]"
  error-log-format "E fe=%[fc_err] fes=%[fc_err_str] fen=%[fc_err_name] be=%[bc_err] %ST %tsc"
  use_backend rst if {{ path /rst }}
  default_backend dead
backend dead
  server s 127.0.0.1:{dead}
backend rst
  server s 127.0.0.1:{srv.port}
"""
    try:
        s = sluice(cfg, wait_ports=[port])
        assert status(get(port, "/x")) == 503
        assert status(get(port, "/rst")) == 502
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"GET / HTTP/1.1\r\n")
        time.sleep(0.1)
        reset_close(c)
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.1)   # the first attempt was refused; the retry waits 300 ms
        reset_close(c)
        lines = wait_lines(s, "E ", 4)
    finally:
        srv.stop()
    calls = [int(re.search(r" cc=(\d+)$", ln).group(1)) for ln in lines if " cc=" in ln]
    assert len(calls) == 3 and all(n >= 1 for n in calls), lines
    lines = [re.sub(r" cc=\d+$", "", ln) for ln in lines]
    assert lines == [
        "fe=0 fes=Success fen=- be=47 bes=ECONNREFUSED returned by OS ben=EREFUSED 503 SC--",
        "fe=0 fes=Success fen=- be=48 bes=ECONNRESET returned by OS ben=ERESET 502 SH--",
        "fe=48 fes=ECONNRESET returned by OS fen=ERESET be=- 400 CR--",
        "fe=48 fes=ECONNRESET returned by OS fen=ERESET be=- bes=- ben=- -1 CC--",
    ]


def test_tcp_log_line_timeouts_errors_and_rules(sluice, tmp_path):
    """A TCP log line: the timeouts the stream ended with (the client's own, none on the
    server side and the tunnel, whichever side closed first or when the server never
    answered), the server's refusal, the tcp-request content rule that accepted, the
    termination state."""
    port, port2, echo = free_port(), free_port(), free_port()
    dead = refused_port()
    cfg = f"""global
  log stdout format raw local0
defaults
  mode tcp
  log global
  timeout client 5s
  timeout server 6s
  timeout connect 300ms
  timeout tunnel 7s
  retries 0
frontend ft
  bind 127.0.0.1:{port}
  log-format "T cc=%[cur_client_timeout] cs=%[cur_server_timeout] ct=%[cur_tunnel_timeout] be=%[bc_err] ben=%[bc_err_name] le=%[last_entity] st=%[txn.sess_term_state] n=%[cpu_calls]"
  tcp-request inspect-delay 1s
  tcp-request content accept if {{ req.len gt 0 }}
  default_backend be
frontend ft2
  bind 127.0.0.1:{port2}
  log-format "U cc=%[cur_client_timeout] cs=%[cur_server_timeout] ct=%[cur_tunnel_timeout] be=%[bc_err] bes=%[bc_err_str] le=%[last_entity] st=%[txn.sess_term_state]"
  default_backend gone
backend be
  server s1 127.0.0.1:{echo}
backend gone
  server s1 127.0.0.1:{dead}
""" + echo_frontend(echo)
    s, path = start_named(sluice, tmp_path, "tcp.cfg", cfg, [port, port2, echo])
    assert status(get(port, "/")) == 200   # the server closes first
    # The client closes first: its FIN goes to the server, which then closes too.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert c.recv(65536).startswith(b"HTTP/1.1 200")
        c.shutdown(socket.SHUT_WR)
        while c.recv(65536):
            pass
    assert get(port2, "/") == b""
    t = wait_lines(s, "T ", 2)
    n = line_of(path, "accept if { req.len gt 0 }")
    assert [re.sub(r" n=\d+$", "", ln) for ln in t] == [
        f"cc=5000 cs=0 ct=0 be=0 ben=- le={path}:{n} st=--",
        f"cc=5000 cs=0 ct=0 be=0 ben=- le={path}:{n} st=--"]
    assert all(int(ln.rsplit("n=", 1)[1]) >= 1 for ln in t)
    [u] = wait_lines(s, "U ", 1)
    assert u == "cc=5000 cs=0 ct=0 be=47 bes=ECONNREFUSED returned by OS le=- st=SC"


def test_tcp_rules_of_http_backends(sluice, tmp_path):
    """HTTP mode runs a backend's tcp-request content rules when the request enters it
    (before its http-request rules: a reject closes without an answer, logged -1 PR with no
    server) and its tcp-response content rules on the response head (reject: nothing sent,
    -1 PD; close: a 502, SH)."""
    port, echo = free_port(), free_port()
    cfg = HTTP_HEAD + f"""frontend f
  bind 127.0.0.1:{port}
  log-format "B %HP %ST %ts %b/%s %[var(txn.x)] %[var(txn.r)] %[last_rule_line]"
  default_backend b
backend b
  tcp-request content set-var(txn.x) str(bx)
  http-request set-var(txn.p) path
  tcp-request content reject if {{ path /brej }}
  tcp-request content accept if {{ path /bacc }}
  tcp-response content set-var(txn.r) str(rx)
  tcp-response content reject if {{ var(txn.p) -m str /rrej }}
  tcp-response content close if {{ var(txn.p) -m str /rclose }}
  server s 127.0.0.1:{echo}
""" + echo_frontend(echo)
    s, path = start_named(sluice, tmp_path, "b.cfg", cfg, [port, echo])
    got = [status(get(port, p)) for p in ["/brej", "/bacc", "/rrej", "/rclose", "/x"]]
    assert got == [-1, 200, -1, 502, 200]
    lines = wait_lines(s, "B ", 5)
    ln = {k: line_of(path, k) for k in ("reject if { path", "accept if { path", "reject if { var",
                                        "close if { var")}
    assert lines == [
        f"/brej -1 PR b/<NOSRV> bx - {ln['reject if { path']}",
        f"/bacc 200 -- b/s bx rx {ln['accept if { path']}",
        f"/rrej -1 PD b/s bx rx {ln['reject if { var']}",
        f"/rclose 502 SH b/s bx rx {ln['close if { var']}",
        "/x 200 -- b/s bx rx -",
    ]


def test_cpu_usage_fetches(sluice):
    """cpu_usage_thr|grp|proc: the worker's share of a CPU over the last second. One worker
    kept busy for over a second by a client on a keep-alive connection reports a share above
    0, and with a single thread the three agree; cpu_calls counts the events of the stream."""
    port = free_port()
    cfg = HTTP_HEAD.replace("global\n", "global\n  nbthread 1\n", 1) + f"""frontend f
  bind 127.0.0.1:{port}
  http-request return status 200 content-type text/plain lf-string "%[cpu_usage_thr] %[cpu_usage_grp] %[cpu_usage_proc] %[cpu_calls]"
"""
    sluice(cfg, wait_ports=[port])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    deadline = time.monotonic() + 2.5   # over two of the worker's one-second samples
    while time.monotonic() < deadline:
        c.request("GET", "/")
        last = c.getresponse().read()
    c.close()
    body = last.decode()
    thr, grp, proc, calls = (int(v) for v in body.split())
    assert 0 < thr <= 100 and grp == thr and proc == thr, body
    assert calls >= 1, body


def test_http_mode_tcp_rules_refused_with_a_message(tmp_path):
    """What HTTP mode cannot run is refused at start-up, with its line: the raw response's
    fetches in tcp-response content, silent-drop in a backend's tcp-request content."""
    for rule, words in [
        ("tcp-response content reject if { res.len gt 0 }",
         "fetch 'res.len' reads the raw response"),
        ("tcp-request content silent-drop if { path /x }",
         "'tcp-request content silent-drop' in HTTP mode (backend 'b') is not supported"),
    ]:
        cfg = tmp_path / "bad.cfg"
        cfg.write_text(f"""defaults
  mode http
  timeout client 1s
  timeout server 1s
  timeout connect 1s
backend b
  {rule}
  server s 127.0.0.1:1
""")
        rc, _, err = run_sluice(["-c", "-f", str(cfg)])
        assert rc != 0
        assert f"[{cfg}:7]" in err and words in err, err


def test_tcp_request_and_response_variables_pruned(sluice):
    """TCP mode: req.* is gone once the response analysis begins (tcp-response rules do not
    see it) and res.* by the log line; txn.* and sess.* last, as HAProxy 3.5 logs them."""
    port, echo = free_port(), free_port()
    cfg = HTTP_HEAD.replace("mode http", "mode tcp") + f"""frontend f
  bind 127.0.0.1:{port}
  log-format "V req=%[var(req.a)] res=%[var(res.b)] txn=%[var(txn.c)] sess=%[var(sess.d)] rr=%[var(txn.rr)]"
  tcp-request session set-var(sess.d) str(d)
  tcp-request content set-var(req.a) str(a)
  tcp-request content set-var(txn.c) str(c)
  default_backend b
backend b
  tcp-response content set-var(txn.rr) var(req.a)
  tcp-response content set-var(res.b) str(b)
  server s 127.0.0.1:{echo}
""" + echo_frontend(echo)
    s = sluice(cfg, wait_ports=[port, echo])
    assert status(get(port, "/")) == 200
    assert wait_lines(s, "V ", 1) == ["req=- res=- txn=c sess=d rr=-"]
