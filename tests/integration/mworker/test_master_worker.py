"""Master-worker mode (-W, -Ws, global `master-worker`): the master, its worker, the master CLI
(-S), systemd's notifications, and the stop. Every test checks that no process it started is
left."""
from __future__ import annotations

import os
import signal
import socket
import threading

from sluice_harness import DEFAULTS, cli, free_port, wait_until
from mwutil import alive, children, current_worker, get, http_config, show_proc, wait_gone


def test_master_starts_a_worker_and_answers_show_proc(cfg, sluice, short_tmp):
    port, msock = free_port(), short_tmp / "master.sock"
    s = sluice(cfg(http_config(port)), wait_ports=[port], wait_unix=[msock],
               extra_args=["-W", "-S", str(msock)])
    wait_until(lambda: show_proc(msock)["workers"], 5, message="a worker in show proc")
    proc = show_proc(msock)
    assert proc["master"][0] == s.pid and proc["master"][1:] == (0, 0), proc["text"]
    worker = current_worker(msock)
    assert children(s.pid) == [worker]
    assert proc["text"].startswith("#<PID>          <type>          <reloads>       <uptime>"), proc
    assert b"200 OK" in get(port)
    # The worker's own CLI, through the master.
    info = cli(msock, "@1 show info")
    assert "Name: sluice" in info and f"Pid: {worker}" in info, info
    assert f"Pid: {worker}" in cli(msock, f"@!{worker} show info")
    assert "Can't find the target PID matching the prefix '@!1'" in cli(msock, "@!1 show info")
    assert "Can't find the target PID matching the prefix '@2'" in cli(msock, "@2 show info")
    # SIGTERM: the master stops its worker; the worker's 143 is its normal end, and the master
    # exits with 0, as HAProxy 3.5's does.
    assert s.stop(signal.SIGTERM) == 0, s.describe()
    wait_gone([worker])
    err = s.stderr()
    assert f"Current worker ({worker}) exited with code 143 (Terminated)" in err, err
    assert "All workers exited. Exiting... (0)" in err, err


def test_sigint_reaches_the_worker_and_is_the_masters_status(cfg, sluice, short_tmp):
    port, msock = free_port(), short_tmp / "master.sock"
    s = sluice(cfg(http_config(port)), wait_ports=[port], wait_unix=[msock],
               extra_args=["-W", "-S", str(msock)])
    worker = current_worker(msock)
    assert s.stop(signal.SIGINT) == 130, s.describe()
    wait_gone([worker])
    err = s.stderr()
    assert f"Current worker ({worker}) exited with code 130 (Interrupt)" in err, err
    assert "All workers exited. Exiting... (130)" in err, err


def test_sigusr1_soft_stops_everything(cfg, sluice, short_tmp):
    port, msock = free_port(), short_tmp / "master.sock"
    s = sluice(cfg(http_config(port, "    master-worker")), wait_ports=[port], wait_unix=[msock],
               extra_args=["-S", str(msock)])
    worker = current_worker(msock)
    assert s.stop(signal.SIGUSR1) == 0, s.describe()
    wait_gone([worker])
    assert f"Current worker ({worker}) exited with code 0 (Exit)" in s.stderr()


