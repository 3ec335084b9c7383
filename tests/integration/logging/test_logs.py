"""Traffic logs (`option tcplog`) to UDP syslog, a unix datagram socket and stdout."""
import re

from sluice_harness import (UnixDgramLogReceiver, echo_roundtrip, free_port, refused_port,
                            wait_until)


def config(port, server_port, log_line):
    return f"""
global
    nbthread 2
    {log_line}
defaults
    mode tcp
    log global
    option tcplog
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe_log
    bind 127.0.0.1:{port}
    default_backend be_log
backend be_log
    server s1 127.0.0.1:{server_port}
"""


def test_udp_rfc3164(cfg, sluice, echo, udp_log):
    port = free_port()
    s = sluice(cfg(config(port, echo.port, f"log 127.0.0.1:{udp_log.port} local0")),
               wait_ports=[port])
    assert echo_roundtrip(port) == b"ping\n"
    msg = udp_log.wait_for(lambda m: "be_log/s1" in m)
    assert msg.startswith("<134>"), msg          # local0 (16) * 8 + info (6)
    assert f"sluice[{s.pid}]:" in msg, msg
    assert "be_log/s1" in msg, msg
    # rfc3164: <PRI>Mmm dd hh:mm:ss
    assert re.match(r"<134>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d ", msg), msg
    # one message per datagram, ending with LF as HAProxy's do
    assert msg.endswith("\n") and msg.count("\n") == 1, repr(msg)


def test_udp_rfc5424(cfg, sluice, echo, udp_log):
    port = free_port()
    s = sluice(cfg(config(port, echo.port,
                          f"log 127.0.0.1:{udp_log.port} format rfc5424 local0")),
               wait_ports=[port])
    assert echo_roundtrip(port) == b"ping\n"
    msg = udp_log.wait_for(lambda m: "be_log/s1" in m)
    assert msg.startswith("<134>1 "), msg
    assert str(s.pid) in msg


def test_udp_raw(cfg, sluice, echo, udp_log):
    port = free_port()
    sluice(cfg(config(port, echo.port, f"log 127.0.0.1:{udp_log.port} format raw local0")),
           wait_ports=[port])
    assert echo_roundtrip(port) == b"ping\n"
    msg = udp_log.wait_for(lambda m: "be_log/s1" in m)
    assert not msg.startswith("<"), msg
    assert "sluice[" not in msg, msg
    assert "be_log/s1" in msg


def test_stdout_raw(cfg, sluice, echo):
    port = free_port()
    s = sluice(cfg(config(port, echo.port, "log stdout format raw local0")), wait_ports=[port])
    assert echo_roundtrip(port) == b"ping\n"
    wait_until(lambda: "be_log/s1" in s.stdout(), 5,
               message=lambda: f"a log line on stdout\n{s.describe()}")
    line = next(l for l in s.stdout().splitlines() if "be_log/s1" in l)
    assert "be_log/s1" in line
    assert not line.startswith("<")


def test_unix_datagram_target(cfg, sluice, echo, short_tmp):
    path = short_tmp / "log.sock"
    with UnixDgramLogReceiver(str(path)) as rcv:
        port = free_port()
        s = sluice(cfg(config(port, echo.port, f"log {path} local0")), wait_ports=[port])
        assert echo_roundtrip(port) == b"ping\n"
        msg = rcv.wait_for(lambda m: "be_log/s1" in m)
        assert msg.startswith("<134>"), msg
        assert f"sluice[{s.pid}]:" in msg
        assert msg.endswith("\n") and msg.count("\n") == 1, repr(msg)


def test_proxy_start_is_logged_at_notice(cfg, sluice, echo, udp_log):
    # As HAProxy: "Proxy <name> started." goes to the global log targets at NOTICE (local0 -> 133).
    port = free_port()
    sluice(cfg(config(port, echo.port, f"log 127.0.0.1:{udp_log.port} local0")), wait_ports=[port])
    msg = udp_log.wait_for(lambda m: "Proxy fe_log started." in m)
    assert msg.startswith("<133>"), msg


def test_dontlognull_skips_empty_sessions(cfg, sluice, echo, udp_log):
    import socket
    port = free_port()
    text = config(port, echo.port, f"log 127.0.0.1:{udp_log.port} format raw local0")
    text = text.replace("option tcplog", "option tcplog\n    option dontlognull")
    sluice(cfg(text), wait_ports=[port])
    socket.create_connection(("127.0.0.1", port), timeout=5).close()   # no data: not logged
    assert echo_roundtrip(port) == b"ping\n"                           # data: logged
    udp_log.wait_for(lambda m: "be_log/s1" in m)
    msgs = udp_log.texts()
    assert sum("be_log/s1" in m for m in msgs) == 1, msgs


def test_retries_field_has_a_plus_after_a_redispatch(cfg, sluice, echo, udp_log):
    # The last field of the connection counts (actconn/feconn/beconn/srv_conn/retries) is the
    # retries, "+"-prefixed when the session was redispatched. Roundrobin over a refused server
    # and a live one: the sessions that hit the refused one first leave it at once (one retry,
    # redispatched).
    port, dead = free_port(), refused_port()
    text = config(port, echo.port, f"log 127.0.0.1:{udp_log.port} format raw local0")
    text = text.replace(f"    server s1 127.0.0.1:{echo.port}",
                        f"    option redispatch\n    server s0 127.0.0.1:{dead}\n"
                        f"    server s1 127.0.0.1:{echo.port}\n    server s2 127.0.0.1:{echo.port}")
    sluice(cfg(text), wait_ports=[port])
    for _ in range(4):
        assert echo_roundtrip(port) == b"ping\n"
    wait_until(lambda: len([m for m in udp_log.texts() if "be_log/" in m]) >= 4,
               message="4 log lines")
    fields = [m.split()[-2].split("/")[-1] for m in udp_log.texts() if "be_log/" in m]
    assert "+1" in fields, fields
    assert set(fields) <= {"0", "+1"}, fields
