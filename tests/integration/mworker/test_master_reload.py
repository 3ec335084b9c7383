"""Reloads in master-worker mode: by SIGUSR2 and by the master CLI, a configuration that fails
(the old worker goes on), old workers listed while they drain, mworker-max-reloads, the
old worker's keep-alive and tunnel connections, and reloads under load, with a change of
nbthread, that lose no connection."""
from __future__ import annotations

import os
import signal
import socket

import pytest

from sluice_harness import (EchoLoad, accepted_per_thread, cli, free_port, is_listening,
                            listen_config, recv_exact, roundtrip_from_cpu, wait_until)
from mwutil import alive, children, current_worker, get, http_config, show_proc, wait_gone


def test_reload_by_signal_and_by_master_cli(cfg, sluice, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    s = sluice(cfg(http_config(port)), wait_ports=[port], wait_unix=[msock],
               extra_args=["-W", "-S", str(msock)])
    first = current_worker(msock)
    inode = os.stat(msock).st_ino
    os.kill(s.pid, signal.SIGUSR2)
    wait_until(lambda: not alive(first), 10, message="the first worker to leave")
    second = current_worker(msock)
    assert second != first
    # The first worker may be a zombie for a moment (not alive, still a child) until the master
    # reaps it on SIGCHLD.
    wait_until(lambda: children(s.pid) == [second], 10,
               message=lambda: f"the master's only child to be {second}: {children(s.pid)}")
    answer = cli(msock, "reload", timeout=10)
    assert answer.startswith("Success=1\n--\n"), answer
    assert "Loading success." in answer, answer
    wait_until(lambda: not alive(second), 10, message="the second worker to leave")
    proc = show_proc(msock)
    assert proc["master"] == (s.pid, 2, 0), proc["text"]
    assert b"200 OK" in get(port)
    # The master CLI socket is the same socket across the reloads (kept, not bound again).
    assert os.stat(msock).st_ino == inode
    third = current_worker(msock)
    assert s.stop(signal.SIGTERM) == 0
    wait_gone([third])


def test_a_configuration_that_fails_keeps_the_old_worker(cfg, sluice, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    path = cfg(http_config(port))
    good = path.read_text()
    s = sluice(path, wait_ports=[port], wait_unix=[msock], extra_args=["-W", "-S", str(msock)])
    worker = current_worker(msock)
    inode = listener_inodes(msock)
    path.write_text(good + "    no-such-keyword\n")
    answer = cli(msock, "reload", timeout=10)
    assert answer.startswith("Success=0\n--\n"), answer
    assert "unknown keyword 'no-such-keyword'" in answer, answer
    # The master says it on its standard error too, as HAProxy's does.
    wait_until(lambda: "unknown keyword 'no-such-keyword'" in s.stderr(), 5,
               message="the failed reload's alert on stderr")
    proc = show_proc(msock)
    assert proc["master"][1:] == (1, 1), proc["text"]
    assert [w for w, _ in proc["workers"]] == [worker], proc["text"]
    assert b"200 OK" in get(port)
    # A worker that cannot start (its port is taken by someone else) fails the same way.
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    other = blocker.getsockname()[1]
    path.write_text(good.replace("frontend fe", f"frontend busy\n    bind 127.0.0.1:{other}\n"
                                 "    http-request return status 200\nfrontend fe"))
    try:
        answer = cli(msock, "reload", timeout=10)
    finally:
        blocker.close()
    assert answer.startswith("Success=0"), answer
    assert show_proc(msock)["master"][1:] == (2, 2)
    assert current_worker(msock) == worker
    # Fixed, the next reload replaces the worker, on the very socket the first one had (the
    # failed loads gave it back to the master).
    path.write_text(good)
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    wait_gone([worker])
    assert listener_inodes(msock) == inode
    assert show_proc(msock)["master"][1:] == (3, 2)
    assert b"200 OK" in get(port)
    new = current_worker(msock)
    s.stop(signal.SIGTERM)
    wait_gone([new])


def listener_inodes(msock) -> list[str]:
    """The inodes of the current worker's listening sockets (`show listeners`)."""
    return [l.split()[4] for l in cli(msock, "@1 show listeners").splitlines()
            if l and not l.startswith("#")]


def test_old_workers_drain_tunnels_and_are_listed(cfg, sluice, echo, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    s = sluice(cfg(listen_config(port, echo.port, "    mworker-max-reloads 1")), wait_ports=[port],
               wait_unix=[msock], extra_args=["-W", "-S", str(msock)])
    first = current_worker(msock)
    tunnel = socket.create_connection(("127.0.0.1", port), timeout=5)
    tunnel.sendall(b"a\n")
    assert recv_exact(tunnel, 2) == b"a\n"
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    proc = show_proc(msock)
    assert proc["old"] == [(first, 1)], proc["text"]
    # The old worker still carries its tunnel, and answers through the master.
    tunnel.sendall(b"b\n")
    assert recv_exact(tunnel, 2) == b"b\n"
    # It learns of the stop by a signal the master sends before answering: wait for it.
    wait_until(lambda: "Stopping: 1" in cli(msock, f"@!{first} show info"), 5,
               message="the old worker to say it is stopping")
    # mworker-max-reloads 1: a second reload is one too many for it.
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    wait_gone([first])
    assert tunnel.recv(10) == b""
    tunnel.close()
    assert "exceeded mworker-max-reloads" in s.stderr(), s.stderr()
    # The second worker, without connections, leaves at once too.
    wait_until(lambda: not show_proc(msock)["old"], 10, message="no old worker left")
    w = current_worker(msock)
    s.stop(signal.SIGTERM)
    wait_gone([w])


def test_old_worker_closes_keepalive_connections_cleanly(cfg, sluice, origin, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    conf = f"""
global
    nbthread 2
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    server o 127.0.0.1:{origin.port}
"""
    s = sluice(cfg(conf), wait_ports=[port], wait_unix=[msock], extra_args=["-W", "-S", str(msock)])
    old = current_worker(msock)
    idle = socket.create_connection(("127.0.0.1", port), timeout=5)
    busy = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        for c in (idle, busy):
            c.sendall(b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
            head = c.recv(65536)
            assert head.startswith(b"HTTP/1.1 200"), head
        busy.sendall(b"GET /slow?ms=700 HTTP/1.1\r\nHost: t\r\n\r\n")
        wait_until(lambda: "/slow" in origin.paths(), 5, message="the slow request at the origin")
        assert cli(msock, "reload", timeout=10).startswith("Success=1")
        # The idle keep-alive connection closes at once...
        idle.settimeout(3)
        assert idle.recv(10) == b""
        # ... the busy one gets its response, marked as the last, then closes.
        busy.settimeout(5)
        data = b""
        while chunk := busy.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200"), data
        assert b"\r\nconnection: close\r\n" in data.lower(), data
    finally:
        idle.close()
        busy.close()
    wait_gone([old])
    new = current_worker(msock)
    s.stop(signal.SIGTERM)
    wait_gone([new])


@pytest.mark.parametrize("plan_change", [False, True], ids=["same", "nbthread"])
def test_reloads_under_load_lose_no_connection(cfg, sluice, echo, short_tmp, plan_change):
    port, msock = free_port(), short_tmp / "m.sock"
    path = cfg(listen_config(port, echo.port))
    s = sluice(path, wait_ports=[port], wait_unix=[msock], extra_args=["-W", "-S", str(msock)])
    seen = set()
    with EchoLoad(port) as load:
        for i in range(6):
            before = load.ok
            if plan_change:
                # 1, 3, 2, 1, 3, 2 threads: listeners' shards come and go with the plan.
                path.write_text(listen_config(port, echo.port)
                                .replace("nbthread 2", f"nbthread {(i * 2) % 3 + 1}")
                                .replace(f"bind 127.0.0.1:{port}",
                                         f"bind 127.0.0.1:{port} shards by-thread"))
            seen.update(w for w, _ in show_proc(msock)["workers"])
            assert cli(msock, "reload", timeout=10).startswith("Success=1")
            if plan_change:
                info = cli(msock, "@1 show info")
                assert f"Nbthread: {(i * 2) % 3 + 1}\n" in info, info
            wait_until(lambda: load.ok > before + 20, 10, message="connections after the reload")
    assert not load.failures, load.failures[:5]
    seen.update(w for w, _ in show_proc(msock)["workers"])
    s.stop(signal.SIGTERM)
    wait_gone(seen)


def test_proc_variables_and_the_worker_cli_live_on_across_a_reload(cfg, sluice, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    conf = http_config(port, "    set-var proc.boot int(7)").replace(
        '    http-request return', '    http-request set-var(proc.last) path\n    http-request return')
    s = sluice(cfg(conf), wait_ports=[port], wait_unix=[msock], extra_args=["-W", "-S", str(msock)])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"GET /set-before-reload HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        assert c.recv(4096).startswith(b"HTTP/1.1 200")
    old = current_worker(msock)
    assert "value=</set-before-reload>" in cli(msock, "@1 get var proc.last")
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    wait_gone([old])
    new = current_worker(msock)
    assert cli(msock, "@1 get var proc.last").strip() == "proc.last: type=str value=</set-before-reload>"
    assert cli(msock, "@1 get var proc.boot").strip() == "proc.boot: type=sint value=<7>"
    # `@@1` alone: the rest of the session is the worker's CLI.
    with socket.socket(socket.AF_UNIX) as c:
        c.settimeout(5)
        c.connect(str(msock))
        c.sendall(b"@@1\nshow cli level\n")
        c.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := c.recv(4096):
            data += chunk
    assert data.decode().strip() == "admin", data
    s.stop(signal.SIGTERM)
    wait_gone([new])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0),
                    reason="needs CPUs 0 and 1")
def test_cpu_steering_survives_a_reload(cfg, sluice, echo, short_tmp):
    # The shards keep their reuseport group across the reload, and the group its program: the
    # new worker's shard for CPU 1 still gets the connections whose SYN CPU 1 handled.
    port, msock = free_port(), short_tmp / "m.sock"
    sluice(cfg(listen_config(port, echo.port, "    thread-groups 2\n    cpu-map 1/1 0\n"
                             "    cpu-map 2/1 1\n    tune.listener.reuseport-steering cpu\n"
                             "    tune.listener.multi-queue off")),
           wait_ports=[port], wait_unix=[msock], extra_args=["-W", "-S", str(msock)])
    assert "steered" in cli(msock, "@1 show listeners")
    old = current_worker(msock)
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    wait_gone([old])
    assert "steered" in cli(msock, "@1 show listeners")
    for _ in range(6):
        assert roundtrip_from_cpu(port, 1) == b"ping\n"
    assert accepted_per_thread(msock, "@1 ") == [0, 6]
    for _ in range(6):
        assert roundtrip_from_cpu(port, 0) == b"ping\n"
    assert accepted_per_thread(msock, "@1 ") == [6, 6]


def test_a_shrinking_plan_leaves_no_socket_to_a_draining_worker(cfg, sluice, echo, short_tmp):
    # 4 threads with a shard each, then 1: the old worker keeps draining a tunnel, and the three
    # shards the new plan dropped must not stay in the reuseport group meanwhile (new
    # connections would wait there, unaccepted, until the old worker left).
    port, msock = free_port(), short_tmp / "m.sock"
    path = cfg(listen_config(port, echo.port).replace("nbthread 2", "nbthread 4")
               .replace(f"bind 127.0.0.1:{port}", f"bind 127.0.0.1:{port} shards by-thread"))
    s = sluice(path, wait_ports=[port], wait_unix=[msock], extra_args=["-W", "-S", str(msock)])
    old = current_worker(msock)
    tunnel = socket.create_connection(("127.0.0.1", port), timeout=5)
    tunnel.sendall(b"hold\n")
    assert recv_exact(tunnel, 5) == b"hold\n"
    path.write_text(path.read_text().replace("nbthread 4", "nbthread 1"))
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    new = current_worker(msock)
    assert new != old and alive(old)   # the tunnel keeps it
    try:
        for i in range(40):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                c.settimeout(1.0)
                c.sendall(b"ping\n")
                assert recv_exact(c, 5) == b"ping\n", i
    finally:
        tunnel.close()
    wait_gone([old])
    s.stop(signal.SIGTERM)
    wait_gone([new])


def test_server_states_set_at_run_time_survive_a_reload(cfg, sluice, short_tmp):
    # With load-server-state-from-file, the new worker takes the states the old one had (as if
    # `show servers state` had been saved to the file just before the reload); the file itself
    # was never written.
    port, msock = free_port(), short_tmp / "m.sock"
    conf = http_config(port, f"    server-state-file {short_tmp}/never-written") + f"""
    default_backend b
backend b
    load-server-state-from-file global
    server s1 127.0.0.1:{free_port()} weight 10
    server s2 127.0.0.1:{free_port()} weight 10
""".replace("    http-request return status 200 content-type text/plain string \"ok\"\n", "")
    s = sluice(cfg(conf), wait_ports=[port], wait_unix=[msock], extra_args=["-W", "-S", str(msock)])
    assert cli(msock, "@1 set server b/s1 state maint").strip() == ""
    assert cli(msock, "@1 set weight b/s2 3").strip() == ""
    old = current_worker(msock)
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    wait_gone([old])
    new = current_worker(msock)
    rows = {l.split()[3]: l.split() for l in cli(msock, "@1 show servers state b").splitlines()
            if l and not l.startswith("#") and len(l.split()) > 8}
    assert rows["s1"][6] == "1", rows      # srv_admin_state: forced maintenance
    assert rows["s2"][7] == "3", rows      # srv_uweight
    assert not (short_tmp / "never-written").exists()
    s.stop(signal.SIGTERM)
    wait_gone([new])


def test_hard_reload_stops_the_old_worker_at_once(cfg, sluice, echo, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    s = sluice(cfg(listen_config(port, echo.port)), wait_ports=[port], wait_unix=[msock],
               extra_args=["-W", "-S", str(msock)])
    old = current_worker(msock)
    tunnel = socket.create_connection(("127.0.0.1", port), timeout=5)
    tunnel.sendall(b"a\n")
    assert recv_exact(tunnel, 2) == b"a\n"
    try:
        assert cli(msock, "hard-reload", timeout=10).startswith("Success=1")
        # Not drained (a reload would keep it for the tunnel): gone, the tunnel closed.
        wait_gone([old], timeout=3)
        tunnel.settimeout(3)
        assert tunnel.recv(10) == b""
    finally:
        tunnel.close()
    new = current_worker(msock)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"b\n")
        assert recv_exact(c, 2) == b"b\n"   # the shared sockets still listen
    s.stop(signal.SIGTERM)
    wait_gone([new])


@pytest.mark.parametrize("flag", ["-sf", "-st"])
def test_sf_and_st_with_a_master(cfg, sluice, echo, short_tmp, flag):
    # A process of an earlier start is told to leave once the master's first worker serves.
    port, msock = free_port(), short_tmp / "m.sock"
    path = cfg(listen_config(port, echo.port))
    before = sluice(path, wait_ports=[port])
    tunnel = socket.create_connection(("127.0.0.1", port), timeout=5)
    tunnel.sendall(b"a\n")
    assert recv_exact(tunnel, 2) == b"a\n"
    s = sluice(path, wait_unix=[msock], extra_args=["-W", "-S", str(msock), flag, str(before.pid)])
    try:
        worker = current_worker(msock)
        if flag == "-st":
            before.wait_exit(timeout=5)          # stopped at once, the tunnel with it
            tunnel.settimeout(3)
            assert tunnel.recv(10) == b""
        else:
            # Soft stop: the old process no longer listens but serves its tunnel until it ends.
            wait_until(lambda: not is_listening(port, before.pid), 5,
                       message="the old process to stop listening")
            assert before.running()
            tunnel.sendall(b"c\n")
            assert recv_exact(tunnel, 2) == b"c\n"
            tunnel.close()
            before.wait_exit(timeout=5)
    finally:
        tunnel.close()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"b\n")
        assert recv_exact(c, 2) == b"b\n"
    s.stop(signal.SIGTERM)
    wait_gone([worker])
