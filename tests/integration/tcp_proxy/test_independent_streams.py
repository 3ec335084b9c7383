"""option independent-streams in TCP mode: data sent to a side no longer postpones that side's
timeout. An upload to a server that never answers outlives `timeout server` without the
option, and ends after it with the option in the backend (HAProxy 3.5's behaviour, measured).
Passes with SLUICE_BIN pointing at HAProxy 3.5 -db."""
from __future__ import annotations

import socket
import threading
import time

from sluice_harness import DEFAULTS, free_port


def silent_sink() -> socket.socket:
    """A server that reads everything and never sends a byte."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)

    def drain(c: socket.socket):
        c.settimeout(10)
        try:
            while c.recv(65536):
                pass
        except OSError:
            pass
        c.close()

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=drain, args=(c,), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    return srv


def upload_lasts(port: int, seconds: float) -> float:
    """Sends a little every 100 ms for `seconds`; returns when the proxy closed the connection
    (seconds after the start), or `seconds` when it stayed open."""
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.setblocking(False)
        while time.monotonic() - t0 < seconds:
            try:
                if c.recv(100) == b"":
                    return time.monotonic() - t0
            except BlockingIOError:
                pass
            except OSError:
                return time.monotonic() - t0
            try:
                c.send(b"y" * 10)
            except OSError:
                return time.monotonic() - t0
            time.sleep(0.1)
    return seconds


def test_independent_streams_lets_the_server_timeout_run(cfg, sluice):
    sink = silent_sink()
    port = sink.getsockname()[1]
    p_on, p_off = free_port(), free_port()
    sluice(cfg(f"""
{DEFAULTS.replace("timeout server 10s", "timeout server 1s")}
listen on
    bind 127.0.0.1:{p_on}
    option independent-streams
    server s1 127.0.0.1:{port}
listen off
    bind 127.0.0.1:{p_off}
    server s1 127.0.0.1:{port}
"""), wait_ports=[p_on, p_off])
    try:
        assert upload_lasts(p_off, 2.5) >= 2.5          # each send postpones timeout server
        ended = upload_lasts(p_on, 4.0)
        assert 0.9 <= ended < 2.5, ended                # timeout server, counted from the connect
    finally:
        sink.close()
