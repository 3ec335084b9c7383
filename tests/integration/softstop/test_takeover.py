"""`-x <socket>` with `stats socket ... expose-fd listeners`: a new process takes the running
one's listening sockets over its stats socket (as HAProxy's -x), so the kernel's accept queues
live on: connections waiting in them when the reload happens are served by the new process,
none reset."""
from __future__ import annotations

from sluice_harness import (cli, echo_roundtrip, free_port, listen_config, queued_clients,
                            recv_exact, run_sluice)


def inodes(sock) -> list[str]:
    """The inodes of the listening sockets (`show listeners`), in order."""
    return [l.split()[4] for l in cli(str(sock), "show listeners").splitlines()
            if l and not l.startswith("#")]


def test_x_takes_the_sockets_and_their_queues(cfg, sluice, echo, short_tmp):
    port, extra = free_port(), free_port()
    old_sock, new_sock = short_tmp / "old.sock", short_tmp / "new.sock"
    # A UNIX listener too: it is bound under a temporary name, then renamed.
    unix = f"    bind 127.0.0.1:{port}\n    bind {short_tmp}/app.sock\n"

    def conf(text: str) -> str:
        return text.replace(f"    bind 127.0.0.1:{port}\n", unix, 1)

    # maxconnrate 1: the old process accepts one connection, the next ones wait in the queue.
    old = sluice(cfg(conf(listen_config(port, echo.port, f"    maxconnrate 1\n    stats socket {old_sock} "
                                        "level admin expose-fd listeners", extra)), "old.cfg"),
                 wait_ports=[port, extra], wait_unix=[old_sock])
    before = inodes(old_sock)
    assert len(before) == 3, before   # the TCP, UNIX and extra listeners
    clients = queued_clients(port, 6)
    try:
        new = sluice(cfg(conf(listen_config(port, echo.port, f"    stats socket {new_sock} level admin",
                                            extra)), "new.cfg"),
                     wait_ports=[port], wait_unix=[new_sock],
                     extra_args=["-x", str(old_sock), "-sf", str(old.pid)])
        # The very sockets: the same kernel objects, their waiting connections with them.
        assert inodes(new_sock) == before
        for i, c in enumerate(clients[1:], start=1):
            assert recv_exact(c, 3, timeout=5) == b"%02d\n" % i, f"client {i}"
    finally:
        for c in clients:
            c.close()
    assert old.wait_exit(timeout=5) == 0, old.describe()
    assert echo_roundtrip(port) == b"ping\n" and echo_roundtrip(extra) == b"ping\n"
    assert new.running()


def test_x_without_expose_fd_fails_and_the_old_process_goes_on(cfg, sluice, echo, short_tmp):
    """The old process does not expose its sockets: the new one says so and exits with 1, as
    HAProxy 3.5 does; the old one, which no -sf reached, goes on serving."""
    port = free_port()
    old_sock, new_sock = short_tmp / "old.sock", short_tmp / "new.sock"
    old = sluice(cfg(listen_config(port, echo.port, f"    stats socket {old_sock} level admin"),
                     "old.cfg"), wait_ports=[port], wait_unix=[old_sock])
    rc, _, err = run_sluice(["-f", str(cfg(listen_config(port, echo.port,
                                                         f"    stats socket {new_sock} level admin"),
                                           "new.cfg")),
                             "-x", str(old_sock), "-sf", str(old.pid)], timeout=10)
    assert rc == 1 and "Failed to get the sockets from the old process!" in err, (rc, err)
    assert old.running()
    assert echo_roundtrip(port) == b"ping\n"
