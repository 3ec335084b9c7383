#!/usr/bin/env python3
"""`bench/scaling.sh`: the scaling runs over cores, thread groups and processes.
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
