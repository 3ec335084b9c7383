#!/usr/bin/env python3
"""sluice benchmarks against HAProxy and nginx, all on loopback, in one interleaved run.

Called through bench/run.sh (and bench/instructions.sh, bench/syscalls.sh, bench/profile.sh,
bench/scaling.sh); docs/performance.md explains what each scenario measures and how to read it.

The figure that matters on a small shared machine is the proxy's own CPU time per forwarded
request or connection (utime + stime from /proc/<pid>/stat, summed over the proxy's processes),
not requests per second: the latter mostly measures how the scheduler shares the cores between
client, proxy and origin. Candidates run interleaved (A B C A B C ...), each run on a freshly
started proxy, and the report gives medians and each peer's ratio to sluice from the same run.

stdlib only.
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
        self.haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
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
                    GLOBAL_EXTRA=self.extra, STREAM_MODULE=ctx.tools.stream_module)
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

_UNIT = {"us": 1.0, "ms": 1000.0, "s": 1e6, "m": 60e6}
_BYTES = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}


def parse_wrk(out: str) -> dict:
    r: dict = {}
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+), ([\d.]+)(\w+) read", out)
    if not m:
        raise RuntimeError("cannot parse wrk output:\n" + out)
    r["ops"] = int(m.group(1))
    r["seconds"] = float(m.group(2)) * {"ms": 1e-3, "s": 1.0, "m": 60.0}.get(m.group(3), 1.0)
    r["bytes"] = float(m.group(4)) * _BYTES.get(m.group(5), 1)
    for pct in ("50", "90", "99"):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M)
        r[f"p{pct}_us"] = float(m.group(1)) * _UNIT[m.group(2)] if m else None
    errs = 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errs += sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errs += int(m.group(1))
    r["errors"] = errs
    return r


def run_wrk(ctx: Ctx, port: int, duration: float, conns: int, close: bool, path: str = "/",
            cpus: str | None = None) -> dict:
    cmd = [ctx.tools.wrk, "-t", str(ctx.args.wrk_threads), "-c", str(conns), "-d", f"{max(1, int(round(duration)))}s",
           "--latency", "--timeout", "5s"]
    if close:
        cmd += ["-H", "Connection: close"]
    cmd.append(f"http://127.0.0.1:{port}{path}")
    if cpus:
        cmd = ["taskset", "-c", cpus] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 30).stdout
    return parse_wrk(out)


def run_connrate(ctx: Ctx, port: int, duration: float = 0, count: int = 0, conc: int = 32, threads: int = 1,
                 cpus: str | None = None) -> dict:
    cmd = [ctx.tools.loadgen, "connrate", "--target", f"127.0.0.1:{port}", "--conc", str(conc),
           "--threads", str(threads), "--request", RAW_REQUEST]
    cmd += ["--count", str(count)] if count else ["--duration", str(duration)]
    if cpus:
        cmd = ["taskset", "-c", cpus] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=(duration or 60) + 60)
    line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    if not line.startswith("{"):
        raise RuntimeError(f"loadgen failed: {p.stdout} {p.stderr}")
    j = json.loads(line)
    return {"ops": j["conns"], "seconds": j["seconds"], "errors": j["errors"], "p50_us": j["p50_us"],
            "p90_us": j["p90_us"], "p99_us": j["p99_us"], "bytes": 0}


# --- scenarios ---------------------------------------------------------------

SCENARIOS = {
    # name: (title, unit of work, proxy mode for haproxy/nginx)
    "http-close": ("HTTP, new connection per request (wrk, Connection: close)", "request", "http"),
    "http-keepalive": ("HTTP keep-alive requests (wrk)", "request", "http"),
    "tcp-keepalive": ("TCP mode, requests over long-lived connections (wrk keep-alive through every proxy in TCP mode)", "request", "tcp"),
    "tcp-connrate": ("TCP mode connection rate (sluice-loadgen: connect, send, read answer, close)", "connection", "tcp"),
    "bulk": ("Bulk transfer of large bodies (wrk, keep-alive, TCP mode for every proxy)", "GB", "tcp"),
    "memory": ("RSS growth per idle established connection (sluice-loadgen hold, TCP mode)", "connection", "tcp"),
    "memory-http": ("RSS growth per idle keep-alive connection after one request (sluice-loadgen hold, HTTP mode)",
                    "connection", "http"),
    "listener-modes": ("sluice listener modes: TCP connection rate, nbthread 2", "connection", "tcp"),
}
DEFAULT_SCENARIOS = ["http-close", "http-keepalive", "tcp-keepalive", "tcp-connrate", "bulk", "memory", "memory-http",
                     "listener-modes"]
MEMORY_SCENARIOS = ("memory", "memory-http")

# memory-http: the one keep-alive request each held connection sends.
HOLD_REQUEST = r"GET / HTTP/1.1\r\nHost: bench\r\n\r\n"
# memory-http: RSS is read this long after the last answer, the same for every proxy. A burst leaves
# memory that a proxy may give back on its own schedule (sluice's buffer pool trims once a second);
# what is measured is what an idle connection keeps, not what the burst left behind for a moment.
MEM_SETTLE_S = 3.0

LISTENER_VARIANTS = [
    ("shards by-process (2 groups)", "    thread-groups 2\n    tune.listener.default-shards by-process"),
    ("shards by-group (2 groups)", "    thread-groups 2\n    tune.listener.default-shards by-group"),
    ("shards by-thread (2 groups)", "    thread-groups 2\n    tune.listener.default-shards by-thread"),
    ("multi-queue on (1 group, 1 socket)", "    thread-groups 1\n    tune.listener.multi-queue on"),
    ("multi-queue fair (1 group, 1 socket)", "    thread-groups 1\n    tune.listener.multi-queue fair"),
    ("multi-queue off (1 group, 1 socket)", "    thread-groups 1\n    tune.listener.multi-queue off"),
]


def candidates_for(scn: str, args: argparse.Namespace) -> list[Candidate]:
    if scn == "listener-modes":
        return [Candidate("sluice", "sluice", "tcp", 2, extra, label=label) for label, extra in LISTENER_VARIANTS]
    mode = SCENARIOS[scn][2]
    threads = [1] if scn in MEMORY_SCENARIOS and not args.memory_all_threads else args.threads
    out = []
    for t in threads:
        for name in args.candidates:
            out.append(Candidate(name, "sluice" if name == "sluice-base" else name, mode, t))
    return out


def rotated_plan(args: argparse.Namespace, rep: int) -> list:
    """The runs of repetition `rep`: each scenario's candidates in an order rotated by one per
    repetition (A B C, B C A, C A B, ...), so that no candidate always runs right after the same
    one and inherits its leftovers (the previous run's tens of thousands of TIME_WAIT sockets,
    a warm or cold cache)."""
    out = []
    for scn in args.scenarios:
        cands = candidates_for(scn, args)
        k = (rep - 1) % len(cands) if cands else 0
        out += [(scn, c) for c in cands[k:] + cands[:k]]
    return out


def warm_up(ctx: Ctx, port: int, cpus: str | None = None) -> None:
    try:
        run_connrate(ctx, port, count=200, conc=8, cpus=cpus)
    except Exception as e:  # noqa: BLE001 - a failed warm-up shows up in the measured run
        log(f"warm-up failed: {e}")


def drive_load(ctx: Ctx, scn: str, port: int, duration: float, cpus: str | None = None) -> dict:
    """The client side of a throughput scenario, for `duration` seconds."""
    a = ctx.args
    if scn == "http-close":
        return run_wrk(ctx, port, duration, a.close_conns, close=True, cpus=cpus)
    if scn in ("http-keepalive", "tcp-keepalive"):
        return run_wrk(ctx, port, duration, a.ka_conns, close=False, cpus=cpus)
    if scn == "bulk":
        return run_wrk(ctx, port, duration, a.bulk_conns, close=False, path="/big", cpus=cpus)
    # tcp-connrate, listener-modes
    return run_connrate(ctx, port, duration=duration, conc=a.tcp_conns, cpus=cpus)


def usable_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def placement(args: argparse.Namespace, threads: int) -> tuple[str | None, str | None]:
    """(proxy CPUs, client and origin CPUs) for a candidate with `threads` threads, or (None,
    None) when every process shares every CPU."""
    cpus = usable_cpus()
    if args.placement != "split" or len(cpus) <= threads:
        return None, None
    return cpu_list(cpus[:threads]), cpu_list(cpus[threads:])


def cpus_allowed(pid: int) -> str:
    """The CPUs the kernel lets `pid` run on, as /proc shows them ("0", "0-1"), or "" if gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def cpu_list(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)


