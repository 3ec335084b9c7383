"""TCP socket options taken from HAProxy configurations: `option clitcpka` / `srvtcpka` / `tcpka`
with their `*-cnt`, `*-idle`, `*-intvl` tunings, `option nolinger` and `option tcp-smart-connect`.

The keep-alive settings are read back from sluice's own sockets: pidfd_getfd() (Linux 5.6) gives
the test a duplicate of each of sluice's descriptors, and getsockopt() on it sees what sluice
set. nolinger is checked by what the peers see: a reset instead of a FIN, no TIME_WAIT."""
import ctypes
import os
import socket
import threading
import time

import pytest

from sluice_harness import (DEFAULTS, connect, free_port, local_listener, read_end, recv_all,
                            tcp_sockets, wait_until)

_SYS_PIDFD_GETFD = 438   # x86_64 and the generic syscall table


def _pidfd_getfd(pidfd: int, fd: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
    if r < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(r)


def _sockets_of(pid: int) -> list[socket.socket]:
    """Duplicates of every TCP socket `pid` has open (closed by the caller)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError) as e:
        pytest.skip(f"pidfd_open: {e}")
    out = []
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    continue
                dup = _pidfd_getfd(pidfd, int(name))
            except FileNotFoundError:
                continue
            except OSError as e:
                if e.errno in (1, 38):   # EPERM, ENOSYS: not allowed / not supported here
                    pytest.skip(f"pidfd_getfd: {e}")
                continue
            s = socket.socket(fileno=dup)
            if s.family in (socket.AF_INET, socket.AF_INET6) and s.type == socket.SOCK_STREAM:
                out.append(s)
            else:
                s.close()
    finally:
        os.close(pidfd)
    return out


def _keepalive_of(pid: int, peer: tuple) -> tuple[int, int, int, int]:
    """(SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT) of sluice's socket connected to
    `peer`."""
    def find():
        for s in _sockets_of(pid):
            with s:
                try:
                    if s.getpeername()[:2] != peer[:2]:
                        continue
                except OSError:
                    continue
                return (s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                        s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                        s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
                        s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT))
        return None
    return wait_until(find, message=f"sluice's socket connected to {peer}")



def _system_keepalive() -> tuple[int, int]:
    """The system's idle time and interval, what a socket reports when nothing was set."""
    with socket.socket() as s:
        return (s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL))


def _config(port: int, server_port: int, defaults_extra: str = "", fe_extra: str = "",
            be_extra: str = "") -> str:
    return f"""
global
    nbthread 1
{DEFAULTS}{defaults_extra}
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
{fe_extra}
backend be
    server s1 127.0.0.1:{server_port}
{be_extra}
"""


def _one_session(sl, port: int, ls: socket.socket):
    """Opens a client connection through sluice; returns (client, server side of it)."""
    c = connect(port)
    c.sendall(b"hello")
    srv, _ = ls.accept()
    srv.settimeout(5)
    assert srv.recv(100) == b"hello"
    return c, srv


def test_clitcpka_and_its_tunings_reach_client_connections_only(cfg, sluice):
    ls = local_listener()
    port = free_port()
    sl = sluice(cfg(_config(port, ls.getsockname()[1],
                            fe_extra="    option clitcpka\n    clitcpka-idle 7\n"
                                     "    clitcpka-intvl 3s\n    clitcpka-cnt 4\n")),
                wait_ports=[port])
    with ls:
        c, srv = _one_session(sl, port, ls)
        with c, srv:
            assert _keepalive_of(sl.proc.pid, c.getsockname()) == (1, 7, 3, 4)
            assert _keepalive_of(sl.proc.pid, srv.getsockname())[0] == 0


