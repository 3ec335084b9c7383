"""The fetches that read the state of the process, the connection, the proxies' settings and
the stream's server connection (act_conn, txn.id32, dst_conn, the *_timeout family, bc_reused,
fc_err_str, ...), where HAProxy 3.5 answers them: in http-request rules, in http-response
rules, in HTTP and TCP log lines. The expected texts are HAProxy 3.5's for the same
configuration and requests (measured side by side when this was written; Debian's 2.6 lacks
most of these fetches). Values that move with time (dates, uptime, timers) are left out.
"""
from __future__ import annotations

import socket
import time

from sluice_harness import free_port, wait_until

DEFAULTS = """
defaults
  log global
  timeout client 5s
  timeout server 6s
  timeout connect 2s
  timeout tunnel 7s
  timeout queue 3s
  retries 4
"""

REQ_FMT = ("ac=%[act_conn] pc=%[prio_class] po=%[prio_offset] cns=%[cpu_ns_tot] "
           "lns=%[lat_ns_tot] fct=%[fe_client_timeout] ftt=%[fe_tarpit_timeout] "
           "cct=%[cur_client_timeout] dc=%[dst_conn] fe=%[fc_err] "
           "fes=%[fc_err_str] fen=%[fc_err_name] fhm=%[fc_http_major] fg=%[fc_glitches] "
           "fns=%[fc_nb_streams] fsl=%[fc_settings_streams_limit] fth=%[fc.timer.handshake]")
RES_FMT = ("rc=%[txn.conn_retries] rd=%[txn.redispatched] bst=%[be_server_timeout] "
           "btt=%[be_tunnel_timeout] bct=%[be_connect_timeout] bqt=%[be_queue_timeout] "
           "btp=%[be_tarpit_timeout] bmr=%[be_max_retries] cst=%[cur_server_timeout] "
           "ctt=%[cur_tunnel_timeout] cmr=%[cur_max_retries] bhm=%[bc_http_major] be=%[bc_err] "
           "bes=%[bc_err_str] bg=%[bc_glitches] bns=%[bc_nb_streams] br=%[bc_reused] "
           "bsq=%[bc_srv_queue] bbq=%[bc_be_queue]")


def http_config(port: int, echo: int) -> str:
    return f"""global
  log stdout format raw local0
{DEFAULTS}
  mode http
frontend fe
  bind 127.0.0.1:{port}
  log-format "L id=%[txn.id32] cst=%[cur_server_timeout] cct=%[cur_client_timeout] cmr=%[cur_max_retries]"
  http-request return status 200 content-type text/plain lf-string "{REQ_FMT}" if {{ path /a }}
  default_backend be
backend be
  http-response set-header x-q "id=%[txn.id32] {RES_FMT}"
  server s1 127.0.0.1:{echo}
frontend echo
  bind 127.0.0.1:{echo}
  http-request return status 200 content-type text/plain string ok
"""


def exchange(port: int, paths: list[str]) -> list[bytes]:
    """The responses to `paths`, sent one after the other on one keep-alive connection."""
    out = []
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        for p in paths:
            c.sendall(f"GET {p} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            got = b""
            while b"\r\n\r\n" not in got or not got.split(b"\r\n\r\n", 1)[1]:
                d = c.recv(4096)
                assert d, got
                got += d
            out.append(got)
    return out


def header(resp: bytes, name: bytes) -> str:
    for line in resp.split(b"\r\n\r\n")[0].split(b"\r\n"):
        k, _, v = line.partition(b":")
        if k.strip().lower() == name:
            return v.strip().decode()
    return ""


def test_state_fetches_in_http_rules_and_log(sluice):
    port, echo = free_port(), free_port()
    s = sluice(http_config(port, echo), wait_ports=[port, echo])
    a, b1, b2 = exchange(port, ["/a", "/b", "/b"])
    assert a.split(b"\r\n\r\n", 1)[1].decode() == (
        "ac=1 pc=0 po=0 cns=0 lns=0 fct=5000 ftt=0 cct=5000 dc=1 fe=0 fes=Success fen= "
        "fhm=1 fg=0 fns=1 fsl=1 fth=0")
    res = ("rc=0 rd=0 bst=6000 btt=7000 bct=2000 bqt=3000 btp=2000 bmr=4 cst=6000 ctt=7000 "
           "cmr=4 bhm=1 be=0 bes=Success bg=0 bns=1 br={} bsq=0 bbq=0")
    # txn.id32 numbers the streams of the process from 0 (the echo frontend's count too);
    # the second request to the server reuses the first one's connection.
    first, second = header(b1, b"x-q"), header(b2, b"x-q")
    assert first.split(" ", 1)[1] == res.format(0), first
    assert second.split(" ", 1)[1] == res.format(1), second
    assert int(second.split(" ")[0][3:]) > int(first.split(" ")[0][3:]) > 0
    wait_until(lambda: len([l for l in s.stdout().splitlines() if l.startswith("L ")]) >= 3, 5)
    lines = [l.split(" ", 2)[2] for l in s.stdout().splitlines() if l.startswith("L ")]
    # A request answered by the frontend has no backend side: its server values are 0.
    assert lines[:3] == ["cst=0 cct=5000 cmr=0", "cst=6000 cct=5000 cmr=4",
                         "cst=6000 cct=5000 cmr=4"], lines


def test_state_fetches_in_a_tcp_log_line(sluice):
    port, echo = free_port(), free_port()
    cfg = f"""global
  log stdout format raw local0
{DEFAULTS}
  mode tcp
frontend ft
  bind 127.0.0.1:{port}
  log-format "T dc=%[dst_conn] fct=%[fe_client_timeout] bst=%[be_server_timeout] rc=%[txn.conn_retries] br=%[bc_reused] bhm=%[bc_http_major] fhm=%[fc_http_major] fns=%[fc_nb_streams] bns=%[bc_nb_streams] fes=%[fc_err_str] bes=%[bc_err_str] pc=%[prio_class]"
  default_backend be
backend be
  server s1 127.0.0.1:{echo}
frontend echo
  mode http
  bind 127.0.0.1:{echo}
  http-request return status 200 content-type text/plain string ok
"""
    s = sluice(cfg, wait_ports=[port, echo])
    exchange(port, ["/"])
    time.sleep(0.1)
    wait_until(lambda: [l for l in s.stdout().splitlines() if l.startswith("T ")], 5)
    [line] = [l for l in s.stdout().splitlines() if l.startswith("T ")]
    assert line == ("T dc=1 fct=5000 bst=6000 rc=0 br=0 bhm=- fhm=- fns=1 bns=1 "
                    "fes=Success bes=Success pc=0"), line
