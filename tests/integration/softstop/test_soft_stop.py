"""SIGUSR1 soft stop: stop listening at once, let established connections finish."""
import re
import signal
import socket
import time

import pytest

from sluice_harness import (DEFAULTS, CliConn, cli, connect, connect_refused, echo_roundtrip,
                            free_port, listen_config, parse_show_info, queued_clients, recv_all,
                            recv_exact, run_sluice, show_info, slow_factor, wait_until)


def test_sigusr1_closes_listener_and_drains(cfg, sluice, echo):
    port = free_port()
    s = sluice(cfg(listen_config(port, echo.port)), wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"before\n")
        assert recv_exact(c, 7) == b"before\n"

        s.signal(signal.SIGUSR1)
        wait_until(lambda: connect_refused(port), 2, message="the listener to close")
        assert s.running(), "sluice exited while a connection was still open"

        c.sendall(b"after\n")
        assert recv_exact(c, 6) == b"after\n"
        assert s.running()
    # The last connection closed: the process ends on its own, with status 0.
    assert s.wait_exit(timeout=5) == 0, s.describe()


def test_hard_stop_after_bounds_the_soft_stop(cfg, sluice, echo):
    port = free_port()
    s = sluice(cfg(listen_config(port, echo.port, "    hard-stop-after 1s")), wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"x\n")
        assert recv_exact(c, 2) == b"x\n"
        t0 = time.monotonic()
        s.signal(signal.SIGUSR1)
        rc = s.wait_exit(timeout=5)
        elapsed = time.monotonic() - t0
        assert elapsed < 3.0, f"exited {elapsed:.2f}s after SIGUSR1"
        assert elapsed > 0.5, f"hard-stop-after 1s, but exited after {elapsed:.2f}s"
    assert rc == 0, s.describe()
    # HAProxy's warnings, in order: the soft stop per proxy, then the hard stop.
    err = s.stderr()
    lines = ["Proxy app stopped (cumulated conns: FE: 1, BE: 1).",
             "soft-stop running for too long, performing a hard-stop.",
             "Proxy app hard-stopped (1 remaining conns will be closed)."]
    at = [err.find(f"[WARNING]  ({s.pid}) : {line}") for line in lines]
    assert -1 not in at and at == sorted(at), err


def test_sigttou_pauses_and_sigttin_resumes_the_listeners(cfg, sluice, echo):
    # HAProxy's pause and resume: while paused, new connections are refused; established ones
    # go on. The default action of these signals would stop the whole process instead.
    port = free_port()
    s = sluice(cfg(listen_config(port, echo.port)), wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"before\n")
        assert recv_exact(c, 7) == b"before\n"
        s.signal(signal.SIGTTOU)
        wait_until(lambda: connect_refused(port), 2, message="the listener to pause")
        c.sendall(b"paused\n")
        assert recv_exact(c, 7) == b"paused\n"
        s.signal(signal.SIGTTOU)               # a second pause changes nothing
        # (Pending signals are taken lowest number first, SIGTTIN before SIGTTOU: give the
        # second pause its time before resuming.)
        time.sleep(0.3)
        assert connect_refused(port)
        s.signal(signal.SIGTTIN)
        wait_until(lambda: not connect_refused(port), 2, message="the listener to resume")
        for _ in range(20):                    # every shard and thread serves again
            assert echo_roundtrip(port) == b"ping\n"
        c.sendall(b"after\n")
        assert recv_exact(c, 6) == b"after\n"
    s.signal(signal.SIGTERM)
    assert s.wait_exit(timeout=5) == 0, s.describe()


def test_sigusr2_is_ignored(cfg, sluice, echo):
    # HAProxy reloads on SIGUSR2 only in master-worker mode; without it the process survives.
    port = free_port()
    s = sluice(cfg(listen_config(port, echo.port)), wait_ports=[port])
    with connect(port) as c:
        s.signal(signal.SIGUSR2)
        time.sleep(0.2)
        assert s.running(), s.describe()
        c.sendall(b"still\n")
        assert recv_exact(c, 6) == b"still\n"
    assert echo_roundtrip(port) == b"ping\n"


