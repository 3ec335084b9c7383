"""Soft stop (SIGUSR1) and `-sf` reloads under steady keep-alive traffic: no request that a
client put on the wire may go unanswered. A keep-alive connection caught between two requests
at the stop gets a grace to deliver its next one, answered with `connection: close`; one that
stays idle is closed with a FIN and its input drained, so that a client can retry safely."""
import signal
import socket
import threading
import time

from sluice_harness import free_port, slow_factor, wait_until

REQUEST = b"GET /k HTTP/1.1\r\nHost: a\r\n\r\n"


def _config(port: int, nbthread: int = 2) -> str:
    return f"""
global
    nbthread {nbthread}
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout http-keep-alive 10s
frontend fe
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain string "ok"
"""


def _read_response(sock: socket.socket, buf: bytearray):
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
    """`count` threads each sending requests one after another on a keep-alive connection.
    `reconnect`: a connection closed after a `connection: close` response is replaced by a new
    one (as a client facing a reload does). A failure is a request sent (or a connection
    refused) that got no response."""

    def __init__(self, port: int, count: int, reconnect: bool):
        self.port, self.reconnect = port, reconnect
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
                        sock.sendall(REQUEST)
                    except OSError as e:
                        with self.lock:
                            self.failures.append(f"send: {e}")
                        break
                    head = _read_response(sock, buf)
                    if head is None:
                        with self.lock:
                            self.failures.append(f"no response (request {served + 1} of its "
                                                 f"connection)")
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


def test_soft_stop_answers_every_keepalive_request_on_the_wire(cfg, sluice):
    port = free_port()
    s = sluice(cfg(_config(port)), wait_ports=[port])
    clients = KeepAliveClients(port, 20, reconnect=False)
    try:
        wait_until(lambda: clients.connected == 20 and clients.answered > 400,
                   10 * slow_factor(), message="traffic on every connection")
        s.signal(signal.SIGUSR1)
        assert s.wait_exit(timeout=10) == 0, s.describe()
    finally:
        clients.finish()
    assert clients.failures == [], (clients.failures, clients.answered)
    # Every client was between two requests at the stop: each got its last one answered with
    # connection: close.
    assert clients.closes == 20, (clients.closes, clients.answered)


def test_reloads_answer_every_keepalive_request_on_the_wire(cfg, sluice):
    port = free_port()
    path = cfg(_config(port))
    old = sluice(path, wait_ports=[port])
    clients = KeepAliveClients(port, 20, reconnect=True)
    try:
        for _ in range(2):
            seen = clients.answered
            wait_until(lambda: clients.answered > seen + 400, 10 * slow_factor(), message="traffic")
            new = sluice(path, wait_ports=[port], extra_args=["-sf", str(old.pid)])
            assert old.wait_exit(timeout=10) == 0, old.describe()
            old = new
        seen = clients.answered
        wait_until(lambda: clients.answered > seen + 400, 10 * slow_factor(),
                   message="traffic on the last process")
    finally:
        clients.finish()
    assert clients.failures == [], (clients.failures[:5], len(clients.failures), clients.answered)
    assert clients.closes >= 20, clients.closes
