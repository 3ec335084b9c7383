#!/usr/bin/env python3
"""Shared helpers of the benchmarks: processes, ports, CPU and memory readings, the tools
found on the machine, config rendering, the candidates and a run's context.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

USAGE = """sluice benchmarks against HAProxy and nginx, all on loopback, in one interleaved run.

Called through bench/run.sh (and bench/instructions.sh, bench/syscalls.sh, bench/profile.sh,
bench/scaling.sh); docs/performance.md explains what each scenario measures and how to read it.

The figure that matters on a small shared machine is the proxy's own CPU time per forwarded
request or connection (utime + stime from /proc/<pid>/stat, summed over the proxy's processes),
not requests per second: the latter mostly measures how the scheduler shares the cores between
client, proxy and origin. Candidates run interleaved (A B C A B C ...), each run on a freshly
started proxy, and the report gives medians and each peer's ratio to sluice from the same run.

stdlib only.
"""

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
CONFIGS = BENCH_DIR / "configs"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

# HTTP request the raw-TCP load generator sends; nginx answers HTTP/1.0 and closes.
RAW_REQUEST = r"GET / HTTP/1.0\r\nHost: bench\r\n\r\n"


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def env_int(name: str, default: int) -> int:
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else default


def env_float(name: str, default: float) -> float:
    v = os.environ.get(name)
    return float(v) if v not in (None, "") else default


# --------------------------------------------------------------------------- processes

def proc_tree(pid: int) -> list[int]:
    """pid and all its descendants (nginx: master + workers)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        ppid = int(st[st.rfind(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_ticks(pid: int) -> tuple[int, int]:
    """(utime, stime) in clock ticks, summed over the process tree (threads are included)."""
    u = s = 0
    for p in proc_tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rfind(")") + 2:].split()
        u += int(fields[11])
        s += int(fields[12])
    return u, s


def rss_bytes(pid: int) -> int:
    total = 0
    for p in proc_tree(pid):
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except OSError:
            pass
    return total


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def pick_ports(n: int) -> list[int]:
    base = env_int("BENCH_PORT_BASE", 0)
    if base:
        return list(range(base, base + n))
    for start in range(23000 + (os.getpid() % 50) * 40, 40000, 37):
        ports = list(range(start, start + n))
        if all(port_free(p) for p in ports):
            return ports
    raise SystemExit("bench: no free port range")


def wait_port(port: int, timeout: float = 10.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def wait_port_closed(port: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                pass
        except OSError:
            return
        time.sleep(0.02)


def stop(proc: subprocess.Popen | None, sig: int = signal.SIGTERM, timeout: float = 5.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.send_signal(sig)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# --------------------------------------------------------------------------- tools

class Tools:
    def __init__(self) -> None:
        self.sluice = os.environ.get("SLUICE_BIN") or str(REPO / "build/release/src/app/sluice")
        # candidate `sluice-base`: another sluice binary (say, before a change), run interleaved
        self.sluice_base = os.environ.get("SLUICE_BASE_BIN") or ""
        self.loadgen = os.environ.get("LOADGEN_BIN") or ""
        if not self.loadgen:
            for cand in (REPO / "build/release/bench/loadgen/sluice-loadgen",
                         REPO / "build/bench-loadgen/sluice-loadgen"):
                if cand.exists():
                    self.loadgen = str(cand)
                    break
        # HAPROXY_BIN: another HAProxy than the one on PATH (a 3.5 build beside Debian's 2.6).
        self.haproxy = os.environ.get("HAPROXY_BIN") or shutil.which("haproxy") or "/usr/sbin/haproxy"
        self.nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.wrk = shutil.which("wrk")
        self.stream_module = next((str(p) for p in (Path(os.environ.get("NGINX_STREAM_MODULE") or "/nonexistent"),
                                                     Path("/usr/lib/nginx/modules/ngx_stream_module.so"),
                                                     Path("/usr/share/nginx/modules/ngx_stream_module.so"))
                                   if p.exists()), "")

    def check(self, need: list[str]) -> list[str]:
        missing = []
        for n in need:
            v = getattr(self, n)
            if not v or not Path(v).exists():
                missing.append(n)
        return missing


# --------------------------------------------------------------------------- candidates

def render(template: str, out: Path, **vars: str) -> Path:
    text = (CONFIGS / template).read_text()
    for k, v in vars.items():
        text = text.replace(f"@{k}@", str(v))
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        raise SystemExit(f"bench: {template}: unfilled {left}")
    out.write_text(text)
    return out


class Candidate:
    """One proxy configuration to start, measure and stop."""

    def __init__(self, name: str, kind: str, mode: str, threads: int, extra: str = "",
                 label: str | None = None) -> None:
        self.name, self.kind, self.mode, self.threads, self.extra = name, kind, mode, threads, extra
        self.label = label or name

    def start(self, ctx: "Ctx", port: int, backend_port: int, wrapper: list[str] | None = None,
              cpus: str | None = None) -> subprocess.Popen:
        run = ctx.run_dir
        tag = f"{self.label}-{self.threads}t".replace(" ", "_").replace("/", "_")
        vars = dict(THREADS=self.threads, PORT=port, BACKEND_PORT=backend_port, RUN=run,
                    GLOBAL_EXTRA=self.extra, STREAM_MODULE=ctx.tools.stream_module,
                    RULES=(CONFIGS / "rules-http.inc").read_text())
        if self.kind == "sluice":
            cfg = render(f"sluice-{self.mode}.cfg", run / f"{tag}.cfg", **vars)
            binary = ctx.tools.sluice_base if self.name == "sluice-base" else ctx.tools.sluice
            if not binary:
                raise RuntimeError("candidate sluice-base needs SLUICE_BASE_BIN")
            cmd = [binary, "-f", str(cfg)]
        elif self.kind == "haproxy":
            cfg = render(f"haproxy-{self.mode}.cfg", run / f"{tag}.cfg", **vars)
            cmd = [ctx.tools.haproxy, "-f", str(cfg)]
        elif self.kind == "nginx":
            cfg = render(f"nginx-{'stream' if self.mode == 'tcp' else 'http'}.conf", run / f"{tag}.conf", **vars)
            cmd = [ctx.tools.nginx, "-q", "-p", str(run), "-e", str(run / "proxy-nginx-error.log"), "-c", str(cfg)]
        else:
            raise ValueError(self.kind)
        if cpus:
            cmd = ["taskset", "-c", cpus] + cmd
        if wrapper:
            cmd = wrapper + cmd
        errf = open(run / f"{tag}.stderr", "ab")
        proc = subprocess.Popen(cmd, stdout=errf, stderr=errf, stdin=subprocess.DEVNULL)
        try:
            wait_port(port, proc=proc, timeout=30 if wrapper else 10)
        except RuntimeError as e:
            stop(proc)
            tail = (run / f"{tag}.stderr").read_text(errors="replace")[-400:]
            raise RuntimeError(f"{e}: {tail}") from None
        return proc

    def mode_text(self) -> str:
        return {"sluice": self.mode.upper(), "haproxy": self.mode.upper(), "nginx": "stream" if self.mode == "tcp" else "http"}[self.kind]


# --------------------------------------------------------------------------- the run

class Ctx:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tools = Tools()
        self.run_dir = Path(tempfile.mkdtemp(prefix="sluice-bench-"))
        os.chmod(self.run_dir, 0o755)
        for d in ("tmp", "www"):
            (self.run_dir / d).mkdir()
        os.chmod(self.run_dir / "www", 0o755)
        self.port, self.backend_port, self.sink_port = pick_ports(3)
        self.backend: subprocess.Popen | None = None
        self.sink: subprocess.Popen | None = None
        self.sink_status = self.run_dir / "sink.status"

    def start_backend(self) -> None:
        size = self.args.bulk_mb * 1024 * 1024
        with open(self.run_dir / "www/big.bin", "wb") as f:
            f.write(os.urandom(1024 * 1024) * self.args.bulk_mb)
        os.chmod(self.run_dir / "www/big.bin", 0o644)
        self.bulk_size = size
        cfg = render("backend-nginx.conf", self.run_dir / "backend-nginx.conf", RUN=self.run_dir,
                     BACKEND_PORT=self.backend_port, WORKERS=getattr(self.args, "backend_workers", 1))
        cmd = [self.tools.nginx, "-q", "-p", str(self.run_dir), "-e", str(self.run_dir / "backend-nginx-error.log"),
               "-c", str(cfg)]
        if self.args.backend_cpus:
            cmd = ["taskset", "-c", self.args.backend_cpus] + cmd
        self.backend = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
        wait_port(self.backend_port, proc=self.backend)

    def start_sink(self) -> None:
        self.sink = subprocess.Popen([self.tools.loadgen, "sink", "--listen", f"127.0.0.1:{self.sink_port}",
                                      "--status-file", str(self.sink_status)],
                                     stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        wait_port(self.sink_port, proc=self.sink)

    def sink_counts(self) -> tuple[int, int]:
        try:
            a, o = self.sink_status.read_text().split()
            return int(a), int(o)
        except (OSError, ValueError):
            return 0, 0

    def close(self) -> None:
        stop(self.sink)
        stop(self.backend, signal.SIGQUIT)
        stop(self.backend)
        if not self.args.keep:
            shutil.rmtree(self.run_dir, ignore_errors=True)


# --- load -------------------------------------------------------------------
