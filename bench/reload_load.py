#!/usr/bin/env python3
"""The client loads of bench/reload.py and their failure counts: the Python new-connection and
keep-alive clients (run as `reload.py --client ...` in their own process), wrk and sluice-loadgen.
"""

from __future__ import annotations

import collections
import errno
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench_common import RAW_REQUEST, Tools
from reload_candidates import Reaper

RELOAD_PY = Path(__file__).resolve().parent / "reload.py"   # runs the Python clients (--client)

REQ_CLOSE = b"GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"
REQ_KEEPALIVE = b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n"
MAX_EVENTS = 500


class NoResponse(Exception):
    pass


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.c = collections.Counter()
        self.detail = collections.Counter()
        self.events: list[tuple[float, str, str]] = []

    def ok(self, status: int) -> None:
        with self.lock:
            if 200 <= status < 300:
                self.c["ok"] += 1
            else:
                self.c["non2xx"] += 1
                self._event("non2xx", str(status))

    def fail(self, kind: str, what: str) -> None:
        with self.lock:
            self.c[kind] += 1
            self._event(kind, what)

    def _event(self, kind: str, what: str) -> None:
        self.detail[f"{kind}:{what}"] += 1
        if len(self.events) < MAX_EVENTS:
            self.events.append((time.monotonic(), kind, what))


def err_name(e: BaseException) -> str:
    if isinstance(e, OSError) and e.errno:
        return errno.errorcode.get(e.errno, str(e.errno))
    return type(e).__name__


def read_response(s: socket.socket, buf: bytes, to_eof: bool) -> tuple[int, bytes, bytes]:
    """Reads one response; returns (status, head, what follows it). NoResponse on EOF before it is
    complete. to_eof: then reads on to the peer's close (Connection: close)."""
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            break
        d = s.recv(65536)
        if not d:
            raise NoResponse("EOF" if not buf else "EOF in head")
        buf += d
    head, rest = buf[:end + 4], buf[end + 4:]
    m = re.match(rb"HTTP/1\.\d (\d{3})", head)
    if not m:
        raise NoResponse("bad status line")
    status = int(m.group(1))
    cl = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
    if cl:
        need = int(cl.group(1))
        while len(rest) < need:
            d = s.recv(65536)
            if not d:
                raise NoResponse("EOF in body")
            rest += d
        rest = rest[need:]
    elif not to_eof:
        raise NoResponse("no content-length")
    if to_eof:
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass   # the response is complete: a reset after it is no lost request
    return status, head, rest


def connect_counted(port: int, t: Tally) -> socket.socket | None:
    """A connection to the proxy, or None with the failure counted (a refused connect waits
    5 ms, so that a proxy that is not listening is not hammered)."""
    try:
        return socket.create_connection(("127.0.0.1", port), timeout=5)
    except socket.timeout:
        t.fail("timeout", "connect")
    except OSError as e:
        t.fail("connect", err_name(e))
        time.sleep(0.005)
    return None


def newconn_worker(port: int, stop: threading.Event, t: Tally) -> None:
    while not stop.is_set():
        s = connect_counted(port, t)
        if s is None:
            continue
        try:
            s.sendall(REQ_CLOSE)
            status, _, _ = read_response(s, b"", to_eof=True)
            t.ok(status)
        except socket.timeout:
            t.fail("timeout", "response")
        except NoResponse as e:
            t.fail("reset", str(e))
        except OSError as e:
            t.fail("reset", err_name(e))
        finally:
            s.close()


def keepalive_worker(port: int, stop: threading.Event, t: Tally) -> None:
    while not stop.is_set():
        s = connect_counted(port, t)
        if s is None:
            continue
        buf = b""
        try:
            while not stop.is_set():
                s.sendall(REQ_KEEPALIVE)
                status, head, buf = read_response(s, buf, to_eof=False)
                t.ok(status)
                if re.search(rb"\r\nconnection:\s*close", head, re.I) or head.startswith(b"HTTP/1.0"):
                    break
        except socket.timeout:
            t.fail("timeout", "response")
        except NoResponse as e:
            t.fail("reset", str(e))
        except OSError as e:
            t.fail("reset", err_name(e))
        finally:
            s.close()


