"""Fake servers for the integration tests: threaded TCP servers that echo, sink, source or stay
silent, and a SYN black hole. Re-exported by sluice_harness, where tests import them from."""
from __future__ import annotations

import contextlib
import errno
import hashlib
import select
import socket
import threading
import time
from typing import Callable

from sluice_harness import free_port, pattern



class TcpServer:
    """A threaded TCP server on 127.0.0.1 (or a unix path / ::1) that runs handler(conn, self)
    for each connection in its own thread. Counts connections. stop() closes everything."""

    def __init__(self, handler: Callable[[socket.socket, "TcpServer"], None] | None = None,
                 host: str = "127.0.0.1", port: int = 0, backlog: int = 512):
        self.handler = handler or (lambda c, s: None)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port or free_port()))
        self.sock.listen(backlog)
        self.host = host
        self.port = self.sock.getsockname()[1]
        self.connections = 0          # accepted so far
        self.active = 0               # handlers still running
        self.results: list[object] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._acceptor.start()

    @property
    def addr(self) -> tuple[str, int]:
        return (self.host, self.port)

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                if self._stopping.is_set():
                    conn.close()
                    return
                self.connections += 1
                self.active += 1
                self._conns.append(conn)
            t = threading.Thread(target=self._run, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _run(self, conn: socket.socket) -> None:
        try:
            self.handler(conn, self)
        except OSError:
            pass  # peer reset, or stop() closed it
        except BaseException as exc:  # noqa: BLE001 - surfaced through self.errors
            self.errors.append(exc)
        finally:
            with self._lock:
                self.active -= 1
            with contextlib.suppress(OSError):
                conn.close()

    def add_result(self, value: object) -> None:
        with self._lock:
            self.results.append(value)

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                c.close()
        self._acceptor.join(timeout=2)
        for t in self._threads:
            t.join(timeout=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def request_heads(c: socket.socket, timeout: float = 10.0):
    """The request heads of a keep-alive connection, one after the other (bodies are not read:
    for body-less requests), until the client closes or goes quiet for `timeout`."""
    c.settimeout(timeout)
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(4096)
                if not d:
                    return
                buf += d
            head, _, buf = buf.partition(b"\r\n\r\n")
            yield head
    except OSError:
        return


def record_head_and_answer(c: socket.socket, srv: TcpServer) -> None:
    """A TcpServer handler: records what a connection sent up to the end of a request head
    (a PROXY header first, if any) and answers 200 "ok", closing."""
    c.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(4096)
        if not d:
            break
        data += d
    srv.add_result(data)
    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")


class EchoServer(TcpServer):
    """Echoes what it receives. close_after=N: closes the connection after N bytes."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, close_after: int | None = None):
        self.close_after = close_after
        self.bytes_received = 0
        super().__init__(self._echo, host, port)

    def _echo(self, conn: socket.socket, _srv) -> None:
        seen = 0
        while True:
            want = 65536 if self.close_after is None else max(0, min(65536, self.close_after - seen))
            if want == 0:
                return
            data = conn.recv(want)
            if not data:
                # Client finished sending: finish our side too (clean half-close propagation).
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_WR)
                return
            seen += len(data)
            with self._lock:
                self.bytes_received += len(data)
            conn.sendall(data)


class SinkServer(TcpServer):
    """Reads to EOF, then answers `<sha256 hex> <byte count>\\n` and closes. Results (digest,
    count) are also kept in self.results."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        super().__init__(self._sink, host, port)

    def _sink(self, conn: socket.socket, _srv) -> None:
        h = hashlib.sha256()
        n = 0
        while True:
            data = conn.recv(1 << 16)
            if not data:
                break
            h.update(data)
            n += len(data)
        self.add_result((h.hexdigest(), n))
        conn.sendall(f"{h.hexdigest()} {n}\n".encode())


class SourceServer(TcpServer):
    """Sends `size` bytes of pattern(size, seed) and closes. wait_for_eof=True: first reads the
    client's request up to EOF (a client that half-closes after its request)."""

    def __init__(self, size: int, seed: int = 1, wait_for_eof: bool = False,
                 host: str = "127.0.0.1", port: int = 0):
        self.payload = pattern(size, seed)
        self.wait_for_eof = wait_for_eof
        super().__init__(self._source, host, port)

    def _source(self, conn: socket.socket, _srv) -> None:
        if self.wait_for_eof:
            received = b""
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                received += data
            self.add_result(received)
        conn.sendall(self.payload)
        conn.shutdown(socket.SHUT_WR)
        # Drain until the proxy closes, so no RST can cut the tail of the payload.
        conn.settimeout(10)
        with contextlib.suppress(OSError):
            while conn.recv(65536):
                pass


class SilentServer(TcpServer):
    """Accepts and never answers; keeps every connection open (reading and discarding) until
    the peer closes or stop() is called. Records when each peer closed (EOF) in self.results
    as (bytes received, monotonic time of EOF)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        super().__init__(self._silent, host, port)

    def _silent(self, conn: socket.socket, _srv) -> None:
        n = 0
        while True:
            data = conn.recv(65536)
            if not data:
                self.add_result((n, time.monotonic()))
                # Keep our side open: a server that "never answers" does not close either.
                while not self._stopping.wait(0.05):
                    pass
                return
            n += len(data)


class SynBlackhole:
    """A port whose TCP handshakes never complete: a listen(0) socket that is never accepted,
    with its accept queue filled by connections made here. Later SYNs are dropped by the
    kernel, so connect() to it hangs until the caller's timeout (loopback only)."""

    def __init__(self):
        self.sock = socket.socket()
        # SO_REUSEADDR: beside free_port()'s reservation of the port, which never listens.
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", free_port()))
        self.sock.listen(0)
        self.port = self.sock.getsockname()[1]
        self.fillers: list[socket.socket] = []
        for _ in range(8):
            c = socket.socket()
            c.setblocking(False)
            err = c.connect_ex(("127.0.0.1", self.port))
            if err not in (0, errno.EINPROGRESS):
                c.close()
                break
            # A connection that completes within 0.3 s went into the accept queue.
            import select
            _, w, _ = select.select([], [c], [], 0.3)
            if w and c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                self.fillers.append(c)
                continue
            c.close()
            break
        else:
            raise RuntimeError("could not fill the accept queue of the blackhole socket")

    @property
    def addr(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    def stop(self) -> None:
        for c in self.fillers:
            c.close()
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Socks4Proxy(TcpServer):
    """A SOCKS4 proxy (CONNECT only). Records each request's bytes in `results`, then, by
    `mode`: "ok" connects to the requested IPv4 address and port and relays both ways until
    either side closes (a destination that refuses is answered 91, rejected); "deny" answers
    91; "close" closes without an answer."""

    def __init__(self, mode: str = "ok"):
        self.mode = mode
        super().__init__(self._serve)

    def _serve(self, conn: socket.socket, _srv) -> None:
        conn.settimeout(5)
        req = b""
        while len(req) < 9 or b"\0" not in req[8:]:
            chunk = conn.recv(512)
            if not chunk:
                return
            req += chunk
        self.add_result(req)
        if self.mode == "close":
            return
        port = int.from_bytes(req[2:4], "big")
        ip = socket.inet_ntoa(req[4:8])
        target = None
        if self.mode == "ok":
            with contextlib.suppress(OSError):
                target = socket.create_connection((ip, port), timeout=2)
        if target is None:
            conn.sendall(b"\x00\x5b" + req[2:8])
            return
        conn.sendall(b"\x00\x5a" + req[2:8])
        end = req.index(b"\0", 8) + 1
        if len(req) > end:
            target.sendall(req[end:])   # bytes sent before the answer (none expected)

        def pump(src: socket.socket, dst: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

        target.settimeout(None)
        conn.settimeout(None)
        back = threading.Thread(target=pump, args=(target, conn), daemon=True)
        back.start()
        pump(conn, target)
        back.join(timeout=5)
        target.close()
