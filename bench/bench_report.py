#!/usr/bin/env python3
"""Reports: medians, ratios to sluice, the results table and the chart.
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
    tools = Tools()   # the binaries the candidates run (HAPROXY_BIN...), not whatever is on PATH
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(),
            "sluice": ver([tools.sluice, "-v"]), "haproxy": ver([tools.haproxy, "-v"]),
            "nginx": ver([tools.nginx, "-v"]),
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
                if scn in ("http-close", "http-keepalive", "http-rules", "tcp-keepalive", "tcp-connrate"):
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
