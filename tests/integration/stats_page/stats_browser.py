"""Headless Chromium for the stats page tests: one-shot runs (--screenshot, --dump-dom) and a
long-lived browser driven through the Chrome DevTools Protocol (CDP).

Standard library only: CDP speaks JSON over a websocket, and the few lines of RFC 6455 a client
needs (handshake, masked text frames out, possibly fragmented frames in, ping/pong) are written
here rather than adding a Python package to scripts/setup.sh.

Every Chromium is started in its own process group (it forks a zygote, renderers and a GPU
process) and the whole group is killed when the run ends, whatever happened.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from sluice_harness import slow_factor, wait_until

# One Chromium run (start, load a loopback page, write its output) takes 2-5 s on the 2-core
# CI machine; 60 s only bounds a hung browser.
RUN_TIMEOUT = 60.0

# Flags for a quiet, self-contained headless browser: no sandbox (tests run as root in
# containers, where the sandbox cannot start), no GPU, no first-run UI, and none of the
# background fetches (component updates, sync, field trials) that would try to reach the
# internet.
BASE_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--no-first-run", "--no-default-browser-check", "--disable-extensions",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--metrics-recording-only", "--mute-audio",
    "--window-size=1280,1600",
]


def chromium_bin() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _env(home: Path) -> dict:
    """Chromium writes under $HOME (and the XDG folders) even with --user-data-dir: point them
    at the test's own folder. No D-Bus session exists here; saying so up front saves the
    connection attempts. Only loopback is ever loaded: no proxy settings."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"), DBUS_SESSION_BUS_ADDRESS="disabled:")
    return env