def test_srvtcpka_from_defaults_reaches_server_connections_only(cfg, sluice):
    ls = local_listener()
    port = free_port()
    sl = sluice(cfg(_config(port, ls.getsockname()[1],
                            defaults_extra="    option srvtcpka\n    srvtcpka-idle 1m\n")),
                wait_ports=[port])
    sys_idle, sys_intvl = _system_keepalive()
    with ls:
        c, srv = _one_session(sl, port, ls)
        with c, srv:
            ka, idle, intvl, _ = _keepalive_of(sl.proc.pid, srv.getsockname())
            assert (ka, idle, intvl) == (1, 60, sys_intvl)   # what was not tuned stays the system's
            assert _keepalive_of(sl.proc.pid, c.getsockname())[0] == 0


@pytest.mark.parametrize("negated", [False, True])
def test_tcpka_in_a_listen_section_covers_both_sides(cfg, sluice, negated):
    ls = local_listener()
    port = free_port()
    text = f"""
global
    nbthread 1
{DEFAULTS}
    option tcpka
listen l
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{ls.getsockname()[1]}
    {"no option tcpka" if negated else ""}
"""
    sl = sluice(cfg(text), wait_ports=[port])
    want = 0 if negated else 1
    with ls:
        c, srv = _one_session(sl, port, ls)
        with c, srv:
            assert _keepalive_of(sl.proc.pid, c.getsockname())[0] == want
            assert _keepalive_of(sl.proc.pid, srv.getsockname())[0] == want



@pytest.mark.parametrize("nolinger", [False, True])
def test_frontend_nolinger_resets_the_client_when_sluice_ends_the_session(cfg, sluice, nolinger):
    ls = local_listener()
    port = free_port()
    sl = sluice(cfg(_config(port, ls.getsockname()[1],
                            fe_extra="    timeout client 300ms\n" +
                                     ("    option nolinger\n" if nolinger else ""))),
                wait_ports=[port])
    with ls:
        c, srv = _one_session(sl, port, ls)
        with c, srv:
            # Nobody speaks: the client timeout ends the session.
            assert read_end(c) == ("reset" if nolinger else "eof")


def _time_wait_at(port: int) -> int:
    return sum(1 for f in tcp_sockets() if f[3] == "06" and int(f[1].rsplit(":", 1)[1], 16) == port)


@pytest.mark.parametrize("nolinger", [False, True])
def test_backend_nolinger_resets_the_server_even_after_its_fin(cfg, sluice, nolinger):
    """The server answers and closes first. Without nolinger sluice closes its side with a FIN
    once the client is done, and the server's socket goes through TIME_WAIT; with nolinger it
    gets a reset, which leaves nothing behind."""
    ls = local_listener()
    server_port = ls.getsockname()[1]
    port = free_port()
    sluice(cfg(_config(port, server_port, be_extra="    option nolinger\n" if nolinger else "")),
           wait_ports=[port])
    rounds = 5
    with ls:
        for _ in range(rounds):
            c = connect(port)
            c.sendall(b"question")
            srv, _ = ls.accept()
            with srv:
                srv.settimeout(5)
                assert srv.recv(100) == b"question"
                srv.sendall(b"answer")
            with c:
                assert recv_all(c) == b"answer"
        if nolinger:
            # Give a wrongly sent FIN the time to arrive, then check that none did.
            time.sleep(0.3)
            assert _time_wait_at(server_port) == 0
        else:
            wait_until(lambda: _time_wait_at(server_port) == rounds,
                       message=lambda: f"{rounds} TIME_WAIT at the server, have {_time_wait_at(server_port)}")


