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


@pytest.mark.parametrize("shutdown", [True, False])
def test_on_marked_up_shutdown_backup_sessions(cfg, sluice, servers, short_tmp, shutdown):
    """An active server that comes UP closes the backup servers' sessions with
    `on-marked-up shutdown-backup-sessions`; without it they survive."""
    port, sock = free_port(), short_tmp / "stats.sock"
    active, backup = servers.echo(), servers.echo()
    health_port = free_port()   # nothing listens yet: s1 starts DOWN
    opt = " on-marked-up shutdown-backup-sessions" if shutdown else ""
    srv = (f"    server s1 127.0.0.1:{active.port} check port {health_port} inter 100ms rise 1 "
           f"init-state fully-down{opt}\n"
           f"    server b1 127.0.0.1:{backup.port} backup")
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    with connect(port) as c:
        c.sendall(b"before\n")
        assert recv_exact(c, 7) == b"before\n"   # through the backup
        assert backup.connections == 1
        servers.add(TcpServer(port=health_port))
        wait_until(lambda: row(sock, "s1")["status"] == "UP", timeout=3)
        if shutdown:
            wait_closed(c, timeout=3)
        else:
            c.sendall(b"after\n")
            assert recv_exact(c, 6) == b"after\n"