def kill_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """Ends Chromium and every process it forked (its process group, which is proc.pid's as it
    was started with start_new_session=True): SIGTERM, a short grace, then SIGKILL."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    # Children can outlive the main process: always sweep the group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


class Chromium:
    """Runs headless Chromium with a private profile under `workdir`; kill() (or the fixture)
    ends every browser it started."""

    def __init__(self, binary: str, workdir: Path):
        self.binary = binary
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.home = self.workdir / "home"
        self.home.mkdir(exist_ok=True)
        self.procs: list[subprocess.Popen] = []
        self.runs = 0

    def _profile(self) -> Path:
        self.runs += 1
        d = self.workdir / f"profile{self.runs}"
        d.mkdir()
        return d

    def run(self, *args: str) -> tuple[str, str]:
        """A one-shot run (`--screenshot=...`, `--dump-dom`, ...): returns (stdout, stderr).
        Raises AssertionError when it fails or does not end within RUN_TIMEOUT."""
        cmd = [self.binary, *BASE_FLAGS, f"--user-data-dir={self._profile()}", *args]
        out_path = self.workdir / f"run{self.runs}.stdout"
        err_path = self.workdir / f"run{self.runs}.stderr"
        # Files, not pipes: a helper process that outlives the browser and keeps them open
        # cannot make the read hang.
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=_env(self.home), start_new_session=True)
        self.procs.append(proc)
        try:
            proc.wait(timeout=RUN_TIMEOUT * slow_factor())
        except subprocess.TimeoutExpired:
            raise AssertionError(f"chromium did not finish within {RUN_TIMEOUT}s: {cmd}\n"
                                 f"--- stderr:\n{err_path.read_text(errors='replace')[-3000:]}")
        finally:
            kill_group(proc, grace=0)   # the helpers it left behind, if any
        out_s = out_path.read_text(errors="replace")
        err_s = err_path.read_text(errors="replace")
        if proc.returncode != 0:
            raise AssertionError(f"chromium exited {proc.returncode}: {cmd}\n"
                                 f"--- stderr:\n{err_s[-3000:]}")
        return out_s, err_s

    def start_devtools(self) -> "Browser":
        """A browser on about:blank with the DevTools endpoint on a kernel-picked loopback port
        (--remote-debugging-port=0, read back from DevToolsActivePort: no race with other
        tests for a port), connected to its page target."""
        profile = self._profile()
        log = self.workdir / f"chromium{self.runs}.stderr"
        cmd = [self.binary, *BASE_FLAGS, f"--user-data-dir={profile}",
               "--remote-debugging-port=0", "about:blank"]
        with open(log, "wb") as err:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, env=_env(self.home), start_new_session=True)
        self.procs.append(proc)

        def describe() -> str:
            text = log.read_text(errors="replace") if log.exists() else ""
            return f"chromium (exit={proc.poll()}) {cmd}\n--- stderr:\n{text[-3000:]}"

        def active_port():
            if proc.poll() is not None:
                raise AssertionError(f"chromium exited\n{describe()}")
            lines = (profile / "DevToolsActivePort").read_text().split("\n")
            return int(lines[0]) if len(lines) >= 2 and lines[0].isdigit() else None

        port = wait_until(active_port, RUN_TIMEOUT, interval=0.05,
                          message=lambda: f"chromium's DevToolsActivePort\n{describe()}")

        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

        def page_target():
            with opener.open(f"http://127.0.0.1:{port}/json/list",
                             timeout=5 * slow_factor()) as r:
                targets = json.load(r)
            pages = [t for t in targets if t.get("type") == "page"]
            return pages[0]["webSocketDebuggerUrl"] if pages else None

        ws_url = wait_until(page_target, 20, interval=0.05,
                            message=lambda: f"chromium's page target\n{describe()}")
        return Browser(Cdp(WebSocket(ws_url)), describe)

    def kill(self) -> None:
        for p in self.procs:
            kill_group(p)


# ----------------------------------------------------------------------------------------------
# PNG
# ----------------------------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_info(data: bytes) -> dict:
    """Checks the PNG signature and the IHDR chunk; returns width, height, bit depth, colour
    type and the number of distinct byte values in the decompressed image data (a blank page
    decodes to a handful: filter bytes and one colour)."""
    import zlib
    assert data[:8] == PNG_SIGNATURE, f"not a PNG: starts with {data[:16]!r}"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13, f"first chunk is {kind!r} ({length} bytes)"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    pos, idat = 8, bytearray()
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IEND":
            break
    assert kind == b"IEND", "PNG has no IEND chunk (truncated?)"
    pixels = zlib.decompress(bytes(idat))
    return {"width": width, "height": height, "depth": depth, "colour": colour,
            "distinct_bytes": len(set(pixels))}


# ----------------------------------------------------------------------------------------------
# A minimal websocket client (RFC 6455, client side)
# ----------------------------------------------------------------------------------------------

_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class WebSocketClosed(Exception):
    pass


class WebSocket:
    def __init__(self, url: str, timeout: float = 10.0):
        u = urlsplit(url)
        assert u.scheme == "ws", url
        self.sock = socket.create_connection((u.hostname, u.port or 80),
                                             timeout=timeout * slow_factor())
        key = base64.b64encode(os.urandom(16)).decode()
        target = u.path + (f"?{u.query}" if u.query else "")
        # No Origin field: Chromium only checks --remote-allow-origins for requests with one.
        self.sock.sendall((f"GET {target} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\n"
                           f"Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = self.sock.recv(4096)
            if not data:
                raise WebSocketClosed(f"handshake: connection closed after {buf!r}")
            buf += data
        head, self.buf = buf.split(b"\r\n\r\n", 1)
        lines = head.decode(errors="replace").split("\r\n")
        assert lines[0].split(" ")[1:2] == ["101"], f"websocket handshake refused: {head!r}"
        fields = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip()
                  for l in lines[1:] if ":" in l}
        expected = base64.b64encode(hashlib.sha1((key + _WS_GUID).encode()).digest()).decode()
        assert fields.get("sec-websocket-accept") == expected, f"bad handshake: {head!r}"

    @staticmethod
    def _mask(data: bytes, key: bytes) -> bytes:
        n = len(data)
        if n == 0:
            return data
        k = (key * (n // 4 + 1))[:n]
        return (int.from_bytes(data, "big") ^ int.from_bytes(k, "big")).to_bytes(n, "big")

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        key = os.urandom(4)
        self.sock.sendall(head + key + self._mask(payload, key))

    def send_text(self, text: str) -> None:
        self._send_frame(0x1, text.encode())

    def _read(self, n: int, deadline: float) -> bytes:
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("websocket: no complete frame before the deadline")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            if not data:
                raise WebSocketClosed("websocket: connection closed")
            self.buf += data
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv_text(self, deadline: float) -> str:
        """The next whole text message (fragments joined); answers pings on the way."""
        parts: list[bytes] = []
        while True:
            b0, b1 = self._read(2, deadline)
            fin, opcode, n = b0 & 0x80, b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2, deadline))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8, deadline))[0]
            key = self._read(4, deadline) if b1 & 0x80 else None
            payload = self._read(n, deadline)
            if key:
                payload = self._mask(payload, key)
            if opcode == 0x8:
                raise WebSocketClosed(f"websocket closed by peer: {payload!r}")
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            parts.append(payload)
            if fin:
                return b"".join(parts).decode()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._send_frame(0x8, struct.pack(">H", 1000))
        with contextlib.suppress(OSError):
            self.sock.close()


# ----------------------------------------------------------------------------------------------
# Chrome DevTools Protocol
# ----------------------------------------------------------------------------------------------

class Cdp:
    """Commands (call) and events (kept in order in self.events until a test takes them)."""

    def __init__(self, ws: WebSocket):
        self.ws = ws
        self.next_id = 0
        self.events: list[dict] = []

    def _pump(self, deadline: float) -> dict:
        msg = json.loads(self.ws.recv_text(deadline))
        if "id" not in msg:
            self.events.append(msg)
        return msg

    def call(self, method: str, timeout: float = 20.0, **params) -> dict:
        self.next_id += 1
        mid = self.next_id
        self.ws.send_text(json.dumps({"id": mid, "method": method, "params": params}))
        deadline = time.monotonic() + timeout * slow_factor()
        while True:
            msg = self._pump(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise AssertionError(f"CDP {method} failed: {msg['error']}")
                return msg.get("result", {})

    def wait_event(self, predicate, timeout: float = 20.0, what: str = "CDP event") -> dict:
        """Removes and returns the first event (old or new) for which predicate(event) holds."""
        deadline = time.monotonic() + timeout * slow_factor()
        seen = 0
        while True:
            for i in range(seen, len(self.events)):
                if predicate(self.events[i]):
                    return self.events.pop(i)
            seen = len(self.events)
            try:
                self._pump(deadline)
            except TimeoutError:
                methods = [e.get("method") for e in self.events][-30:]
                raise AssertionError(f"timed out after {timeout}s waiting for {what}; "
                                     f"events seen: {methods}")


class Browser:
    """A page driven through CDP."""

    def __init__(self, cdp: Cdp, describe):
        self.cdp = cdp
        self.describe = describe
        cdp.call("Page.enable")
        cdp.call("Network.enable")
        cdp.call("Runtime.enable")

    def evaluate(self, expression: str, timeout: float = 20.0):
        """Runs JavaScript in the page and returns its (JSON) value; a thrown exception is an
        AssertionError with the page's message."""
        r = self.cdp.call("Runtime.evaluate", timeout=timeout, expression=expression,
                          returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            raise AssertionError(f"JavaScript failed: {text}\n--- script:\n{expression}")
        return r.get("result", {}).get("value")

    def navigate(self, url: str, timeout: float = 20.0) -> None:
        r = self.cdp.call("Page.navigate", url=url)
        assert not r.get("errorText"), f"navigation to {url} failed: {r}"
        self.wait_loaded(url, timeout)

    def wait_loaded(self, url: str, timeout: float = 20.0) -> None:
        """Waits until the page shows `url` (exactly) and has finished loading."""
        def loaded():
            href, state = self.evaluate("[location.href, document.readyState]")
            return href == url and state == "complete"
        def where() -> str:
            try:
                return self.evaluate("location.href", timeout=2)
            except Exception as exc:  # noqa: BLE001 - only for the message
                return repr(exc)
        wait_until(loaded, timeout, interval=0.05,
                   message=lambda: f"the page to load {url} (now at {where()})\n"
                                   f"{self.describe()}")

    def screenshot(self) -> bytes:
        return base64.b64decode(self.cdp.call("Page.captureScreenshot", format="png")["data"])

    def close(self) -> None:
        self.cdp.ws.close()
