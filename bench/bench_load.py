#!/usr/bin/env python3
"""Load generation and measurement: wrk and loadgen runs, the scenarios, CPU placement, and
the CPU and memory measurements of one candidate.
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
from bench_common import *  # noqa: F401,F403

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
    # sluice and HAProxy on the same rules (configs/rules-http.inc); nginx has no such language.
    "http-rules": ("HTTP keep-alive requests through ten ACLs, variables, header rewrites and a log-format (wrk)",
                   "request", "http-rules"),
    "tcp-keepalive": ("TCP mode, requests over long-lived connections (wrk keep-alive through every proxy in TCP mode)", "request", "tcp"),
    "tcp-connrate": ("TCP mode connection rate (sluice-loadgen: connect, send, read answer, close)", "connection", "tcp"),
    "bulk": ("Bulk transfer of large bodies (wrk, keep-alive, TCP mode for every proxy)", "GB", "tcp"),
    "memory": ("RSS growth per idle established connection (sluice-loadgen hold, TCP mode)", "connection", "tcp"),
    "memory-http": ("RSS growth per idle keep-alive connection after one request (sluice-loadgen hold, HTTP mode)",
                    "connection", "http"),
    "listener-modes": ("sluice listener modes: TCP connection rate, nbthread 2", "connection", "tcp"),
}
DEFAULT_SCENARIOS = ["http-close", "http-keepalive", "http-rules", "tcp-keepalive", "tcp-connrate", "bulk", "memory", "memory-http",
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
            if mode == "http-rules" and name == "nginx":
                continue
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
    if scn in ("http-keepalive", "http-rules", "tcp-keepalive"):
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
    # The previous run's connections may still be closing at the sink: counted in o0, their
    # closes would later hide as many of this run's opens. Let them go first.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and ctx.sink_counts()[1] > 0:
        time.sleep(0.05)
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


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets process `pid` holds (empty when it is gone)."""
    out = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                out.add(target[8:-1])
    except OSError:
        pass
    return out


def answered_clients(port: int, pid: int | None = None) -> tuple[int, int]:
    """(established, answered) client-side sockets connected to 127.0.0.1:port (those of process
    `pid` only, when given: other programs on the machine may talk to a port of that number
    too): answered ones have unread bytes in their receive queue (the hold client never
    reads)."""
    rem = f"0100007F:{port:04X}"
    mine = socket_inodes(pid) if pid is not None else None
    est = ans = 0
    try:
        with open("/proc/net/tcp") as f:
            next(f, None)
            for line in f:
                fl = line.split()
                if len(fl) < 10 or fl[2] != rem or fl[3] != "01":
                    continue
                if mine is not None and fl[9] not in mine:
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
            answered = answered_clients(ctx.port, hold.pid)[1]
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
