"""Clients and receivers for the integration tests: raw TCP clients and their bounded reads, Debian's
nginx as a peer, HTTP GET, syslog receivers over UDP and UNIX datagrams, and `show info` /
`show stat` through the CLI, and steady keep-alive HTTP clients. Re-exported by sluice_harness, where tests import them from."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

from sluice_harness import (ProcessExited, cli, free_port, is_listening, parse_show_info,
                            parse_show_stat, recv_all, slow_factor, wait_until)


# ----------------------------------------------------------------------------------------------
# Raw clients
# ----------------------------------------------------------------------------------------------

def connect(port: int, host: str = "127.0.0.1", timeout: float = 5.0) -> socket.socket:
    s = socket.create_connection((host, port), timeout=timeout * slow_factor())
    return s


def echo_roundtrip(port: int, payload: bytes = b"ping\n", host: str = "127.0.0.1",
                   timeout: float = 5.0) -> bytes:
    """Connects, sends payload, reads back len(payload) bytes, closes. Returns what came back."""
    with connect(port, host, timeout) as s:
        s.sendall(payload)
        return recv_exact(s, len(payload), timeout)


def exchange(port: int, raw: bytes, timeout: float = 5.0, host: str = "127.0.0.1") -> bytes:
    """Sends `raw` and reads until the server closes (the last request says close)."""
    with socket.create_connection((host, port), timeout=timeout) as c:
        c.sendall(raw)
        got = b""
        while d := c.recv(65536):
            got += d
        return got


def queued_clients(port: int, n: int) -> list[socket.socket]:
    """`n` connections to an echo path through `port`, each sending "NN\n" (its number). With
    `maxconnrate 1` the proxy accepts the first (checked here) and leaves the others in the
    listening socket's queue. The caller closes them."""
    clients = []
    for i in range(n):
        c = connect(port)
        c.sendall(b"%02d\n" % i)
        clients.append(c)
    assert recv_exact(clients[0], 3) == b"00\n"
    return clients


def request_ok(c, host: str = "a.test") -> bytes:
    """Sends a GET / on `c` (a TLS socket, say) and reads until the "ok" body of a 200 (or the
    end): what a `http-request return ... string ok` frontend answers."""
    c.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    got = b""
    while b"\r\n\r\nok" not in got:
        d = c.recv(4096)
        if not d:
            break
        got += d
    return got


def recv_exact(sock: socket.socket, n: int, timeout: float = 5.0) -> bytes:
    deadline = time.monotonic() + timeout * slow_factor()
    buf = bytearray()
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"got {len(buf)} of {n} bytes within {timeout}s")
        sock.settimeout(left)
        try:
            data = sock.recv(min(1 << 16, n - len(buf)))
        except socket.timeout:
            continue
        if not data:
            raise AssertionError(f"EOF after {len(buf)} of {n} bytes")
        buf += data
    return bytes(buf)


def recv_head(sock: socket.socket, timeout: float = 5.0) -> bytes:
    """Reads until the end of an HTTP head (CRLF CRLF) and returns everything read so far.
    AssertionError on EOF before it or at the deadline."""
    deadline = time.monotonic() + timeout * slow_factor()
    buf = b""
    while b"\r\n\r\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no complete head within {timeout}s: {buf[:200]!r}")
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        if not data:
            raise AssertionError(f"EOF in the head: {buf[:200]!r}")
        buf += data
    return buf


def wait_closed(sock: socket.socket, timeout: float = 5.0) -> float:
    """Waits until the peer closes (EOF or reset), discarding data; returns the monotonic time
    it happened. AssertionError if still open at the deadline."""
    deadline = time.monotonic() + timeout * slow_factor()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"connection still open after {timeout}s")
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
            return time.monotonic()
        if not data:
            return time.monotonic()


def no_data_for(sock: socket.socket, seconds: float) -> bool:
    """True if neither data nor EOF arrives within `seconds` (a short observation window)."""
    sock.settimeout(seconds)
    try:
        sock.recv(65536, socket.MSG_PEEK)
    except socket.timeout:
        return True
    except OSError:
        return False
    return False


