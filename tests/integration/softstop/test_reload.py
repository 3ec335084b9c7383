"""Reloads: a new process started with `-sf <old pid>` takes over the listeners."""
import socket

from sluice_harness import (connect, echo_roundtrip, free_port, is_listening, listen_config,
                            recv_exact, wait_until)


def test_reload_with_reuseport_keeps_established_connections(cfg, sluice, echo):
    port = free_port()
    path = cfg(listen_config(port, echo.port))
    old = sluice(path, wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"one\n")
        assert recv_exact(c, 4) == b"one\n"
        new = sluice(path, wait_ports=[port], extra_args=["-sf", str(old.pid)])
        wait_until(lambda: not is_listening(port, old.pid), 5, message="the old listener to close")
        assert old.running(), "the old process left while a connection was still open"
        c.sendall(b"two\n")
        assert recv_exact(c, 4) == b"two\n"
    assert old.wait_exit(timeout=5) == 0, old.describe()
    assert echo_roundtrip(port) == b"ping\n"
    assert new.running()


def test_reload_without_reuseport_pauses_the_old_process_to_take_its_ports(cfg, sluice, echo):
    # -dR: no SO_REUSEPORT, so the old process's bound ports refuse the new one's bind. As
    # HAProxy does, the new process asks the old one to pause (SIGTTOU: its listeners shut
    # down, still bound) and binds again, then soft-stops it.
    port = free_port()
    path = cfg(listen_config(port, echo.port))
    old = sluice(path, wait_ports=[port], extra_args=["-dR"])
    with connect(port) as c:
        c.sendall(b"one\n")
        assert recv_exact(c, 4) == b"one\n"
        new = sluice(path, wait_ports=[port], extra_args=["-dR", "-sf", str(old.pid)])
        c.sendall(b"two\n")
        assert recv_exact(c, 4) == b"two\n"
    assert old.wait_exit(timeout=5) == 0, old.describe()
    assert echo_roundtrip(port) == b"ping\n"
    assert new.running()


def test_a_reload_that_cannot_bind_resumes_the_old_process(cfg, sluice, echo):
    # The new configuration adds a port that a third party holds: the new process gives up
    # after about a second, releases what it bound, and the old one listens again (SIGTTIN).
    port, taken = free_port(), free_port()
    blocker = socket.socket()
    blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # beside free_port's reservation
    blocker.bind(("127.0.0.1", taken))
    blocker.listen(1)
    try:
        old = sluice(cfg(listen_config(port, echo.port), "old.cfg"), wait_ports=[port],
                     extra_args=["-dR"])
        new = sluice(cfg(listen_config(port, echo.port, extra_bind_port=taken), "new.cfg"),
                     extra_args=["-dR", "-sf", str(old.pid)])
        assert new.wait_exit(timeout=10) == 1, new.describe()
        assert "Address already in use" in new.stderr(), new.describe()
        assert old.running(), old.describe()
        wait_until(lambda: is_listening(port, old.pid), 5, message="the old process to resume")
        assert echo_roundtrip(port) == b"ping\n"
    finally:
        blocker.close()


def test_global_noreuseport_turns_so_reuseport_off(cfg, sluice, echo):
    # Without SO_REUSEPORT a second process cannot bind the same port (and no -sf asks the
    # first one to let go).
    port = free_port()
    path = cfg(listen_config(port, echo.port, "    noreuseport"))
    first = sluice(path, wait_ports=[port])
    second = sluice(path)
    assert second.wait_exit(timeout=10) == 1, second.describe()
    assert "Address already in use" in second.stderr(), second.describe()
    assert first.running()
    assert echo_roundtrip(port) == b"ping\n"
