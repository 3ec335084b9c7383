#!/usr/bin/env python3
"""What health checks cost: 1,000 servers with `check inter 1s` beside the traffic's backend.

For each of two configurations, interleaved (without checks, with checks, ...):
  - sluice's CPU per second while idle (utime + stime from /proc/<pid>/stat over --idle
    seconds): the checks' own cost;
  - HTTP keep-alive traffic through another backend (wrk --latency, --duration seconds), once
    light (--light connections: latency without queueing) and once saturating (--heavy
    connections): its p99 latency and requests per second, so that the checks' effect on the
    worker that runs them shows.

Loopback only; nginx is the traffic's origin. The checks' target (--target):
  refused  a port nobody listens on: each check is a connect the kernel refuses, work done on
           sluice's side only (the servers are DOWN and checked every inter all the same);
  nginx    the origin itself, which then also answers 1,000 connections a second.
--pin puts sluice (nbthread 1) alone on CPU 0 and wrk and nginx on the others, so that what
the checks take from the traffic is sluice's own time, not the machine's. stdlib only.

  SLUICE_BIN=build/release/src/app/sluice bench/checks.py [--servers 1000] [--reps 3]
      [--idle 10] [--duration 10] [--target refused|nginx] [--pin] [--out bench/results/<dir>]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import cpu_ticks, pick_ports, stop, wait_port  # noqa: E402


def cpu_seconds(pid: int) -> float:
    u, st = cpu_ticks(pid)
    return (u + st) / os.sysconf("SC_CLK_TCK")


def pinned(cmd: list[str], cpus: str | None) -> list[str]:
    return ["taskset", "-c", cpus, *cmd] if cpus else cmd


def start_nginx(work: Path, cpus: str | None) -> tuple[subprocess.Popen, int]:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    port = pick_ports(1)[0]
    conf = work / "nginx.conf"
    conf.write_text(f"""daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx.err;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  server {{ listen 127.0.0.1:{port} backlog=4096; location / {{ return 200 "ok\\n"; }} }}
}}
""")
    p = subprocess.Popen(pinned([nginx, "-c", str(conf), "-p", str(work)], cpus),
                         stderr=subprocess.DEVNULL)
    wait_port(port, proc=p)
    return p, port


def sluice_config(port: int, origin: int, target: int, servers: int, checks: bool) -> str:
    check = " check inter 1s" if checks else ""
    farm = "\n".join(f"    server f{i} 127.0.0.1:{target}{check}" for i in range(servers))
    return f"""global
    nbthread 1
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:{port}
    default_backend web
backend web
    server o 127.0.0.1:{origin}
backend farm
{farm}
"""


def traffic(port: int, conns: int, duration: float, cpus: str | None) -> tuple[float | None, float | None]:
    """wrk's p99 (ms) and requests per second with `conns` keep-alive connections."""
    out = subprocess.run(pinned(["wrk", "-t1", f"-c{conns}", f"-d{int(duration)}s", "--latency",
                                 f"http://127.0.0.1:{port}/"], cpus),
                         capture_output=True, text=True, timeout=duration + 30).stdout
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    return (round(float(p99.group(1)) * scale[p99.group(2)], 3) if p99 else None,
            float(rps.group(1)) if rps else None)


def one_run(sluice: str, work: Path, origin: int, target: int, servers: int, checks: bool,
            a: argparse.Namespace, cpus: tuple[str | None, str | None]) -> dict:
    port = pick_ports(1)[0]
    cfg = work / f"sluice-{'checks' if checks else 'none'}.cfg"
    cfg.write_text(sluice_config(port, origin, target, servers, checks))
    p = subprocess.Popen(pinned([sluice, "-f", str(cfg)], cpus[0]), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        wait_port(port, proc=p)
        time.sleep(2.0)   # the first checks are spread over the first interval
        c0, t0 = cpu_seconds(p.pid), time.monotonic()
        time.sleep(a.idle)
        idle_cpu = (cpu_seconds(p.pid) - c0) / (time.monotonic() - t0)
        light_p99, light_rps = traffic(port, a.light, a.duration, cpus[1])
        heavy_p99, heavy_rps = traffic(port, a.heavy, a.duration, cpus[1])
        return {
            "checks": checks,
            "idle_cpu_per_s": round(idle_cpu, 4),
            "light_p99_ms": light_p99, "light_req_per_s": light_rps,
            "p99_ms": heavy_p99, "req_per_s": heavy_rps,
        }
    finally:
        stop(p)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--idle", type=float, default=10.0)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--light", type=int, default=2, help="connections of the light traffic")
    ap.add_argument("--heavy", type=int, default=20, help="connections of the saturating traffic")
    ap.add_argument("--target", choices=("refused", "nginx"), default="refused")
    ap.add_argument("--pin", action="store_true", help="sluice alone on CPU 0, the rest elsewhere")
    ap.add_argument("--out")
    a = ap.parse_args()
    ncpu = os.cpu_count() or 1
    cpus = ("0", f"1-{ncpu - 1}" if ncpu > 2 else "1") if a.pin and ncpu > 1 else (None, None)
    sluice = os.environ.get("SLUICE_BIN", "build/release/src/app/sluice")
    if not shutil.which("wrk"):
        print("wrk is not installed", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="sluice-checks-bench."))
    # refused: a port held by a socket that is bound but does not listen, so that no other
    # program (sluice's own frontend included) can take it during the run.
    hold = socket.socket()
    hold.bind(("127.0.0.1", 0))
    nginx = None
    runs = []
    try:
        nginx, origin = start_nginx(work, cpus[1])
        target = origin if a.target == "nginx" else hold.getsockname()[1]
        for _ in range(a.reps):
            for checks in (False, True):
                r = one_run(sluice, work, origin, target, a.servers, checks, a, cpus)
                runs.append(r)
                print(json.dumps(r), flush=True)
    finally:
        hold.close()
        stop(nginx)
        shutil.rmtree(work, ignore_errors=True)
    def med(checks: bool, key: str) -> float:
        v = sorted(r[key] for r in runs if r["checks"] == checks and r[key] is not None)
        return v[len(v) // 2] if v else float("nan")
    lines = [f"{a.servers} servers, check inter 1s, target {a.target}, "
             f"{'pinned' if a.pin else 'not pinned'}, {a.reps} interleaved runs (medians):",
             f"| | idle CPU s/s | p99 ms, {a.light} conns | req/s, {a.light} conns | "
             f"p99 ms, {a.heavy} conns | req/s, {a.heavy} conns |",
             "|---|---|---|---|---|---|"]
    for checks in (False, True):
        lines.append(f"| {'with checks' if checks else 'without'} | {med(checks, 'idle_cpu_per_s')} | "
                     f"{med(checks, 'light_p99_ms')} | {med(checks, 'light_req_per_s')} | "
                     f"{med(checks, 'p99_ms')} | {med(checks, 'req_per_s')} |")
    print("\n".join(lines))
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "checks.json").write_text(json.dumps(runs, indent=1) + "\n")
        (out / "notes.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
