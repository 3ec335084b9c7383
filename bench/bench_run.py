#!/usr/bin/env python3
"""`bench/run.sh`: the interleaved run, its command line, and `bench/run.sh report`.
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

def cmd_run(args: argparse.Namespace) -> int:
    tools = Tools()
    need = ["nginx", "loadgen"]
    if "haproxy" in args.candidates:
        need.append("haproxy")
    if any(s in args.scenarios for s in ("http-close", "http-keepalive", "http-rules", "tcp-keepalive", "bulk")):
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
    p = argparse.ArgumentParser(description=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
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