def set_affinity_tree(pid: int, cpus: str | None) -> None:
    """Moves a running process and its children (the nginx origin's master and workers) to `cpus`
    (None: every usable CPU)."""
    want = {int(c) for c in cpus.split(",")} if cpus else set(usable_cpus())
    pids = [pid]
    try:
        pids += [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    for p in pids:
        try:
            os.sched_setaffinity(p, want)
        except OSError:
            pass


def measure(ctx: Ctx, scn: str, cand: Candidate) -> dict:
    a = ctx.args
    backend = ctx.sink_port if scn == "memory" else ctx.backend_port
    proxy_cpus, peer_cpus = placement(a, cand.threads)
    if ctx.backend and not a.backend_cpus:
        set_affinity_tree(ctx.backend.pid, peer_cpus)
    proc = cand.start(ctx, ctx.port, backend, cpus=proxy_cpus)
    res: dict = {"scenario": scn, "candidate": cand.name, "label": cand.label, "threads": cand.threads,
                 "mode": cand.mode_text(), "placement": "split" if proxy_cpus else "shared",
                 "proxy_cpus_allowed": cpus_allowed(proc.pid)}
    try:
        if scn == "memory":
            res.update(measure_memory(ctx, proc))
            return res
        if scn == "memory-http":
            res.update(measure_memory_http(ctx, proc))
            return res
        warm_up(ctx, ctx.port, peer_cpus)
        u0, s0 = cpu_ticks(proc.pid)
        r = drive_load(ctx, scn, ctx.port, a.duration, peer_cpus)
        u1, s1 = cpu_ticks(proc.pid)
        if proc.poll() is not None:
            raise RuntimeError(f"{cand.label} exited during the run (rc {proc.returncode})")
        res.update(r)
        res["user_s"] = (u1 - u0) / CLK_TCK
        res["sys_s"] = (s1 - s0) / CLK_TCK
        res["rate"] = r["ops"] / r["seconds"] if r["seconds"] else 0
        if scn == "bulk":
            gb = r["bytes"] / 1e9
            res["gbit_s"] = r["bytes"] * 8 / 1e9 / r["seconds"] if r["seconds"] else 0
            res["cpu_per_unit"] = (res["user_s"] + res["sys_s"]) / gb if gb else None  # CPU seconds per GB
            res["user_per_unit"] = res["user_s"] / gb if gb else None
            res["sys_per_unit"] = res["sys_s"] / gb if gb else None
        else:
            n = r["ops"]
            res["cpu_per_unit"] = (res["user_s"] + res["sys_s"]) * 1e6 / n if n else None  # us per op
            res["user_per_unit"] = res["user_s"] * 1e6 / n if n else None
            res["sys_per_unit"] = res["sys_s"] * 1e6 / n if n else None
    finally:
        stop(proc)
        wait_port_closed(ctx.port)
    return res


def measure_memory(ctx: Ctx, proc: subprocess.Popen) -> dict:
    n = ctx.args.mem_conns
    a0, o0 = ctx.sink_counts()
    time.sleep(0.3)
    rss0 = rss_bytes(proc.pid)
    hold = subprocess.Popen([ctx.tools.loadgen, "hold", "--target", f"127.0.0.1:{ctx.port}", "--conns", str(n)],
                            stdout=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        line = hold.stdout.readline().split()
        established = int(line[1]) if line and line[0] == "ready" else 0
        failed = int(line[2]) if line and line[0] == "ready" else n
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and ctx.sink_counts()[1] < o0 + established:
            time.sleep(0.05)
        upstream = ctx.sink_counts()[1] - o0
        time.sleep(0.5)
        rss1 = rss_bytes(proc.pid)
    finally:
        stop(hold)
    # let the proxy and the sink see the closes before the next run
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and ctx.sink_counts()[1] > o0:
        time.sleep(0.05)
    per = (rss1 - rss0) / established if established else None
    return {"ops": established, "errors": failed + max(0, established - upstream), "rss0": rss0, "rss1": rss1,
            "cpu_per_unit": per, "upstream": upstream, "rate": None}


def answered_clients(port: int) -> tuple[int, int]:
    """(established, answered) client-side sockets connected to 127.0.0.1:port: answered ones
    have unread bytes in their receive queue (the hold client never reads)."""
    rem = f"0100007F:{port:04X}"
    est = ans = 0
    try:
        with open("/proc/net/tcp") as f:
            next(f, None)
            for line in f:
                fl = line.split()
                if len(fl) < 5 or fl[2] != rem or fl[3] != "01":
                    continue
                est += 1
                if int(fl[4].split(":")[1], 16) > 0:
                    ans += 1
    except OSError:
        pass
    return est, ans


def measure_memory_http(ctx: Ctx, proc: subprocess.Popen) -> dict:
    """Each connection sends one keep-alive request through the proxy to the nginx origin, gets its
    answer, then stays open and idle: what an idle HTTP keep-alive connection costs after a burst."""
    n = ctx.args.mem_conns
    time.sleep(0.3)
    rss0 = rss_bytes(proc.pid)
    hold = subprocess.Popen([ctx.tools.loadgen, "hold", "--target", f"127.0.0.1:{ctx.port}", "--conns", str(n),
                             "--hello", HOLD_REQUEST],
                            stdout=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    answered = 0
    try:
        line = hold.stdout.readline().split()
        established = int(line[1]) if line and line[0] == "ready" else 0
        failed = int(line[2]) if line and line[0] == "ready" else n
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            answered = answered_clients(ctx.port)[1]
            if answered >= established:
                break
            time.sleep(0.2)
        rss_answered = rss_bytes(proc.pid)
        time.sleep(MEM_SETTLE_S)
        rss1 = rss_bytes(proc.pid)
    finally:
        stop(hold)
    # let the proxy see the closes before it is stopped
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and answered_clients(ctx.port)[0] > 0:
        time.sleep(0.1)
    per = (rss1 - rss0) / established if established else None
    return {"ops": established, "errors": failed + max(0, established - answered), "rss0": rss0,
            "rss_answered": rss_answered, "rss1": rss1, "cpu_per_unit": per, "answered": answered, "rate": None}


# --- report ------------------------------------------------------------------

def med(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, digits: int = 1) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and abs(x) >= 1000:
        return f"{x:,.0f}"
    if digits == 0:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def machine() -> dict:
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    def ver(cmd: list[str]) -> str:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=5)
            return (p.stdout + p.stderr).strip().splitlines()[0]
        except Exception:  # noqa: BLE001
            return "?"
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(),
            "sluice": ver([Tools().sluice, "-v"]), "haproxy": ver(["haproxy", "-v"]), "nginx": ver(["nginx", "-v"]),
            "wrk": ver(["wrk", "-v"]), "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def placement_text(args: argparse.Namespace) -> str:
    if args.placement != "split":
        return ("Placement: shared (no CPU pinning: the scheduler places client, proxy and origin; "
                "`--placement split` gives the proxy CPUs of its own).")
    parts = []
    for t in args.threads:
        proxy, peers = placement(args, t)
        parts.append(f"{t} thread(s): proxy on CPU {proxy}, client and origin on CPU {peers}" if proxy else
                     f"{t} thread(s): shared (not enough CPUs to split)")
    return "Placement: split; " + "; ".join(parts) + "."


def ratio_cell(g: list[dict], base_runs: list[dict], digits: int = 2) -> str:
    """The median ratio of the group's cost to the baseline's, then, with several repetitions,
    the range of the ratios taken repetition by repetition (the runs of one repetition ran back to
    back, so the machine's drift cancels out best there)."""
    m, b = med([r["cpu_per_unit"] for r in g]), med([r["cpu_per_unit"] for r in base_runs])
    if not m or not b:
        return "-"
    text = fmt(m / b, digits)
    by_rep = {r.get("rep"): r["cpu_per_unit"] for r in base_runs if r.get("cpu_per_unit")}
    per_rep = [r["cpu_per_unit"] / by_rep[r.get("rep")] for r in g
               if r.get("cpu_per_unit") and by_rep.get(r.get("rep"))]
    if len(per_rep) > 1 and g is not base_runs:
        text += f" ({fmt(min(per_rep), digits)}-{fmt(max(per_rep), digits)})"
    return text


def summarize(runs: list[dict], args: argparse.Namespace, mach: dict) -> tuple[str, list]:
    lines = ["# sluice benchmark results", "",
             f"Machine: {mach['nproc']} CPUs, {mach['cpu']}, kernel {mach['kernel']}; {mach['date']}.  ",
             f"Peers: {mach['haproxy']}; {mach['nginx']}. Client: {mach['wrk']} and sluice-loadgen. "
             f"Origin: nginx, 1 worker, 3-byte answer ({args.bulk_mb} MiB file for bulk).  ",
             f"Each figure is the median of {args.reps} interleaved runs of {args.duration:g} s "
             "(every run on a freshly started proxy, after a 200-connection warm-up"
             + ("; the candidates' order rotates by one each repetition). " if runs and all(r.get("rotated") for r in runs)
                else "; the candidates in the same order every repetition). ")
             + "**CPU/op** is the proxy's own utime+stime (all its threads, nginx master+workers) per forwarded "
             "request or connection, in microseconds; **ratio** = peer's CPU/op divided by sluice's at the same "
             "thread count (above 1: sluice uses less CPU), with in brackets the lowest and highest of the ratios "
             "taken repetition by repetition. Requests per second depend on how 2 shared cores "
             "are split between client, proxy and origin and are given for reference only.  ",
             placement_text(args), ""]
    chart_rows = []
    for scn in args.scenarios:
        rs = [r for r in runs if r["scenario"] == scn and "error" not in r]
        failed = [r for r in runs if r["scenario"] == scn and "error" in r]
        if not rs and not failed:
            continue
        title, unit, _ = SCENARIOS[scn]
        lines += [f"## {scn}: {title}", ""]
        keys = []
        for r in runs:
            if r["scenario"] == scn and (r["label"], r["threads"]) not in keys:
                keys.append((r["label"], r["threads"]))
        groups = {k: [r for r in rs if (r["label"], r["threads"]) == k] for k in keys}
        base, base_runs = {}, {}
        for (label, t), g in groups.items():
            if label == "sluice" or (scn == "listener-modes" and not base):
                base[t] = med([r["cpu_per_unit"] for r in g])
                base_runs[t] = g
        if scn in MEMORY_SCENARIOS:
            lines += ["| proxy | mode | threads | idle connections held | RSS before | RSS after | bytes per connection | ratio to sluice | errors |",
                      "|---|---|---|---|---|---|---|---|---|"]
            for (label, t), g in groups.items():
                m = med([r["cpu_per_unit"] for r in g])
                lines.append(f"| {label} | {g[0]['mode'] if g else '-'} | {t} | {fmt(med([r['ops'] for r in g]), 0)} | "
                             f"{fmt(med([r['rss0'] for r in g]) / 2**20 if g else None)} MiB | "
                             f"{fmt(med([r['rss1'] for r in g]) / 2**20 if g else None)} MiB | {fmt(m, 0)} | "
                             f"{ratio_cell(g, base_runs.get(t, []))} | {sum(r['errors'] for r in g)} |")
            if scn == "memory":
                lines += ["", f"{args.mem_conns} connections, not 10,000: the client, the proxy (2 descriptors per "
                          "connection) and the idle sink backend all run on this machine, each under the 20,000 "
                          "open-file hard limit. Each connection sends 14 bytes once, then stays idle.", ""]
            else:
                lines += ["", f"{args.mem_conns} connections, each sends one HTTP/1.1 keep-alive request "
                          "(`GET /`, 31 bytes), which the proxy forwards to the nginx origin and answers, then stays "
                          "open and idle (the client never reads). RSS after: "
                          f"{MEM_SETTLE_S:g} s after the last answer reached its client, the same for every proxy "
                          "(errors: connections not answered within 30 s).", ""]
        elif scn == "bulk":
            lines += ["| proxy | mode | threads | Gbit/s | CPU s per GB | user | sys | ratio to sluice | p50 | p99 | errors |",
                      "|---|---|---|---|---|---|---|---|---|---|---|"]
            for (label, t), g in groups.items():
                m = med([r["cpu_per_unit"] for r in g])
                lines.append(f"| {label} | {g[0]['mode'] if g else '-'} | {t} | {fmt(med([r['gbit_s'] for r in g]), 2)} | "
                             f"{fmt(m, 3)} | {fmt(med([r['user_per_unit'] for r in g]), 3)} | "
                             f"{fmt(med([r['sys_per_unit'] for r in g]), 3)} | {ratio_cell(g, base_runs.get(t, []))} | "
                             f"{fmt(med([r['p50_us'] for r in g]) / 1000 if g and med([r['p50_us'] for r in g]) else None)} ms | "
                             f"{fmt(med([r['p99_us'] for r in g]) / 1000 if g and med([r['p99_us'] for r in g]) else None)} ms | "
                             f"{sum(r['errors'] for r in g)} |")
            lines.append("")
        else:
            first = "variant" if scn == "listener-modes" else "proxy"
            rlabel = "ratio to first variant" if scn == "listener-modes" else "ratio to sluice"
            lines += [f"| {first} | mode | threads | {unit}s/s | CPU us per {unit} | user | sys | user share | {rlabel} | p50 | p90 | p99 | errors |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for (label, t), g in groups.items():
                m = med([r["cpu_per_unit"] for r in g])
                u = med([r["user_per_unit"] for r in g])
                lat = lambda k: fmt(med([r[k] for r in g]), 0) + " us" if g and med([r[k] for r in g]) is not None else "-"  # noqa: E731
                lines.append(f"| {label} | {g[0]['mode'] if g else '-'} | {t} | {fmt(med([r['rate'] for r in g]), 0)} | "
                             f"{fmt(m)} | {fmt(u)} | {fmt(med([r['sys_per_unit'] for r in g]))} | "
                             f"{fmt(100 * u / m if u and m else None, 0)}% | {ratio_cell(g, base_runs.get(t, []))} | {lat('p50_us')} | "
                             f"{lat('p90_us')} | {lat('p99_us')} | {sum(r['errors'] for r in g)} |")
                if scn in ("http-close", "http-keepalive", "tcp-keepalive", "tcp-connrate"):
                    chart_rows.append((f"{scn} {t}t", label, m))
            lines.append("")
        for r in failed:
            lines.append(f"- failed run: {r['label']} {r['threads']}t rep {r.get('rep')}: {r['error']}")
        if failed:
            lines.append("")
    return "\n".join(lines) + "\n", chart_rows


def chart(rows: list, out_png: Path, workdir: Path) -> bool:
    gp = shutil.which("gnuplot")
    if not gp or not rows:
        return False
    cats = []
    for c, _, _ in rows:
        if c not in cats:
            cats.append(c)
    cands = []
    for _, l, _ in rows:
        if l not in cands:
            cands.append(l)
    dat = workdir / "chart.dat"
    with open(dat, "w") as f:
        f.write("scenario " + " ".join(f'"{c}"' for c in cands) + "\n")
        for c in cats:
            vals = []
            for cd in cands:
                v = next((m for cc, l, m in rows if cc == c and l == cd), None)
                vals.append("NaN" if v is None else f"{v:.2f}")
            f.write(f'"{c}" ' + " ".join(vals) + "\n")
    plot = ", ".join(f"'{dat}' using {i + 2}:xtic(1) title columnheader({i + 2})" for i in range(len(cands)))
    script = f"""set terminal pngcairo size 1100,520 noenhanced
set output '{out_png}'
set title 'Proxy CPU time per forwarded request / connection (median, lower is better)'
set ylabel 'CPU microseconds (user+sys)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set key top left
set grid ytics
set yrange [0:*]
set xtics rotate by -20
plot {plot}
"""
    p = subprocess.run([gp], input=script, text=True, capture_output=True)
    if p.returncode != 0:
        script = script.replace("pngcairo", "png")
        p = subprocess.run([gp], input=script, text=True, capture_output=True)
    return p.returncode == 0 and out_png.exists()


# --- main --------------------------------------------------------------------

def cmd_run(args: argparse.Namespace) -> int:
    tools = Tools()
    need = ["nginx", "loadgen"]
    if "haproxy" in args.candidates:
        need.append("haproxy")
    if any(s in args.scenarios for s in ("http-close", "http-keepalive", "tcp-keepalive", "bulk")):
        need.append("wrk")
    if "sluice" in args.candidates or "listener-modes" in args.scenarios:
        need.append("sluice")
    missing = tools.check(need)
    if "nginx" in args.candidates and not tools.stream_module and any(
            SCENARIOS[s][2] == "tcp" for s in args.scenarios if s != "listener-modes"):
        missing.append("nginx stream module (libnginx-mod-stream)")
    if missing:
        print(f"bench: missing: {', '.join(missing)}", file=sys.stderr)
        return 77
    out = Path(args.out) if args.out else BENCH_DIR / "results" / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    mach = machine()
    (out / "machine.txt").write_text("\n".join(f"{k}: {v}" for k, v in mach.items()) + "\n")
    ctx = Ctx(args)
    runs: list[dict] = []
    t0 = time.monotonic()
    try:
        ctx.start_backend()
        if "memory" in args.scenarios:
            ctx.start_sink()
        plan = [(scn, c) for scn in args.scenarios for c in candidates_for(scn, args)]
        log(f"{len(plan)} runs per repetition, {args.reps} repetitions, {args.duration:g} s each; "
            f"ports {ctx.port}/{ctx.backend_port}/{ctx.sink_port}; output {out}")
        with open(out / "runs.jsonl", "w") as jf:
            for rep in range(1, args.reps + 1):
                for scn, cand in rotated_plan(args, rep):
                    try:
                        r = measure(ctx, scn, cand)
                    except Exception as e:  # noqa: BLE001 - report it, keep going
                        r = {"scenario": scn, "candidate": cand.name, "label": cand.label,
                             "threads": cand.threads, "mode": cand.mode_text(), "error": str(e)[:300]}
                    r["rep"] = rep
                    r["rotated"] = True   # the order of this repetition came from rotated_plan()
                    jf.write(json.dumps(r) + "\n")
                    jf.flush()
                    runs.append(r)
                    log(f"rep {rep} {scn:15s} {cand.label:38s} {cand.threads}t: "
                        + (f"ERROR {r['error']}" if "error" in r else
                           f"ops {r['ops']} cpu/unit {fmt(r.get('cpu_per_unit'), 2)} errors {r['errors']}"))
    finally:
        ctx.close()
    md, rows = summarize(runs, args, mach)
    md += f"\nTotal wall time: {time.monotonic() - t0:.0f} s. Command: `{args.cmdline}`.\n"
    if chart(rows, out / "chart.png", out):
        md += "\n![CPU per request](chart.png)\n"
    (out / "results.md").write_text(md)
    print(md)
    log(f"wrote {out}/results.md")
    errors = [r for r in runs if "error" in r]
    return 1 if errors and len(errors) == len(runs) else 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=env_float("BENCH_DURATION", 10))
    p.add_argument("--reps", type=int, default=env_int("BENCH_REPS", 3))
    p.add_argument("--scenarios", default=os.environ.get("BENCH_SCENARIOS", ",".join(DEFAULT_SCENARIOS)))
    p.add_argument("--candidates", default=os.environ.get("BENCH_CANDIDATES", "sluice,haproxy,nginx"))
    p.add_argument("--threads", default=os.environ.get("BENCH_THREADS", "1,2"))
    p.add_argument("--mem-conns", type=int, default=env_int("BENCH_MEM_CONNS", 9000))
    p.add_argument("--memory-all-threads", action="store_true")
    p.add_argument("--bulk-mb", type=int, default=env_int("BENCH_BULK_MB", 16))
    p.add_argument("--close-conns", type=int, default=env_int("BENCH_CLOSE_CONNS", 32))
    p.add_argument("--ka-conns", type=int, default=env_int("BENCH_KA_CONNS", 64))
    p.add_argument("--bulk-conns", type=int, default=env_int("BENCH_BULK_CONNS", 4))
    p.add_argument("--tcp-conns", type=int, default=env_int("BENCH_TCP_CONNS", 32))
    p.add_argument("--wrk-threads", type=int, default=env_int("BENCH_WRK_THREADS", 1))
    p.add_argument("--backend-cpus", default=os.environ.get("BENCH_BACKEND_CPUS", ""))
    p.add_argument("--placement", choices=["shared", "split"], default=os.environ.get("BENCH_PLACEMENT", "shared"),
                   help="shared: every process may run on every CPU (the scheduler places them); split: a "
                        "proxy with N threads gets CPUs 0..N-1 to itself and the origin and the client share "
                        "the others, when there are more CPUs than threads (docs/performance.md, Placement)")
    p.add_argument("--out", default=os.environ.get("BENCH_OUT", ""))
    p.add_argument("--keep", action="store_true", help="keep the temporary run directory (configs, logs)")
    a = p.parse_args(argv)
    a.scenarios = [s.strip() for s in re.split(r"[ ,]+", a.scenarios) if s.strip()]
    for s in a.scenarios:
        if s not in SCENARIOS:
            p.error(f"unknown scenario {s!r}; known: {', '.join(SCENARIOS)}")
    a.candidates = [c.strip() for c in re.split(r"[ ,]+", a.candidates) if c.strip()]
    a.threads = [int(t) for t in re.split(r"[ ,]+", a.threads) if t.strip()]
    env = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("BENCH_")]
    a.cmdline = " ".join(env + ["bench/run.sh"] + argv)
    return a


# --------------------------------------------------------------------------- extra tools

def _single(args_list: list[str], defaults: dict) -> argparse.Namespace:
    """A Namespace good enough for Ctx with the run's defaults."""
    a = parse([])
    for k, v in defaults.items():
        setattr(a, k, v)
    return a


def cmd_instructions(argv: list[str]) -> int:
    """Instructions per forwarded connection, counted by callgrind (deterministic guard). The
    client sends one HTTP/1.0 request per connection: in `--mode tcp` sluice relays it, in
    `--mode http` it parses, forwards and answers it (connection per request)."""
    p = argparse.ArgumentParser(prog="bench/instructions.sh")
    p.add_argument("--mode", choices=["tcp", "http"], default="tcp")
    p.add_argument("--conns", type=int, default=env_int("BENCH_INSTR_CONNS", 2000))
    p.add_argument("--conc", type=int, default=8)
    p.add_argument("--top", type=int, default=25, help="functions to list from callgrind_annotate")
    p.add_argument("--out", default="", help="also write the callgrind file and annotation here")
    p.add_argument("--keep", action="store_true")
    o = p.parse_args(argv)
    a = _single([], {"keep": o.keep})
    tools = Tools()
    missing = tools.check(["sluice", "nginx", "loadgen"])
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        missing.append("valgrind")
    if missing:
        print(f"bench: missing: {', '.join(missing)}", file=sys.stderr)
        return 77
    ctx = Ctx(a)
    cg = ctx.run_dir / "callgrind.out"
    proc = None
    try:
        ctx.start_backend()
        cand = Candidate("sluice", "sluice", o.mode, 1)
        proc = cand.start(ctx, ctx.port, ctx.backend_port,
                          wrapper=["valgrind", "--tool=callgrind", "--instr-atstart=no",
                                   f"--callgrind-out-file={cg}"])
        run_connrate(ctx, ctx.port, count=100, conc=o.conc)  # warm-up, not counted
        subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
        r = run_connrate(ctx, ctx.port, count=o.conns, conc=o.conc)
        subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True, capture_output=True)
        stop(proc, timeout=60)
        text = cg.read_text(errors="replace")
        m = re.search(r"^totals:\s+(\d+)", text, re.M)
        if not m:
            raise SystemExit("bench: no totals in the callgrind output")
        ir = int(m.group(1))
        ann = subprocess.run(["callgrind_annotate", "--inclusive=no", f"--threshold=99", str(cg)],
                             capture_output=True, text=True).stdout
        if o.out:
            out = Path(o.out)
            out.mkdir(parents=True, exist_ok=True)
            shutil.copy(cg, out / "callgrind.out")
            (out / "callgrind-annotate.txt").write_text(ann)
        print(f"connections: {r['ops']} (errors {r['errors']}), concurrency {o.conc}, "
              f"sluice mode {o.mode}, nbthread 1")
        print(f"instructions (sluice user space, all threads): {ir}")
        print(f"instructions/connection: {ir / max(1, r['ops']):.0f}")
        print("\ntop functions (self instructions):")
        body = ann.split("file:function", 1)[-1].strip().splitlines()
        for line in body[:o.top]:
            print("  " + line.strip())
        return 0 if r["errors"] == 0 else 1
    finally:
        stop(proc)
        ctx.close()


