"""A TLS server for the tests of `server ... ssl`: HTTP/1.1 (keep-alive, each answer saying
what the server saw of the connection) or an echo (TCP mode), on 127.0.0.1 and a free port.
It records each connection: the SNI, the ALPN protocol, whether the session was resumed, the
client certificate's subject and the PROXY protocol line read in clear before the handshake.
Every wait is bounded; stop() closes everything."""
from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path


class TlsOrigin:
    def __init__(self, cert: Path, *, ca: Path | None = None, proxy_header: bool = False,
                 echo: bool = False, alpn: list[str] | None = None):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(str(cert))
        if ca is not None:   # client certificates required, checked against `ca`
            self.ctx.load_verify_locations(str(ca))
            self.ctx.verify_mode = ssl.CERT_REQUIRED
        if alpn:
            self.ctx.set_alpn_protocols(alpn)
        self.conns: list[dict] = []
        self._sni: dict[int, str | None] = {}

        def on_sni(sock, name, _ctx):
            self._sni[id(sock)] = name
        self.ctx.sni_callback = on_sni
        self.proxy_header = proxy_header
        self.echo = echo
        self.failures = 0   # handshakes that failed
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self._threads.append(t)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            t.start()
            with self._lock:
                self._threads.append(t)

    def _serve(self, raw: socket.socket) -> None:
        raw.settimeout(10)
        info: dict = {"proxy": None, "sni": None, "alpn": None, "resumed": None, "peer": None,
                      "requests": 0}
        try:
            if self.proxy_header:
                line = b""
                while not line.endswith(b"\r\n") and len(line) < 108:
                    b = raw.recv(1)
                    if not b:
                        return
                    line += b
                info["proxy"] = line.decode(errors="replace").rstrip("\r\n")
            try:
                c = self.ctx.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                with self._lock:
                    self.failures += 1
                return
            info["sni"] = self._sni.get(id(c), None)
            info["alpn"] = c.selected_alpn_protocol()
            info["resumed"] = c.session_reused
            peer = c.getpeercert()
            if peer:
                info["peer"] = ",".join(f"{k}={v}" for rdn in peer.get("subject", ()) for k, v in rdn)
            with self._lock:
                self.conns.append(info)
                n = len(self.conns)
            if self.echo:
                while data := c.recv(65536):
                    c.sendall(data)
                return
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    data = c.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                info["requests"] += 1
                host = next((l.split(b":", 1)[1].strip().decode() for l in head.split(b"\r\n")[1:]
                             if l.lower().startswith(b"host:")), "")
                body = (f"conn={n} sni={info['sni']} alpn={info['alpn']} "
                        f"resumed={int(bool(info['resumed']))} host={host} "
                        f"peer={info['peer']}").encode()
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                          + str(len(body)).encode() + b"\r\n\r\n" + body)
        except (OSError, ssl.SSLError):
            return
        finally:
            try:
                raw.close()
            except OSError:
                pass

    def stop(self) -> None:
        self._stop.set()
        self.sock.close()
        for t in list(self._threads):
            t.join(timeout=2)