def client_main(kind: str, port: int, threads: int) -> int:
    """Runs one load until stdin is closed, then prints its counts as one JSON line."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stop = threading.Event()
    t = Tally()
    target = newconn_worker if kind == "newconn" else keepalive_worker
    ths = [threading.Thread(target=target, args=(port, stop, t), daemon=True) for _ in range(threads)]
    for th in ths:
        th.start()
    sys.stdin.read()
    stop.set()
    for th in ths:
        th.join(8)
    with t.lock:
        c = dict(t.c)
        out = {"ok": c.get("ok", 0), "connect": c.get("connect", 0), "reset": c.get("reset", 0),
               "non2xx": c.get("non2xx", 0), "timeout": c.get("timeout", 0), "detail": dict(t.detail),
               "events": t.events, "unfinished_threads": sum(th.is_alive() for th in ths)}
    print(json.dumps(out), flush=True)
    return 0


class Load:
    """One load running in its own process for the whole run: python threads, wrk or loadgen."""

    def __init__(self, what: str, tool: str, port: int, reaper: Reaper, tmp: Path, max_s: float) -> None:
        self.what, self.tool = what, tool
        self.out = open(tmp / f"load-{what}.out", "w+")
        if tool == "python":
            kind, n = ("newconn", 4) if what == "new-conn" else ("keepalive", 20)
            cmd = [sys.executable, str(RELOAD_PY), "--client", kind, "--client-port", str(port),
                   "--client-threads", str(n)]
            self.p = reaper.spawn(cmd, stdin=subprocess.PIPE, stdout=self.out, stderr=subprocess.STDOUT)
        elif tool == "wrk":
            cmd = [shutil.which("wrk") or "wrk", "-t1", "-c20", f"-d{int(max_s) + 1}s", "--timeout", "5s",
                   f"http://127.0.0.1:{port}/"]
            self.p = reaper.spawn(cmd, stdin=subprocess.DEVNULL, stdout=self.out, stderr=subprocess.STDOUT)
        elif tool == "loadgen":
            cmd = [Tools().loadgen, "connrate", "--target", f"127.0.0.1:{port}", "--conc", "4", "--threads", "1",
                   "--duration", str(int(max_s) + 1), "--request", RAW_REQUEST]
            self.p = reaper.spawn(cmd, stdin=subprocess.DEVNULL, stdout=self.out, stderr=subprocess.STDOUT)
        else:
            raise ValueError(tool)

    def finish(self) -> dict:
        if self.tool == "python":
            try:
                self.p.stdin.close()
            except OSError:
                pass
        else:
            self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.out.seek(0)
        text = self.out.read()
        r = {"tool": self.tool, "ok": 0, "connect": 0, "reset": 0, "non2xx": 0, "timeout": 0, "detail": {},
             "events": []}
        if self.tool == "python":
            line = next((l for l in reversed(text.splitlines()) if l.startswith("{")), "")
            if not line:
                raise RuntimeError(f"{self.what} client: no result: {text[-400:]}")
            r.update(json.loads(line))
        elif self.tool == "wrk":
            m = re.search(r"(\d+) requests in", text)
            if not m:
                raise RuntimeError(f"cannot parse wrk output: {text[-400:]}")
            m2 = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
            non2xx = int(m2.group(1)) if m2 else 0
            r["ok"] = int(m.group(1)) - non2xx
            r["non2xx"] = non2xx
            m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
            if m:
                c, rd, w, to = (int(x) for x in m.groups())
                r.update(connect=c, reset=rd + w, timeout=to,
                         detail={k: v for k, v in (("read", rd), ("write", w)) if v})
        else:
            line = next((l for l in reversed(text.splitlines()) if l.startswith("{")), "")
            if not line:
                raise RuntimeError(f"loadgen: no result: {text[-400:]}")
            j = json.loads(line)
            r.update(ok=j["conns"], errors=j["errors"], detail={"errors (not split by kind)": j["errors"]})
        r["failures"] = r.get("errors", r["connect"] + r["reset"] + r["non2xx"] + r["timeout"])
        return r