class _HttpOrigin:
    """Answers every request with a 2-byte body. `close_first`: the body is delimited by the
    origin closing the connection, so sluice always sees the server's FIN before it is done
    with it; otherwise it has a length and the connection stays open."""

    def __init__(self, close_first: bool = False):
        self.close_first = close_first
        self.ls = local_listener()
        self.port = self.ls.getsockname()[1]
        self.conns: list[socket.socket] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        self.ls.settimeout(0.1)
        while not self._stop.is_set():
            try:
                s, _ = self.ls.accept()
            except (socket.timeout, OSError):
                continue
            self.conns.append(s)
            threading.Thread(target=self._serve, args=(s,), daemon=True).start()

    def _serve(self, s: socket.socket):
        s.settimeout(5)
        buf = b""
        try:
            while not self._stop.is_set():
                chunk = s.recv(4096)
                if not chunk:
                    return
                buf += chunk
                while b"\r\n\r\n" in buf:
                    _, buf = buf.split(b"\r\n\r\n", 1)
                    if self.close_first:
                        s.sendall(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nok")
                        s.close()
                        return
                    s.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        except OSError:
            return

    def close(self):
        self._stop.set()
        self._t.join(5)
        for s in self.conns:
            s.close()
        self.ls.close()


@pytest.mark.parametrize("smart", [True, False])
def test_tcp_smart_connect_is_on_by_default_and_can_be_turned_off(cfg, sluice, smart):
    origin = _HttpOrigin()
    try:
        port = free_port()
        text = _config(port, origin.port, defaults_extra="    mode http\n",
                       be_extra="" if smart else "    no option tcp-smart-connect\n")
        sl = sluice(cfg(text), wait_ports=[port])
        with connect(port) as c:
            c.sendall(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            c.settimeout(5)
            got = b""
            while not got.endswith(b"ok"):
                chunk = c.recv(4096)
                assert chunk, got
                got += chunk
            assert got.startswith(b"HTTP/1.1 200")

            def defer_accept():
                for s in _sockets_of(sl.proc.pid):
                    with s:
                        try:
                            if s.getpeername()[1] != origin.port:
                                continue
                        except OSError:
                            continue
                        return (s.getsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT),)
                return None
            (value,) = wait_until(defer_accept, message="sluice's server connection")
            # TCP_DEFER_ACCEPT on a connecting socket holds the handshake's last ACK for the
            # request's first segment (net::connect_nonblocking).
            assert (value > 0) == smart
    finally:
        origin.close()


def _http_exchange(port: int, origin_port: int) -> bytes:
    """One `Connection: close` request; everything the client got, whether it ended with a FIN
    or a reset after the data."""
    got = b""
    with connect(port) as c:
        c.sendall(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        c.settimeout(5)
        try:
            while True:
                chunk = c.recv(4096)
                if not chunk:
                    break
                got += chunk
        except ConnectionResetError:
            pass
    return got


@pytest.mark.parametrize("side", ["none", "frontend", "backend"])
def test_nolinger_in_http_mode(cfg, sluice, side):
    """Frontend nolinger: sluice's client sockets end with a reset after the whole response, so
    none of them waits in TIME_WAIT. Backend nolinger: the server that closed first gets a
    reset, not a FIN, so its socket does not wait in TIME_WAIT either."""
    origin = _HttpOrigin(close_first=True)
    try:
        port = free_port()
        text = _config(port, origin.port, defaults_extra="    mode http\n",
                       fe_extra="    option nolinger\n" if side == "frontend" else "",
                       be_extra="    option nolinger\n" if side == "backend" else "")
        sluice(cfg(text), wait_ports=[port])
        rounds = 5
        for _ in range(rounds):
            got = _http_exchange(port, origin.port)
            assert got.startswith(b"HTTP/1.1 200") and got.endswith(b"\r\n\r\nok"), got
        want_fe = 0 if side == "frontend" else rounds
        want_be = 0 if side == "backend" else rounds
        time.sleep(0.3)   # a wrongly sent FIN has arrived by now
        wait_until(lambda: (_time_wait_at(port), _time_wait_at(origin.port)) == (want_fe, want_be),
                   message=lambda: f"TIME_WAIT at sluice / origin: want {(want_fe, want_be)}, have "
                                   f"{(_time_wait_at(port), _time_wait_at(origin.port))}")
    finally:
        origin.close()