def test_a_signal_right_after_the_port_listens_is_handled(cfg, sluice, echo):
    # Signals are blocked before the first listener opens: a SIGUSR2 sent the moment the port
    # accepts connections is ignored (not the default action, which kills the process), and a
    # SIGUSR1 sent that moment is a soft stop (exit 0). The binary that blocked them only after
    # binding was killed in 16 of 30 such starts (release) and 30 of 30 (ASan).
    port = free_port()
    path = cfg(listen_config(port, echo.port))
    for _ in range(5):
        s = sluice(path)
        deadline = time.monotonic() + 10 * slow_factor()
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.001)
        s.signal(signal.SIGUSR2)
        time.sleep(0.05)
        assert s.running(), s.describe()
        s.signal(signal.SIGUSR1)
        assert s.wait_exit(timeout=10) == 0, s.describe()


def http_config(port, server_port, sock):
    return f"""
global
    nbthread 2
    stats socket {sock} level admin
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
listen app
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{server_port}
"""


def test_soft_stop_serves_the_first_request_of_a_fresh_connection(cfg, sluice, nginx, short_tmp):
    # A connection accepted just before a reload has not sent its request yet: it is not an
    # idle keep-alive connection. HAProxy serves that request (with `connection: close`) and
    # only then closes; closing it at once fails a client that did nothing wrong.
    port, sock = free_port(), short_tmp / "stats.sock"
    s = sluice(cfg(http_config(port, nginx.port, sock)), wait_ports=[port], wait_unix=[sock])
    with connect(port) as fresh, connect(port) as idle:
        idle.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        assert recv_exact(idle, 6, timeout=5) == b"HTTP/1"
        wait_until(lambda: int(show_info(str(sock)).get("CurrConns", "0")) >= 2, 5,
                   message="both connections to be accepted")
        s.signal(signal.SIGUSR1)
        wait_until(lambda: connect_refused(port), 2, message="the listener to close")
        # The keep-alive connection waiting for its next request is closed...
        idle.settimeout(5)
        while idle.recv(65536):
            pass
        # ...the fresh one is served, then closed.
        assert s.running(), s.describe()
        fresh.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        answer = recv_all(fresh, timeout=5)
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert answer.endswith(b"\r\n\r\nhello\n"), answer
    assert b"\r\nconnection: close\r\n" in answer.lower(), answer
    assert s.wait_exit(timeout=5) == 0, s.describe()


def _prompt(sock) -> CliConn:
    """A CLI connection in prompt mode, opened before a stop: it stays served through it."""
    c = CliConn(str(sock))
    c.send("prompt\n")
    c.read_until("\n> ")
    return c


def _info(c: CliConn) -> dict[str, str]:
    c.send("show info\n")
    return parse_show_info(c.read_until("\n> "))


def test_show_info_during_soft_stop(cfg, sluice, echo, short_tmp):
    # HAProxy deletes the listeners it stops, the stats sockets' too: they leave Listeners and
    # Jobs, and a new CLI connection is refused. One opened before stays served.
    port, sock = free_port(), short_tmp / "stats.sock"
    s = sluice(cfg(listen_config(port, echo.port, f"    stats socket {sock} level admin")),
               wait_ports=[port], wait_unix=[sock])
    with connect(port) as c, _prompt(sock) as watch:
        c.sendall(b"x\n")
        assert recv_exact(c, 2) == b"x\n"
        info = _info(watch)
        assert (info["Stopping"], info["Listeners"], info["Jobs"]) == ("0", "2", "4"), info
        s.signal(signal.SIGUSR1)
        wait_until(lambda: connect_refused(port), 2, message="the listener to close")
        # Jobs: the held connection and this CLI connection (HAProxy 3.5: Jobs 2, Listeners 0).
        def stopped_counts():
            info = _info(watch)
            return (info["Stopping"], info["Listeners"], info["Jobs"], info["CurrConns"])
        wait_until(lambda: stopped_counts() == ("1", "0", "2", "1"), 5,
                   message=lambda: f"show info during the soft stop: {stopped_counts()}")
        with pytest.raises(ConnectionRefusedError):
            cli(str(sock), "show info")
    assert s.wait_exit(timeout=5) == 0, s.describe()


def test_frontend_commands_while_soft_stopping(cfg, sluice, echo, short_tmp):
    # A soft stop shuts every frontend down: HAProxy 3.5's answers, word for word.
    port, sock = free_port(), short_tmp / "stats.sock"
    s = sluice(cfg(listen_config(port, echo.port, f"    stats socket {sock} level admin")),
               wait_ports=[port], wait_unix=[sock])
    with connect(port) as c, _prompt(sock) as watch:
        c.sendall(b"x\n")
        assert recv_exact(c, 2) == b"x\n"
        s.signal(signal.SIGUSR1)
        wait_until(lambda: connect_refused(port), 2, message="the listener to close")
        for command, answer in [
                ("disable frontend app", "Frontend was previously shut down, cannot disable.\n"),
                ("enable frontend app", "Frontend was previously shut down, cannot enable.\n"),
                ("shutdown frontend app", "Frontend was already shut down.\n")]:
            watch.send(command + "\n")
            assert watch.read_until("\n> ") == answer + "\n> ", command
        assert connect_refused(port), "enable frontend must not reopen a stopping listener"
    assert s.wait_exit(timeout=5) == 0, s.describe()


