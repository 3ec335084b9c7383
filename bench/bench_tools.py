#!/usr/bin/env python3
"""`bench/instructions.sh`, `bench/syscalls.sh` and `bench/profile.sh`: instruction counts,
system calls and profiles of one candidate.
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
from bench_load import *  # noqa: F401,F403
from bench_report import *  # noqa: F401,F403
from bench_run import *  # noqa: F401,F403
from bench_run import _single

def cmd_instructions(argv: list[str]) -> int:
    """Instructions per forwarded connection, counted by callgrind (deterministic guard). The
    client sends one HTTP/1.0 request per connection: in `--mode tcp` sluice relays it, in
    `--mode http` it parses, forwards and answers it (connection per request)."""
    p = argparse.ArgumentParser(prog="bench/instructions.sh")
    p.add_argument("--mode", choices=["tcp", "http", "http-rules"], default="tcp")
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
