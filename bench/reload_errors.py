#!/usr/bin/env python3
"""Requests lost to soft stops and reloads under keep-alive load, side by side.

For each candidate (a sluice binary, or HAProxy) and each run, interleaved: start the proxy on
a free port with an HTTP frontend that answers every request itself (so only the proxy's own
handling of the stop is measured), put keep-alive load on it, and during the load either
reload it twice (`-sf <old pid>`, a new process on the same configuration) or soft-stop it
(SIGUSR1, then a new process is started as a reload would, so that clients can reconnect).

Two loads:
  wrk      `wrk -t2 -c50` for 6 s; its "read" socket errors are requests that got EOF or a
           reset instead of a response (connect errors, when no process listened, are counted
           apart).
  clients  20 Python keep-alive clients sending one request after another, reconnecting after
           a `connection: close`; a failure is a request sent that got no response.

Usage: bench/reload_errors.py [--runs N] [--mode reload|sigusr1] [--load wrk|clients]
                              LABEL=sluice:/path/to/sluice LABEL=haproxy:/path/to/haproxy ...
Prints one line per run and candidate, then the totals.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CONFIG = """
global
    nbthread 2
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout http-keep-alive 10s
frontend fe
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain string "ok"
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on {port}")


class Proxy:
    def __init__(self, kind: str, binary: str, cfg: str):
        self.kind, self.binary, self.cfg = kind, binary, cfg
        self.procs: list[subprocess.Popen] = []

    def start(self, old: subprocess.Popen | None = None) -> subprocess.Popen:
        args = [self.binary, "-q", "-f", self.cfg]
        if old is not None:
            args += ["-sf", str(old.pid)]
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def stop_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()


REQUEST = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"


class Clients:
    def __init__(self, port: int, count: int = 20):
        self.port = port
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.answered = self.failures = self.refused = 0
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(count)]
        for t in self.threads:
            t.start()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            except OSError:
                with self.lock:
                    self.refused += 1
                time.sleep(0.01)
                continue
            buf = b""
            try:
                while not self.stop.is_set():
                    s.sendall(REQUEST)
                    while True:
                        end = buf.find(b"\r\n\r\n")
                        if end >= 0 and len(buf) >= end + 6:
                            break
                        data = s.recv(65536)
                        if not data:
                            raise ConnectionError("EOF")
                        buf += data
                    head, buf = buf[:end + 4], buf[end + 6:]
                    with self.lock:
                        self.answered += 1
                    if b"connection: close" in head.lower():
                        break
            except OSError:
                with self.lock:
                    self.failures += 1
            finally:
                s.close()

    def finish(self) -> tuple[int, int, int]:
        self.stop.set()
        for t in self.threads:
            t.join(10)
        return self.answered, self.failures, self.refused


def one_run(kind: str, binary: str, mode: str, load: str, tmp: str) -> tuple[int, int, int]:
    port = free_port()
    cfg = os.path.join(tmp, f"{kind}-{port}.cfg")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(port=port))
    proxy = Proxy(kind, binary, cfg)
    try:
        cur = proxy.start()
        wait_listening(port)
        if load == "wrk":
            wrk = subprocess.Popen(["wrk", "-t2", "-c50", "-d6s", f"http://127.0.0.1:{port}/"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        else:
            clients = Clients(port)
        for _ in range(2):   # at 2 s and 4 s into the 6 s load
            time.sleep(2.0)
            if mode == "reload":
                cur = proxy.start(old=cur)
            else:
                cur.send_signal(signal.SIGUSR1)
                cur.wait(10)
                cur = proxy.start()   # as a restart would: clients reconnect to it
            wait_listening(port)
        if load == "wrk":
            out, _ = wrk.communicate(timeout=30)
            total = int(re.search(r"(\d+) requests in", out).group(1))
            m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
            connect_err, read_err = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
            return total, read_err, connect_err
        time.sleep(2.0)
        return clients.finish()
    finally:
        proxy.stop_all()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mode", choices=["reload", "sigusr1"], default="reload")
    ap.add_argument("--load", choices=["wrk", "clients"], default="wrk")
    ap.add_argument("candidates", nargs="+", help="LABEL=sluice:PATH or LABEL=haproxy:PATH")
    a = ap.parse_args()
    cands = []
    for c in a.candidates:
        label, spec = c.split("=", 1)
        kind, path = spec.split(":", 1)
        cands.append((label, kind, path))
    totals = {label: [0, 0, 0] for label, _, _ in cands}
    print(f"# mode {a.mode}, load {a.load}, {a.runs} runs, interleaved; "
          "columns: requests answered, lost (read errors / no response), refused connects")
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(a.runs):
            for label, kind, path in cands:
                answered, lost, refused = one_run(kind, path, a.mode, a.load, tmp)
                for i, v in enumerate((answered, lost, refused)):
                    totals[label][i] += v
                print(f"run {run + 1} {label:12s} answered {answered:8d} lost {lost:5d} "
                      f"refused {refused:5d}", flush=True)
    for label, (answered, lost, refused) in totals.items():
        print(f"total {label:12s} answered {answered:8d} lost {lost:5d} refused {refused:5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