def parse_strace_c(text: str) -> dict[str, int]:
    calls: dict[str, int] = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 5 and re.match(r"^[\d.]+$", f[0]) and f[-1] != "total":
            try:
                n = int(f[3])
            except ValueError:
                continue
            calls[f[-1]] = calls.get(f[-1], 0) + n
    return calls


def cmd_syscalls(argv: list[str]) -> int:
    """System calls per forwarded connection or request (strace -f -c), sluice vs the peers."""
    p = argparse.ArgumentParser(prog="bench/syscalls.sh")
    p.add_argument("--conns", type=int, default=env_int("BENCH_STRACE_CONNS", 3000))
    p.add_argument("--conc", type=int, default=8)
    p.add_argument("--candidates", default="sluice,haproxy,nginx")
    p.add_argument("--scenario", choices=["tcp-connrate", "tcp-keepalive", "http-close", "http-keepalive"],
                   default="tcp-connrate")
    p.add_argument("--out", default="")
    o = p.parse_args(argv)
    if not shutil.which("strace"):
        print("bench: missing: strace", file=sys.stderr)
        return 77
    a = _single([], {"keep": False})
    ctx = Ctx(a)
    table: dict[str, dict[str, float]] = {}
    try:
        ctx.start_backend()
        for name in [c for c in o.candidates.split(",") if c]:
            cand = Candidate(name, name, SCENARIOS[o.scenario][2], 1)
            proc = cand.start(ctx, ctx.port, ctx.backend_port)
            try:
                warm_up(ctx, ctx.port)
                pids = proc_tree(proc.pid)
                tids = [t for pid in pids for t in os.listdir(f"/proc/{pid}/task")]
                sfile = ctx.run_dir / f"strace-{name}.txt"
                st = subprocess.Popen(["strace", "-f", "-c", "-o", str(sfile)] + sum((["-p", t] for t in tids), []),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1.0)
                if o.scenario == "tcp-connrate":
                    r = run_connrate(ctx, ctx.port, count=o.conns, conc=o.conc)
                    n = r["ops"]
                else:
                    r = run_wrk(ctx, ctx.port, 3, 16, close=o.scenario == "http-close")
                    n = r["ops"]
                st.send_signal(signal.SIGINT)
                st.wait(timeout=30)
                calls = parse_strace_c(sfile.read_text())
                table[name] = {k: v / max(1, n) for k, v in calls.items()}
                table[name]["_n"] = n
            finally:
                stop(proc)
                wait_port_closed(ctx.port)
    finally:
        ctx.close()
    names = list(table)
    sys_names = sorted({k for t in table.values() for k in t if not k.startswith("_")},
                       key=lambda k: -max(t.get(k, 0) for t in table.values()))
    unit = "connection" if o.scenario == "tcp-connrate" else "request"
    lines = [f"System calls per forwarded {unit} ({o.scenario}, proxies in {SCENARIOS[o.scenario][2]} mode, "
             "`strace -f -c` attached after start-up, "
             f"{o.conns if unit == 'connection' else 'wrk 3 s'} through each proxy, 1 thread):", "",
             "| syscall | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    lines.append("| **total** | " + " | ".join(f"**{sum(v for k, v in table[n].items() if not k.startswith('_')):.2f}**"
                                                for n in names) + " |")
    for sc in sys_names:
        vals = [table[n].get(sc, 0) for n in names]
        if max(vals) < 0.005:
            continue
        lines.append(f"| {sc} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
    md = "\n".join(lines) + "\n"
    print(md)
    if o.out:
        Path(o.out).parent.mkdir(parents=True, exist_ok=True)
        Path(o.out).write_text(md)
    return 0


PROFILE_SCENARIOS = ["tcp-connrate", "http-close", "http-keepalive", "tcp-keepalive", "bulk"]


def cmd_profile(argv: list[str]) -> int:
    """perf record of one proxy (1 thread) under one scenario's load; where its CPU time goes."""
    p = argparse.ArgumentParser(prog="bench/profile.sh")
    p.add_argument("--duration", type=float, default=env_float("BENCH_DURATION", 10))
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--candidate", default="sluice")
    p.add_argument("--scenario", choices=PROFILE_SCENARIOS, default="tcp-connrate")
    p.add_argument("--out", default="")
    o = p.parse_args(argv)
    if not shutil.which("perf"):
        print("bench: missing: perf", file=sys.stderr)
        return 77
    a = _single([], {"keep": False})
    ctx = Ctx(a)
    data = ctx.run_dir / "perf.data"
    try:
        ctx.start_backend()
        cand = Candidate(o.candidate, o.candidate, SCENARIOS[o.scenario][2], 1)
        proc = cand.start(ctx, ctx.port, ctx.backend_port)
        try:
            warm_up(ctx, ctx.port)
            pr = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "2999", "-g", "-o", str(data),
                                   "-p", str(proc.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            r = drive_load(ctx, o.scenario, ctx.port, o.duration)
            pr.send_signal(signal.SIGINT)
            pr.wait(timeout=60)
        finally:
            stop(proc)
        rep = lambda *extra, lim="0.3": subprocess.run(["perf", "report", "-i", str(data), "--no-children",  # noqa: E731
                                                        "--stdio", "-g", "none", "--percent-limit", lim, *extra],
                                            capture_output=True, text=True).stdout
        by_dso = rep("--sort", "dso")
        by_sym = rep("--sort", "dso,sym")
        # Inclusive time under user-space functions (the libc system-call wrappers among them): which
        # system calls the kernel time belongs to, and which of sluice's functions led there.
        children = subprocess.run(["perf", "report", "-i", str(data), "--children", "--stdio", "-g", "none",
                                   "--percent-limit", "1", "--sort", "sym"], capture_output=True, text=True).stdout
        by_call = "\n".join(l for l in children.splitlines() if "[.]" in l and "0x" not in l)
        own = rep("--sort", "sym", lim="0.02", *["--dsos", Path(ctx.tools.sluice if o.candidate == "sluice" else
                                                  ctx.tools.haproxy).name])
        strip = lambda t: "\n".join(l for l in t.splitlines() if l.strip() and not l.startswith("#"))  # noqa: E731
        what = "connections" if o.scenario == "tcp-connrate" else "requests"
        text = (f"# perf profile of {o.candidate} (1 thread), {o.scenario}: {SCENARIOS[o.scenario][0]}; "
                f"{r['ops']} {what} in {r['seconds']:.1f} s\n\n## by binary\n{strip(by_dso)}\n\n"
                f"## inclusive time of user-space functions (children included: a libc wrapper's share is its "
                f"system call and the kernel work under it)\n"
                f"{strip(by_call)}\n\n## top symbols\n"
                + "\n".join(strip(by_sym).splitlines()[:o.top])
                + f"\n\n## {o.candidate}'s own code (share of all samples)\n"
                + "\n".join(strip(own).splitlines()[:o.top]) + "\n")
        print(text)
        if o.out:
            Path(o.out).parent.mkdir(parents=True, exist_ok=True)
            Path(o.out).write_text(text)
        return 0
    finally:
        ctx.close()


def l3_groups() -> str:
    """The sets of CPUs that share a last-level cache, from sysfs ("0-7 8-15"), or "" if unknown."""
    seen: list[str] = []
    for f in sorted(Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cache/index3/shared_cpu_list")):
        try:
            v = f.read_text().strip()
        except OSError:
            continue
        if v not in seen:
            seen.append(v)
    return " | ".join(seen)


def scaling_plan(n: int, threads: int | None, proxy_cpus: int = 0) -> dict:
    """Disjoint CPU sets for sluice, the origin and the client, and the sluice variants to run.
    proxy_cpus: how many CPUs the proxy gets (default half); fewer makes the proxy the bottleneck."""
    cpus = list(range(n))
    if n <= 2:  # degenerate: sluice alone on CPU 0, origin and client share the other
        s_cpus, b_cpus, c_cpus = cpus[:1], cpus[-1:], cpus[-1:]
    elif n == 3:
        s_cpus, b_cpus, c_cpus = [0], [1], [2]
    else:
        s = min(proxy_cpus, n - 2) if proxy_cpus > 0 else n // 2
        b = max(1, (n - s) // 2)
        s_cpus, b_cpus, c_cpus = cpus[:s], cpus[s:s + b], cpus[s + b:]
    t = threads or max(2, len(s_cpus))
    variants = [("by-process", max(1, -(-t // 64)), "by-process")]
    g = t // 2
    seen = set()
    while g >= 2:
        if g not in seen:
            variants.append((f"by-group, {g} groups of {t // g}{'+' if t % g else ''}", g, "by-group"))
            seen.add(g)
        g //= 2
    if t >= 2 and 2 not in seen and t // 2 >= 1:
        variants.append((f"by-group, 2 groups of {t // 2}{'+' if t % 2 else ''}", 2, "by-group"))
    variants.append(("by-thread", 1, "by-thread"))
    return {"cores": n, "sluice_cpus": cpu_list(s_cpus), "backend_cpus": cpu_list(b_cpus),
            "client_cpus": cpu_list(c_cpus),
            "nbthread": t, "backend_workers": len(b_cpus), "client_threads": len(c_cpus),
            "degenerate": n < 4, "variants": variants}


def cmd_scaling(argv: list[str]) -> int:
    """Connection rate across listener shard modes, client/origin/sluice on disjoint CPUs."""
    p = argparse.ArgumentParser(prog="bench/scaling.sh")
    p.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    p.add_argument("--threads", type=int, default=0, help="sluice nbthread (default: its CPU count, at least 2)")
    p.add_argument("--duration", type=float, default=env_float("BENCH_DURATION", 0))
    p.add_argument("--reps", type=int, default=env_int("BENCH_REPS", 3))
    p.add_argument("--budget", type=float, default=480, help="seconds the whole run may take (default 480)")
    p.add_argument("--conc-per-client-thread", type=int, default=64)
    p.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    p.add_argument("--proxy-cpus", type=int, default=0,
                   help="CPUs for the proxy (default half); the rest is split between origin and client")
    p.add_argument("--mode", choices=["tcp", "http"], default="tcp",
                   help="proxy mode; http: each connection carries one HTTP/1.0 request, as http-close does")
    p.add_argument("--shards", default="by-process,by-group,by-thread",
                   help="which sluice shard modes to run (default all)")
    p.add_argument("--peers", default="", help="also run these at the same nbthread and CPUs: haproxy,nginx")
    p.add_argument("--out", default="")
    o = p.parse_args(argv)
    plan = scaling_plan(o.cores, o.threads or None, o.proxy_cpus)
    peers = [x for x in o.peers.split(",") if x]
    if any(x not in ("haproxy", "nginx") for x in peers):
        p.error(f"--peers: expected haproxy and/or nginx, got {o.peers!r}")
    peer_text = {"haproxy": f"HAProxy, nbthread {plan['nbthread']} (one shared socket)",
                 "nginx": f"nginx {'stream' if o.mode == 'tcp' else 'http'}, {plan['nbthread']} workers (one shared socket)"}
    shards = [x for x in o.shards.split(",") if x]
    if any(x not in ("by-process", "by-group", "by-thread") for x in shards):
        p.error(f"--shards: expected by-process, by-group and/or by-thread, got {o.shards!r}")
    plan["variants"] = [v for v in plan["variants"] if v[2] in shards]
    variants = plan["variants"] + [(peer_text[x], 0, x) for x in peers]
    if not variants:
        p.error("nothing to run: --shards and --peers select no variant")
    nv = len(variants)
    overhead = 3.0  # start, warm-up, stop per run
    dur = o.duration or max(1.0, min(20.0, o.budget / (nv * o.reps) - overhead))
    est = nv * o.reps * (dur + overhead) + 5
    conc = o.conc_per_client_thread * plan["client_threads"]
    lines = [f"# sluice scaling run ({o.mode.upper()} mode): {plan['cores']} cores{' (degenerate: fewer than 4 cores, origin and client share a CPU)' if plan['degenerate'] else ''}",
             "", f"- proxy (sluice{', ' + ', '.join(peers) if peers else ''}): CPUs {plan['sluice_cpus']}, nbthread {plan['nbthread']}",
             f"- origin: nginx, {plan['backend_workers']} worker(s), CPUs {plan['backend_cpus']}",
             f"- client: sluice-loadgen connrate, {plan['client_threads']} thread(s), {conc} concurrent connections, CPUs {plan['client_cpus']}",
             f"- {nv} variants x {o.reps} repetitions x {dur:g} s, interleaved; about {est:.0f} s in all", "",
             "| variant | thread-groups | tune.listener.default-shards |", "|---|---|---|"]
    lines += [f"| {v[0]} | {v[1]} | {v[2]} |" for v in plan["variants"]]
    lines += [f"| {v[0]} | - | - |" for v in variants[len(plan["variants"]):]]
    print("\n".join(lines) + "\n", flush=True)
    if o.dry_run:
        return 0
    if o.cores > (os.cpu_count() or 1):
        print(f"bench: --cores {o.cores} but this machine has {os.cpu_count()}", file=sys.stderr)
        return 2
    tools = Tools()
    missing = tools.check(["sluice", "nginx", "loadgen"] + [p for p in peers if p == "haproxy"])
    missing += [] if shutil.which("taskset") else ["taskset"]
    if "nginx" in peers and not tools.stream_module:
        missing.append("nginx stream module (libnginx-mod-stream, or NGINX_STREAM_MODULE)")
    if missing:
        print(f"bench: missing: {', '.join(missing)}", file=sys.stderr)
        return 77
    a = _single([], {"keep": False, "backend_cpus": plan["backend_cpus"], "backend_workers": plan["backend_workers"],
                     "bulk_mb": 1})
    ctx = Ctx(a)
    runs: list[dict] = []
    t0 = time.monotonic()
    try:
        ctx.start_backend()
        for rep in range(1, o.reps + 1):
            for label, groups, shard in variants:
                if groups:
                    extra = f"    thread-groups {groups}\n    tune.listener.default-shards {shard}"
                    cand = Candidate("sluice", "sluice", o.mode, plan["nbthread"], extra, label=label)
                else:  # a peer at the same nbthread / worker count, on the same CPUs
                    cand = Candidate(shard, shard, o.mode, plan["nbthread"], label=label)
                r: dict = {"label": label, "rep": rep}
                proc = None
                try:
                    proc = cand.start(ctx, ctx.port, ctx.backend_port, cpus=plan["sluice_cpus"])
                    run_connrate(ctx, ctx.port, count=500, conc=min(conc, 64), cpus=plan["client_cpus"])
                    u0, s0 = cpu_ticks(proc.pid)
                    res = run_connrate(ctx, ctx.port, duration=dur, conc=conc, threads=plan["client_threads"],
                                       cpus=plan["client_cpus"])
                    u1, s1 = cpu_ticks(proc.pid)
                    cpu = (u1 - u0 + s1 - s0) / CLK_TCK
                    r.update(res, rate=res["ops"] / res["seconds"], cpu_us=cpu * 1e6 / max(1, res["ops"]),
                             busy=cpu / res["seconds"], user_share=(u1 - u0) / max(1, u1 - u0 + s1 - s0))
                except Exception as e:  # noqa: BLE001
                    r["error"] = str(e)[:300]
                finally:
                    stop(proc)
                    wait_port_closed(ctx.port)
                runs.append(r)
                log(f"rep {rep} {label:32s} " + (f"ERROR {r['error']}" if "error" in r else
                                                   f"{r['rate']:.0f} conn/s, {r['cpu_us']:.1f} us/conn, errors {r['errors']}"))
    finally:
        ctx.close()
    base = med([r["rate"] for r in runs if r["label"] == variants[0][0] and "error" not in r])
    lines += ["", f"| variant | connections/s (median) | vs {variants[0][0]} | proxy CPU us/conn | proxy CPUs busy | user share | p99 | errors |",
              "|---|---|---|---|---|---|---|---|"]
    for label, _, _ in variants:
        g = [r for r in runs if r["label"] == label and "error" not in r]
        rate = med([r["rate"] for r in g])
        lines.append(f"| {label} | {fmt(rate, 0)} | {fmt(rate / base if rate and base else None, 2)} | "
                     f"{fmt(med([r['cpu_us'] for r in g]))} | {fmt(med([r['busy'] for r in g]), 2)} | "
                     f"{fmt(100 * med([r['user_share'] for r in g]) if g else None, 0)}% | "
                     f"{fmt(med([r['p99_us'] for r in g]), 0)} us | {sum(r['errors'] for r in g)} |")
    for r in runs:
        if "error" in r:
            lines.append(f"- failed: {r['label']} rep {r['rep']}: {r['error']}")
    mach = machine()
    lines.append(f"\nMachine: {os.cpu_count()} CPUs, {mach['cpu']}, kernel {platform.release()}; "
                 f"L3 shared by CPUs: {l3_groups() or 'unknown'}. Wall time {time.monotonic() - t0:.0f} s.  ")
    lines.append(f"Versions: {mach['sluice']}; {mach['haproxy']}; {mach['nginx']}.  ")
    lines.append(f"Programs: {tools.sluice}, {tools.loadgen}, {tools.haproxy}, {tools.nginx}.")
    md = "\n".join(lines) + "\n"
    print(md)
    if o.out:
        Path(o.out).parent.mkdir(parents=True, exist_ok=True)
        Path(o.out).write_text(md)
    return 0


def cmd_report(argv: list[str]) -> int:
    """Rewrites DIR/results.md (and chart.png) from DIR/runs.jsonl and DIR/machine.txt, with the
    options of the run that made them (its `Command:` line), so that older runs get the current
    report's columns."""
    p = argparse.ArgumentParser(prog="bench/run.sh report")
    p.add_argument("dir")
    o = p.parse_args(argv)
    out = Path(o.dir)
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line.strip()]
    mach = dict(line.split(": ", 1) for line in (out / "machine.txt").read_text().splitlines() if ": " in line)
    old = (out / "results.md").read_text() if (out / "results.md").exists() else ""
    m = re.search(r"Command: `([^`]*)`", old)
    wall = re.search(r"Total wall time: \d+ s\.", old)
    words = m.group(1).split() if m else []
    env = {w.split("=", 1)[0]: w.split("=", 1)[1] for w in words if re.match(r"^BENCH_[A-Z_]+=", w)}
    rest = words[words.index("bench/run.sh") + 1:] if "bench/run.sh" in words else []
    saved = dict(os.environ)
    try:
        for k in [k for k in os.environ if k.startswith("BENCH_")]:
            del os.environ[k]
        os.environ.update(env)
        args = parse(rest)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    seen = [r["scenario"] for r in runs]
    args.scenarios = [s for s in dict.fromkeys(seen)]
    md, rows = summarize(runs, args, mach)
    if m:
        md += (f"\n{wall.group(0) + ' ' if wall else ''}Command: `{m.group(1)}`. "
               f"Report rewritten by `bench/run.sh report {o.dir}`.\n")
    if chart(rows, out / "chart.png", out):
        md += "\n![CPU per request](chart.png)\n"
    (out / "results.md").write_text(md)
    print(md)
    return 0


def main(argv: list[str]) -> int:
    sub = {"scaling": cmd_scaling, "instructions": cmd_instructions, "syscalls": cmd_syscalls, "profile": cmd_profile,
           "report": cmd_report}
    if argv and argv[0] in sub:
        return sub[argv[0]](argv[1:])
    return cmd_run(parse(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