def test_grace_keeps_accepting_before_the_soft_stop(cfg, sluice, echo, short_tmp):
    # `grace`: at SIGUSR1 the process reports itself stopping but keeps accepting until the
    # delay ends, then soft-stops (HAProxy's notices on stderr).
    port, sock = free_port(), short_tmp / "stats.sock"
    s = sluice(cfg(listen_config(port, echo.port, f"    grace 3s\n    stats socket {sock} level admin")),
               wait_ports=[port], wait_unix=[sock])
    s.signal(signal.SIGUSR1)
    wait_until(lambda: "Scheduling a soft-stop in 3000 ms." in s.stderr(), 2,
               message="the grace notice")
    assert show_info(str(sock))["Stopping"] == "1"
    assert echo_roundtrip(port) == b"ping\n"          # still accepting
    wait_until(lambda: connect_refused(port), 10, message="the soft stop after the grace")
    assert "Grace period expired, proceeding with soft-stop now." in s.stderr(), s.describe()
    assert s.wait_exit(timeout=5) == 0, s.describe()


def test_grace_rejects_a_malformed_time(cfg):
    path = cfg(f"global\n    grace 1x\n{DEFAULTS}")
    rc, out, err = run_sluice(["-c", "-f", str(path)])
    assert rc != 0
    assert "unexpected character 'x' in argument to <grace>." in err, err


def test_soft_stop_serves_the_connections_waiting_in_the_backlog(cfg, sluice, echo):
    # Connections whose handshake the kernel completed but that no thread accepted yet sit in
    # the listening socket's backlog; shutting the socket down resets them. After a reload
    # they are clients that the new process never sees, so the old one takes them first.
    # (`maxconnrate 1` keeps them waiting there: the first connection spends the second.)
    port = free_port()
    s = sluice(cfg(listen_config(port, echo.port, "    maxconnrate 1")), wait_ports=[port])
    clients = queued_clients(port, 6)
    try:
        s.signal(signal.SIGUSR1)
        for i, c in enumerate(clients[1:], start=1):
            assert recv_exact(c, 3, timeout=5) == b"%02d\n" % i, f"client {i}"
    finally:
        for c in clients:
            c.close()
    assert s.wait_exit(timeout=5) == 0, s.describe()


def test_stats_socket_answers_until_the_last_worker_drained(cfg, sluice, echo, short_tmp):
    # The first worker serves the stats sockets. When it has drained its own connections while
    # another worker still has some, it stays, so that the end of the drain can be watched.
    port, sock = free_port(), short_tmp / "stats.sock"
    s = sluice(cfg(listen_config(
        port, echo.port,
        f"    tune.listener.multi-queue fair\n    stats socket {sock} level admin")),
        wait_ports=[port], wait_unix=[sock])
    held = [connect(port), connect(port)]
    watch = _prompt(sock)
    try:
        for c in held:
            c.sendall(b"x\n")
            assert recv_exact(c, 2) == b"x\n"
        watch.send("show sess\n")
        text = watch.read_until("\n> ")
        by_tid = {}
        for c in held:
            src = "127.0.0.1:%d" % c.getsockname()[1]
            line = next(l for l in text.splitlines() if f" src={src} " in l)
            by_tid[re.search(r" tid=(\d+) ", line).group(1)] = c
        assert set(by_tid) == {"1", "2"}, text   # fair: one connection per thread
        s.signal(signal.SIGUSR1)
        wait_until(lambda: connect_refused(port), 2, message="the listener to close")
        by_tid["1"].close()   # the first worker has nothing left
        wait_until(lambda: _info(watch)["CurrConns"] == "1", 5)
        assert _info(watch)["Stopping"] == "1"
        by_tid["2"].sendall(b"y\n")
        assert recv_exact(by_tid["2"], 2) == b"y\n"
    finally:
        watch.close()
        for c in held:
            c.close()
    assert s.wait_exit(timeout=5) == 0, s.describe()