def test_a_dead_worker_stops_the_master_unless_no_exit_on_failure(cfg, sluice, echo, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    s = sluice(cfg(http_config(port)), wait_ports=[port], wait_unix=[msock],
               extra_args=["-W", "-S", str(msock)])
    os.kill(current_worker(msock), signal.SIGKILL)
    assert s.wait_exit(5) == 137, s.describe()
    assert "exited with code 137 (Killed)" in s.stderr()

    # no-exit-on-failure: the master goes on while a worker remains (here an old one that
    # still carries a tunnel), and a reload brings a current worker back.
    port2, msock2 = free_port(), short_tmp / "m2.sock"
    conf = f"""
global
    master-worker no-exit-on-failure
{DEFAULTS}
listen app
    bind 127.0.0.1:{port2}
    server s1 127.0.0.1:{echo.port}
"""
    s2 = sluice(cfg(conf, "b.cfg"), wait_ports=[port2], wait_unix=[msock2],
                extra_args=["-S", str(msock2)])
    old = current_worker(msock2)
    with socket.create_connection(("127.0.0.1", port2), timeout=5) as tunnel:
        tunnel.sendall(b"a\n")
        assert tunnel.recv(10) == b"a\n"
        assert cli(msock2, "reload", timeout=10).startswith("Success=1")
        os.kill(current_worker(msock2), signal.SIGKILL)
        wait_until(lambda: not show_proc(msock2)["workers"], 5, message="the dead worker reaped")
        assert s2.running() and alive(old)
        assert cli(msock2, "reload", timeout=10).startswith("Success=1")
        assert show_proc(msock2)["old"][0][0] == old
        new = current_worker(msock2)
        with socket.create_connection(("127.0.0.1", port2), timeout=5) as c:
            c.sendall(b"b\n")
            assert c.recv(10) == b"b\n"
    assert s2.stop(signal.SIGTERM) == 0
    wait_gone([new, old])


def test_daemon_master_writes_its_pid(cfg, tmp_path, short_tmp):
    import subprocess
    from sluice_harness import sluice_bin
    port, msock, pidfile = free_port(), short_tmp / "m.sock", tmp_path / "s.pid"
    path = cfg(http_config(port))
    r = subprocess.run([sluice_bin(), "-W", "-D", "-S", str(msock), "-p", str(pidfile), "-f",
                        str(path)], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    assert r.returncode == 0, r.stderr
    master = int(pidfile.read_text())
    try:
        wait_until(lambda: msock.exists() and show_proc(msock)["workers"], 5,
                   message="the daemon's worker")
        proc = show_proc(msock)
        assert proc["master"][0] == master
        worker = proc["workers"][0][0]
        assert children(master) == [worker]
        assert b"200 OK" in get(port)
    finally:
        os.kill(master, signal.SIGTERM)
    wait_gone([master, worker])


def test_master_cli_commands_and_levels(cfg, sluice, short_tmp):
    port, msock, osock = free_port(), short_tmp / "m.sock", short_tmp / "o.sock"
    s = sluice(cfg(http_config(port)), wait_ports=[port], wait_unix=[msock, osock],
               extra_args=["-W", "-S", f"{msock},mode,600", "-S", f"{osock},level,operator"])
    assert oct(os.stat(msock).st_mode & 0o777) == "0o600"
    help_text = cli(msock, "help")
    for c in ("show proc", "reload", "hard-reload", "@<relative pid>", "show startup-logs"):
        assert c in help_text, help_text
    assert cli(msock, "show cli level").strip() == "admin"
    assert cli(osock, "show cli level").strip() == "operator"
    assert "reload" not in cli(osock, "help").replace("soft-reload", "")
    assert cli(osock, "reload").strip() == "Permission denied"
    # The operator level follows the forwarded command to the worker.
    assert cli(osock, "@1 show cli level").strip() == "operator"
    assert cli(msock, "@1 show cli level").strip() == "admin"
    assert cli(msock, "show version; echo a b").split("\n\n")[1].strip() == "a b"
    assert "Unknown command: 'foo'" in cli(msock, "foo")
    assert "Loading success." in cli(msock, "show startup-logs")
    assert f"unix@{msock} admin master" in cli(msock, "show cli sockets")
    # Interactive mode with a prompt; `@1` alone sends what follows to the worker.
    worker = current_worker(msock)
    with socket.socket(socket.AF_UNIX) as c:
        c.settimeout(5)
        c.connect(str(msock))
        c.sendall(b"prompt\n@1\nshow cli level\n@master\nquit\n")
        data = b""
        while chunk := c.recv(4096):
            data += chunk
    text = data.decode()
    assert text.startswith("master> "), text
    assert f"{worker}> admin\n" in text, text
    # Levels and sockets live on across a reload.
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    wait_gone([worker])
    assert cli(osock, "show cli level").strip() == "operator"
    worker = current_worker(msock)
    assert s.stop(signal.SIGTERM) == 0
    wait_gone([worker])


def test_bad_master_cli_options_are_errors(cfg, sluice, short_tmp):
    import subprocess
    from sluice_harness import sluice_bin
    port = free_port()
    path = cfg(http_config(port))
    r = subprocess.run([sluice_bin(), "-W", "-S", f"{short_tmp}/m.sock,bogus,1", "-f", str(path)],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    assert r.returncode == 1
    assert b"-S : unknown option 'bogus'" in r.stderr, r.stderr
    # -c with -W and -S only checks: nothing is bound.
    r = subprocess.run([sluice_bin(), "-Ws", "-c", "-q", "-S", f"{short_tmp}/c.sock", "-f",
                        str(path)], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    assert r.returncode == 0 and r.stdout == b"", r
    assert not (short_tmp / "c.sock").exists()


def test_mworker_keywords_are_checked(cfg, sluice):
    import subprocess
    from sluice_harness import sluice_bin

    def check(line):
        path = cfg(http_config(free_port(), f"    {line}"), "k.cfg")
        return subprocess.run([sluice_bin(), "-c", "-f", str(path)], capture_output=True,
                              text=True, timeout=10)
    assert check("master-worker foo").returncode == 1
    assert "'master-worker' only supports 'no-exit-on-failure' option" in check("master-worker foo").stderr
    assert "'mworker-max-reloads' expects an integer argument." in check("mworker-max-reloads").stderr
    assert "expects a positive value or zero." in check("mworker-max-reloads -1").stderr
    assert check("mworker-max-reloads 3").returncode == 0


def test_ws_notifies_systemd_in_order(cfg, sluice, short_tmp):
    port, msock, nsock = free_port(), short_tmp / "m.sock", short_tmp / "notify.sock"
    rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    rx.bind(str(nsock))
    rx.settimeout(10)
    got: list[bytes] = []

    def receive(n):
        while len(got) < n:
            got.append(rx.recv(4096))

    try:
        path = cfg(http_config(port))
        s = sluice(path, wait_ports=[port], wait_unix=[msock],
                   extra_args=["-Ws", "-S", str(msock)], env={"NOTIFY_SOCKET": str(nsock)})
        receive(1)
        assert got[0] == f"READY=1\nMAINPID={s.pid}\nSTATUS=Ready.\n".encode(), got
        os.kill(s.pid, signal.SIGUSR2)
        receive(3)
        assert got[1].startswith(b"RELOADING=1\nSTATUS=Reloading Configuration.\nMONOTONIC_USEC="), got
        usec = int(got[1].split(b"MONOTONIC_USEC=")[1].strip())
        assert abs(usec / 1e6 - __import__("time").monotonic()) < 30
        assert got[2] == got[0], got
        path.write_text(path.read_text() + "    bogus-keyword\n")
        assert cli(msock, "reload", timeout=10).startswith("Success=0")
        receive(5)
        assert got[3].startswith(b"RELOADING=1\n") and got[4] == b"READY=1\nSTATUS=Reload failed!\n", got
        workers = [w for w, _ in show_proc(msock)["workers"]]
        s.stop(signal.SIGTERM)
        receive(6)
        assert got[5] == b"STOPPING=1\n", got
        wait_gone(workers)
    finally:
        rx.close()


def test_workers_do_not_outlive_their_master(cfg, sluice, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    # With a `user` (as root), the worker's parent-death signal must survive setuid().
    extra = "    user nobody\n    group nogroup" if os.geteuid() == 0 else ""
    s = sluice(cfg(http_config(port, extra)), wait_ports=[port], wait_unix=[msock],
               extra_args=["-W", "-S", str(msock)])
    worker = current_worker(msock)
    s.signal(signal.SIGKILL)
    s.wait_exit(5)
    wait_gone([worker], 5)


def test_a_reload_from_a_relative_directory(cfg, sluice, tmp_path, short_tmp):
    port, msock = free_port(), short_tmp / "m.sock"
    sub = tmp_path / "etc"
    sub.mkdir()
    (sub / "s.cfg").write_text(http_config(port))
    # -C with a relative path, and a relative -f: a reload must not apply -C a second time.
    s = sluice(["s.cfg"], wait_ports=[port], wait_unix=[msock],
               extra_args=["-C", os.path.relpath(sub, tmp_path / "run0"), "-W", "-S", str(msock)])
    worker = current_worker(msock)
    assert cli(msock, "reload", timeout=10).startswith("Success=1")
    wait_gone([worker])
    assert b"200 OK" in get(port)
    new = current_worker(msock)
    s.stop(signal.SIGTERM)
    wait_gone([new])
