"""The accept path across threads: multi-queue on/fair/off, bind-line maxconn across shards,
and no stuck listener under churn: HAProxy's behaviour, except that a bind line's `maxconn`
covers the whole line rather than each socket."""
import socket
import threading

from sluice_harness import DEFAULTS, EchoServer, cli, connect, echo_roundtrip, free_port, wait_until


def conf(global_extra, bind_opts, port, sock, server_port):
    return f"""
global
{global_extra}
    stats socket {sock} level admin
{DEFAULTS}
listen px
    bind 127.0.0.1:{port} {bind_opts}
    server s1 127.0.0.1:{server_port}
"""


def activity(sock):
    out = cli(str(sock), "show activity")
    metrics = {}
    for line in out.splitlines():
        if "[" in line:
            name, rest = line.split(":", 1)
            total, per = rest.split("[", 1)
            metrics[name.strip()] = (int(total), [int(x) for x in per.strip(" ]").split()])
    return metrics


def hold(port, n):
    conns = []
    for i in range(n):
        c = connect(port)
        c.sendall(b"x")
        conns.append(c)
    for c in conns:
        assert c.recv(1) == b"x"     # served: the session is established on its thread
    return conns


def test_multi_queue_on_balances_held_connections(cfg, sluice, short_tmp):
    # One socket served by 4 threads: every new connection goes to the least loaded thread,
    # so with connections held open the threads differ by at most one per thread that accepts
    # at the same moment: two threads accepting together read the same loads and may both
    # pick the same least loaded one (a TSan run saw [10, 11, 10, 9] with two acceptors).
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf("    nbthread 4\n    tune.listener.multi-queue on", "", port, sock, echo.port)),
               wait_ports=[port], wait_unix=[sock])
        conns = hold(port, 40)
        a = activity(sock)
        started = a["sess_started"][1]
        assert sum(started) == 40
        acceptors = sum(1 for n in a["accepted"][1] if n)
        assert max(started) - min(started) <= max(1, acceptors), a
        assert a["accepted"][0] == 40
        assert a["accq_full"][0] == 0
        for c in conns:
            c.close()


def test_multi_queue_fair_is_round_robin(cfg, sluice, short_tmp):
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf("    nbthread 4\n    tune.listener.multi-queue fair", "", port, sock, echo.port)),
               wait_ports=[port], wait_unix=[sock])
        for i in range(40):
            assert echo_roundtrip(port) == b"ping\n"
        started = activity(sock)["sess_started"][1]
        assert started == [10, 10, 10, 10], started


def test_multi_queue_off_never_hands_off(cfg, sluice, short_tmp):
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf("    nbthread 4\n    tune.listener.multi-queue off", "", port, sock, echo.port)),
               wait_ports=[port], wait_unix=[sock])
        conns = hold(port, 20)
        a = activity(sock)
        assert a["accq_pushed"][0] == 0
        assert a["accepted"][1] == a["sess_started"][1]
        for c in conns:
            c.close()


def test_by_group_shards_serve_their_own_threads(cfg, sluice, short_tmp):
    # Two groups, two sockets: each connection is served by a thread of the group whose socket
    # the kernel chose; a hand-off never crosses to the other group.
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf("    nbthread 4\n    thread-groups 2", "", port, sock, echo.port)),
               wait_ports=[port], wait_unix=[sock])
        conns = hold(port, 60)
        rows = [l.split() for l in cli(str(sock), "show listeners").splitlines()[1:] if l]
        cum = [int(r[8]) for r in rows]
        assert sum(cum) == 60 and all(c > 0 for c in cum), rows
        a = activity(sock)
        started = a["sess_started"][1]
        # group 1 = threads 1-2 served exactly what its socket accepted, same for group 2
        assert started[0] + started[1] == cum[0], (started, cum)
        assert started[2] + started[3] == cum[1], (started, cum)
        for c in conns:
            c.close()


def test_bind_maxconn_limits_the_whole_line_across_shards(cfg, sluice, short_tmp):
    # Unlike HAProxy (per socket), a bind line's maxconn is for the line, not per shard.
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf("    nbthread 4\n    thread-groups 2", "maxconn 4", port, sock, echo.port)),
               wait_ports=[port], wait_unix=[sock])
        conns = hold(port, 4)
        extra = connect(port)
        extra.sendall(b"y")
        extra.settimeout(0.5)
        try:
            assert extra.recv(1) == b"", "a fifth connection must wait in the backlog"
            raise AssertionError("unexpected close")
        except socket.timeout:
            pass
        conns[0].close()
        extra.settimeout(5)
        assert extra.recv(1) == b"y"
        extra.close()
        for c in conns[1:]:
            c.close()


def test_small_maxconn_listener_never_gets_stuck(cfg, sluice, short_tmp):
    # Case 40 (HAProxy's accounting bug): a single socket served by threads of two groups with
    # maxconn 4 and many parallel short clients: every client is served and the count returns
    # to 0.
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf("    nbthread 4\n    thread-groups 2", "maxconn 4 shards 1", port, sock, echo.port)),
               wait_ports=[port], wait_unix=[sock])
        errors = []

        def client(n):
            try:
                for _ in range(n):
                    if echo_roundtrip(port, timeout=10) != b"ping\n":
                        errors.append("bad echo")
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

        threads = [threading.Thread(target=client, args=(15,)) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors[:3]

        def idle():
            rows = [l.split() for l in cli(str(sock), "show listeners").splitlines()[1:] if l]
            return rows if all(r[7] == "0" for r in rows) else None
        rows = wait_until(idle, 5, message="listener connection count back to 0")
        assert sum(int(r[8]) for r in rows) == 12 * 15


def test_maxconnrate_spreads_accepts_over_seconds(cfg, sluice, short_tmp):
    # Case 44: with maxconnrate 5, 15 connections arriving at once are all served (they wait in
    # the backlog, none is dropped), 5 per one-second window: the last five wait for the second
    # window boundary after the first, so more than one second passes whatever the start phase.
    import time
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf("    nbthread 2\n    maxconnrate 5", "", port, sock, echo.port)),
               wait_ports=[port], wait_unix=[sock])
        info = dict(l.split(": ", 1) for l in cli(str(sock), "show info").splitlines() if ": " in l)
        assert info["ConnRateLimit"] == "5"
        t0 = time.monotonic()
        conns = [connect(port, timeout=10) for _ in range(15)]
        for c in conns:
            c.sendall(b"z")
        for c in conns:
            c.settimeout(10)
            assert c.recv(1) == b"z"
        elapsed = time.monotonic() - t0
        assert elapsed >= 0.95, elapsed
        a = activity(sock)
        assert a["accepted"][0] == 15
        for c in conns:
            c.close()


def test_global_maxconn_reached_is_counted(cfg, sluice, short_tmp):
    # Case 43: at the global limit the listeners pause (the extra client waits in the backlog)
    # and MaxconnReached counts it; closing one connection resumes accepting.
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf("    nbthread 2\n    maxconn 3", "", port, sock, echo.port)),
               wait_ports=[port], wait_unix=[sock])
        conns = hold(port, 3)
        extra = connect(port)
        extra.sendall(b"w")
        info = lambda: dict(l.split(": ", 1) for l in cli(str(sock), "show info").splitlines() if ": " in l)  # noqa: E731
        wait_until(lambda: int(info()["MaxconnReached"]) >= 1, 5, message="MaxconnReached")
        assert info()["CurrConns"] == "3"
        conns[0].close()
        extra.settimeout(5)
        assert extra.recv(1) == b"w"
        extra.close()
        for c in conns[1:]:
            c.close()