# ----------------------------------------------------------------------------------------------
# nginx (Debian's) as a real backend
# ----------------------------------------------------------------------------------------------

def nginx_bin() -> str | None:
    for p in ("/usr/sbin/nginx", shutil.which("nginx") or ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


class Nginx:
    def __init__(self, tmp_path, port: int, body: str = "hello\n"):
        self.dir = Path(tmp_path) / f"nginx-{port}"
        self.dir.mkdir(parents=True, exist_ok=True)
        for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi", "logs"):
            (self.dir / d).mkdir(exist_ok=True)
        self.port = port
        self.conf = self.dir / "nginx.conf"
        escaped = body.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        self.conf.write_text(f"""
daemon off;
master_process off;
worker_processes 1;
pid {self.dir}/nginx.pid;
error_log {self.dir}/logs/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {self.dir}/client_body;
    proxy_temp_path {self.dir}/proxy;
    fastcgi_temp_path {self.dir}/fastcgi;
    uwsgi_temp_path {self.dir}/uwsgi;
    scgi_temp_path {self.dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            default_type text/plain;
            return 200 "{escaped}";
        }}
    }}
}}
""")
        binary = nginx_bin()
        if binary is None:
            raise RuntimeError("nginx not installed (scripts/setup.sh installs it)")
        self.proc = subprocess.Popen(
            [binary, "-p", str(self.dir), "-c", str(self.conf), "-e", str(self.dir / "logs/error.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.dir / "logs/stderr", "wb"))

        def ready():
            if self.proc.poll() is not None:
                raise ProcessExited(f"nginx exited: {self.log()}")
            return is_listening(port, self.proc.pid)
        try:
            wait_until(ready, 10, message=lambda: f"nginx on port {port}: {self.log()}")
        except BaseException:
            self.stop()
            raise

    def log(self) -> str:
        text = ""
        for name in ("logs/stderr", "logs/error.log"):
            with contextlib.suppress(OSError):
                text += (self.dir / name).read_text()
        return text

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def start_nginx(tmp_path, port: int | None = None, body: str = "hello\n") -> Nginx:
    return Nginx(tmp_path, port or free_port(), body)


def http_get(port: int, path: str = "/", host: str = "127.0.0.1", timeout: float = 5.0) -> bytes:
    """A minimal HTTP/1.0 GET with a plain socket; returns the raw response."""
    with connect(port, host, timeout) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: test\r\n\r\n".encode())
        return recv_all(s, timeout)


# ----------------------------------------------------------------------------------------------
# Log receivers
# ----------------------------------------------------------------------------------------------

# ----------------------------------------------------------------------------------------------
# Steady HTTP clients (soft stop and reload tests)
# ----------------------------------------------------------------------------------------------

def _read_return_response(sock: socket.socket, buf: bytearray):
    """Reads one `return` response (content-length 2). None when the connection ended first."""
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0 and len(buf) >= end + 4 + 2:
            head = bytes(buf[:end + 4])
            del buf[:end + 4 + 2]
            return head
        try:
            data = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            return None
        if not data:
            return None
        buf += data


class KeepAliveClients:
    """`count` threads each sending `request` one after another on a keep-alive connection, to
    a frontend that answers with `http-request return status 200 ... string "ok"`.
    `reconnect`: a connection closed after a `connection: close` response is replaced by a new
    one (as a client facing a reload does; a request saying `Connection: close` makes every
    request a new connection). A failure is a request sent (or a connection refused) that got
    no response, or a response that is not a 200."""

    def __init__(self, port: int, count: int, reconnect: bool,
                 request: bytes = b"GET /k HTTP/1.1\r\nHost: a\r\n\r\n"):
        self.port, self.reconnect, self.request = port, reconnect, request
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.answered = 0
        self.connected = 0
        self.closes = 0
        self.failures: list[str] = []
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(count)]
        for t in self.threads:
            t.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            except OSError as e:
                if self.stop.is_set():
                    return
                with self.lock:
                    self.failures.append(f"connect: {e}")
                time.sleep(0.01)
                continue
            with self.lock:
                self.connected += 1
            buf = bytearray()
            served = 0
            try:
                while not self.stop.is_set():
                    try:
                        sock.sendall(self.request)
                    except OSError as e:
                        with self.lock:
                            self.failures.append(f"send: {e}")
                        break
                    head = _read_return_response(sock, buf)
                    if head is None:
                        with self.lock:
                            self.failures.append(f"no response (request {served + 1} of its "
                                                 f"connection)")
                        break
                    if not head.startswith(b"HTTP/1.1 200 "):
                        with self.lock:
                            self.failures.append(f"status: {head[:20]!r}")
                        break
                    served += 1
                    with self.lock:
                        self.answered += 1
                    if b"\r\nconnection: close\r\n" in head.lower():
                        with self.lock:
                            self.closes += 1
                        break
            finally:
                sock.close()
            if not self.reconnect:
                return

    def finish(self, timeout: float = 10.0) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout)


class _DatagramReceiver:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.messages: list[bytes] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.sock.settimeout(0.1)
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self.messages.append(data)

    def texts(self) -> list[str]:
        with self._lock:
            return [m.decode(errors="replace") for m in self.messages]

    def wait_for(self, predicate: Callable[[str], bool] = lambda m: True,
                 timeout: float = 5.0) -> str:
        """Waits for a message matching predicate; returns it."""
        def found():
            for m in self.texts():
                if predicate(m):
                    return m
            return None
        return wait_until(found, timeout, message=lambda: f"a log message; got {self.texts()!r}")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class UdpLogReceiver(_DatagramReceiver):
    """Collects syslog datagrams sent to 127.0.0.1:self.port."""

    def __init__(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))   # we keep the socket, so a kernel-chosen port cannot collide
        self.port = s.getsockname()[1]
        super().__init__(s)


class UnixDgramLogReceiver(_DatagramReceiver):
    """Collects datagrams sent to the unix datagram socket at `path` (like /dev/log)."""

    def __init__(self, path: str):
        self.path = str(path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(self.path)
        super().__init__(s)

    def stop(self) -> None:
        super().stop()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


SYSLOG_PRI_LOCAL0_INFO = 16 * 8 + 6   # 134

__all__ = [n for n in dir() if not n.startswith("_")]


def show_stat(addr, timeout: float = 5.0) -> list[dict[str, str]]:
    """`show stat` through a stats socket, parsed into rows."""
    return parse_show_stat(cli(addr, "show stat", timeout))[1]


def show_info(addr, timeout: float = 5.0) -> dict[str, str]:
    return parse_show_info(cli(addr, "show info", timeout))


class EchoLoad:
    """`threads` clients that open connection after connection to `port` on 127.0.0.1, send a
    line and wait for its echo (an echo server behind the proxy): `ok` counts the round trips,
    `failures` keeps what went wrong (refused, reset, EOF, timeout). Reloads under load count
    on it: `with EchoLoad(port) as load: ...` stops the threads however the block ends."""

    def __init__(self, port: int, threads: int = 4):
        self.port, self.ok, self.failures = port, 0, []
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as c:
                    c.sendall(b"x\n")
                    assert recv_exact(c, 2) == b"x\n"
                with self._lock:
                    self.ok += 1
            except (OSError, AssertionError) as e:
                self.failures.append(repr(e))

    def __enter__(self) -> "EchoLoad":
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=10)


def accepted_per_thread(addr, prefix: str = "") -> list[int]:
    """`show activity`'s accepted connections per thread, from the CLI at `addr` (`prefix`:
    `@1 ` to ask a worker through a master CLI)."""
    for line in cli(addr, prefix + "show activity").splitlines():
        if line.startswith("accepted:"):
            return [int(x) for x in line.split("[", 1)[1].strip(" ]").split()]
    raise AssertionError("no accepted line")


def roundtrip_from_cpu(port: int, cpu: int) -> bytes | None:
    """echo_roundtrip(port) from a thread pinned to `cpu` (on loopback the SYN is handled
    there, which CPU steering reads)."""
    result = {}

    def run():
        os.sched_setaffinity(0, {cpu})   # this thread only
        result["echo"] = echo_roundtrip(port)
    t = threading.Thread(target=run)
    t.start()
    t.join(10)
    return result.get("echo")
