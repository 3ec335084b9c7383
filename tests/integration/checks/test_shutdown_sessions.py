"""`on-marked-down shutdown-sessions` closes established connections of a server that goes
DOWN; without it they survive."""
import pytest

from sluice_harness import TcpServer, connect, free_port, recv_exact, wait_closed, wait_until

from checks_util import config, row


@pytest.mark.parametrize("shutdown", [True, False])
def test_on_marked_down(cfg, sluice, servers, short_tmp, shutdown):
    port, sock = free_port(), short_tmp / "stats.sock"
    echo = servers.echo()
    health = servers.add(TcpServer())   # the check port: accepts until we stop it
    opt = " on-marked-down shutdown-sessions" if shutdown else ""
    srv = f"    server s1 127.0.0.1:{echo.port} check port {health.port} inter 100ms fall 1{opt}"
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "s1")["check_status"] == "L4OK", timeout=3)
    with connect(port) as c:
        c.sendall(b"before\n")
        assert recv_exact(c, 7) == b"before\n"
        health.stop()
        wait_until(lambda: row(sock, "s1")["status"] == "DOWN", timeout=3)
        if shutdown:
            wait_closed(c, timeout=3)
        else:
            c.sendall(b"after\n")
            assert recv_exact(c, 6) == b"after\n"
