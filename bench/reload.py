#!/usr/bin/env python3
"""Reload under load: failed connections and requests across many reloads, side by side.

The issue's goal: zero failed connections across 100 reloads under load. For each candidate, in
turn: start the proxy on a free loopback port with `nbthread 2` (nginx: `worker_processes 2`)
and one HTTP frontend that answers every request itself (`http-request return status 200`;
nginx: `return 200 "ok"`), so only the proxy's own handling of the reload is measured. Two loads
run for the whole run, each in its own client process:

  new-conn    a stream of new connections, one request each (`Connection: close`, read to the
              proxy's close): 4 Python threads (default), or `--new-conn loadgen` for the
              project's sluice-loadgen `connrate` (4 slots; its errors are not split by kind
              and it does not check the status).
  keep-alive  `wrk -t1 -c20` when wrk is on PATH (default), else 20 Python keep-alive clients
              that reconnect after `Connection: close` (`--keepalive python`).

One second into the load, the proxy is reloaded `--reloads` times (default 100), one every
`--interval` seconds (default 1.0) after the previous one; a reload is not sent before the
previous one's new worker serves, or 10 s have passed (then that reload counts as failed).
Counted, separately for each load: failed connects (ECONNREFUSED, ...), resets or EOF without a
response, non-2xx responses and timeouts (wrk: its connect, read, write and timeout socket errors
and its non-2xx count). Measured for each reload, from the signal (or the new process's start):
  ready      until the new worker serves: the master CLI's `show proc` lists a worker that was not
             there before (sluice -W, HAProxy -W), the stats socket's `show info` answers with the
             new process's Pid (sluice -x), or the master has a new worker child (nginx);
  old gone   until every worker that served before the reload has exited;
  old RSS    the largest VmRSS (/proc/<pid>/status) of an old worker while it drained.

Candidates (`--candidate NAME`, repeatable; default: all, those whose binary is missing are
skipped with a note, and one that does not start is reported as "failed to start"):
  sluice-mw       sluice -W -S <tmp>/master.sock -f cfg -p pidfile; reload: SIGUSR2 to the master
  sluice-mw-plan  the same, and every 10th reload first rewrites the configuration with another
                  `nbthread` (1, then 2, then 1, ...)
  sluice-x        no master; `stats socket <tmp>/s.sock level admin expose-fd listeners`; reload:
                  a new `sluice -f cfg -x <tmp>/s.sock -sf <old pid>`
  haproxy-deb     Debian's /usr/sbin/haproxy (2.6) -W -S <tmp>/master.sock, with the stats socket
                  above; reload: SIGUSR2 to the master
  haproxy-3.5     the same with ../shared/peers/haproxy-3.5 (skipped when absent)
  nginx           nginx (master_process on, daemon off, worker_processes 2); reload: SIGHUP

Usage:
  bench/reload.py                                    # all candidates, 100 reloads, 1 s apart (~10 min)
  bench/reload.py --reloads 10 --interval 0.5        # quick mode (~1 min)
  bench/reload.py --candidate sluice-x --candidate haproxy-deb --json /tmp/reload.json
  bench/reload.py --sluice /path/to/sluice --haproxy35 /path/to/haproxy --keep

Prints one summary line per candidate as it finishes, then a table; `--json FILE` writes every
figure, each reload's timings and the first failures (with the reload they followed). Every
process started (proxies, their workers, the clients) is killed at the end, on Ctrl-C too, and
the script checks that none is left. Do not rebuild sluice during a run: a master re-executes
its binary on each reload, and a reload that finds it missing fails. Exit status: 0 when every
candidate that ran had no failure and no failed reload, 1 otherwise, 2 when none ran, 130 when
interrupted. stdlib only (Python 3.11).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import REPO, Tools, log, pick_ports  # noqa: E402
from reload_candidates import (CANDIDATES, Reaper, Reload, StartError, alive, binary_of,  # noqa: E402
                               http_get_status, make_proxy, ms, rss_kib)
from reload_load import Load, client_main  # noqa: E402

READY_TIMEOUT = 10.0    # a reload whose new worker does not serve by then has failed
DRAIN_TIMEOUT = 15.0    # after the last reload, how long old workers may take to exit
WARMUP = 1.0            # load before the first reload
TAIL = 1.0              # load after the last old worker is gone
POLL = 0.005


# --------------------------------------------------------------------------- one candidate

def median(v: list[float]) -> float | None:
    return statistics.median(v) if v else None


def run_candidate(name: str, a: argparse.Namespace, reaper: Reaper) -> dict:
    res: dict = {"candidate": name, "binary": binary_of(name, a), "status": "ok", "reloads_asked": a.reloads}
    tmp = Path(tempfile.mkdtemp(prefix=f"sluice-reload-{name}-", dir="/tmp"))
    os.chmod(tmp, 0o755)   # nginx workers run as nobody
    res["tmp"] = str(tmp)
    port = pick_ports(1)[0]
    proxy = make_proxy(name, a, tmp, port, reaper)
    loads: list[Load] = []
    records: list[Reload] = []
    try:
        try:
            proxy.start()
            st = http_get_status(port)
            if st != 200:
                raise StartError(f"GET / answered {st}, not 200")
        except StartError as e:
            res["status"] = f"failed to start: {e}: {proxy.log_tail()}"
            return res
        res["ready_by"] = proxy.ready_by()
        base = {p: rss_kib(p) for p in proxy.serving()}
        res["worker_rss_kib_at_start"] = max((v for v in base.values() if v), default=None)
        # wrk and loadgen run for a fixed time: make it longer than any run, they are stopped with SIGINT
        max_s = WARMUP + a.reloads * (a.interval + READY_TIMEOUT) + DRAIN_TIMEOUT + TAIL + 60
        loads = [Load("new-conn", a.new_conn, port, reaper, tmp, max_s),
                 Load("keep-alive", a.keepalive, port, reaper, tmp, max_s)]
        t_start = time.monotonic()
        pending: list[Reload] = []   # old workers not all gone yet
        old_alive_max = 0

        def poll_once() -> None:
            nonlocal old_alive_max
            now = time.monotonic()
            n_alive = 0
            for r in list(pending):
                live = 0
                for pid in r.old:
                    v = rss_kib(pid)
                    if v is not None:
                        live += 1
                        r.rss_max_kib = max(r.rss_max_kib, v)
                n_alive += live
                if live == 0:
                    r.gone_s = now - r.t0
                    pending.remove(r)
            old_alive_max = max(old_alive_max, n_alive)
            reaper.reap()

        def wait_until(t: float) -> None:
            while time.monotonic() < t:
                poll_once()
                time.sleep(POLL)

        next_t = t_start + WARMUP
        for i in range(a.reloads):
            wait_until(next_t)   # no catching up after a slow reload: one interval after the previous
            if not proxy.running():
                res["status"] = f"proxy exited after {i} reloads: {proxy.log_tail()}"
                break
            if records:
                records[-1].sample_threads()
            r = proxy.reload(i)
            next_t = r.t0 + a.interval
            records.append(r)
            pending.append(r)
            while True:
                poll_once()
                if proxy.check_ready(r):
                    r.ready_s = time.monotonic() - r.t0
                    break
                if r.failed or time.monotonic() - r.t0 > READY_TIMEOUT or not proxy.running():
                    r.failed = r.failed or f"no new worker serves after {READY_TIMEOUT:.0f} s: {proxy.log_tail(1)}"
                    break
                time.sleep(POLL)
            if r.failed:
                # the old workers go on serving: not draining, and the next reload's old ones
                pending.remove(r)
                proxy.known_old -= r.old
                if not proxy.running():
                    res["status"] = f"proxy exited at reload {i + 1}: {proxy.log_tail()}"
                    break
        end = time.monotonic() + DRAIN_TIMEOUT
        while pending and time.monotonic() < end:
            poll_once()
            time.sleep(POLL)
        if records:
            records[-1].sample_threads()
        res["old_workers_left_after_drain"] = sorted(p for r in pending for p in r.old if alive(p))
        wait_until(time.monotonic() + TAIL)
        res["duration_s"] = round(time.monotonic() - t_start, 1)
        res["new_conn"], res["keep_alive"] = (l.finish() for l in loads)
        loads = []
        res["old_alive_max"] = old_alive_max
    finally:
        for l in loads:   # an exception: stop the loads, their figures are lost
            try:
                l.finish()
            except Exception:  # noqa: BLE001
                pass
        res["reloads"] = [r.as_json() for r in records]
        try:
            proxy.log.close()
        except OSError:
            pass
        res["processes_left"] = reaper.kill_all()   # the master first (SIGTERM), then whatever is left
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    ready = [r.ready_s for r in records if r.ready_s is not None]
    gone = [r.gone_s for r in records if r.gone_s is not None]
    res["reloads_done"] = len(ready)
    res["reloads_failed"] = len(records) - len(ready)
    res["ready_ms"] = {"median": ms(median(ready)), "max": ms(max(ready, default=None))}
    res["old_gone_ms"] = {"median": ms(median(gone)), "max": ms(max(gone, default=None)),
                          "not_gone": len(records) - len(gone)}
    res["old_rss_max_kib"] = max((r.rss_max_kib for r in records), default=0) or None
    for k in ("new_conn", "keep_alive"):
        if k in res:
            res[k]["events"] = [attribute(ev, records) for ev in res[k]["events"]]
    return res


def attribute(ev: list, records: list[Reload]) -> dict:
    """A failure event, with the reload it followed and how long after."""
    t, kind, what = ev
    before = [r for r in records if r.t0 <= t]
    if not before:
        return {"kind": kind, "what": what, "after_reload": None}
    r = before[-1]
    return {"kind": kind, "what": what, "after_reload": r.index + 1, "ms_after": round((t - r.t0) * 1000, 1)}


# --------------------------------------------------------------------------- report

def fmt(v, unit: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.0f}{unit}" if v >= 10 else f"{v:.1f}{unit}"
    return f"{v}{unit}"


def summary_line(r: dict) -> str:
    if "new_conn" not in r:
        return f"{r['candidate']:15s} {r['status']}"
    n, k = r["new_conn"], r["keep_alive"]
    if n["tool"] == "loadgen":
        ntext = f"errors {n['failures']} (loadgen, not split)"
    else:
        ntext = f"connect {n['connect']}, reset/eof {n['reset']}, non-2xx {n['non2xx']}, timeout {n['timeout']}"
    ktext = f"errors {k['failures']} (connect {k['connect']}, reset/eof {k['reset']}, non-2xx {k['non2xx']}, " \
            f"timeout {k['timeout']})"
    status = "" if r["status"] == "ok" else f" [{r['status']}]"
    return (f"{r['candidate']:15s} reloads {r['reloads_done']}/{r['reloads_asked']}"
            f" | new-conn {n['ok']} ok: {ntext} | keep-alive ({k['tool']}) {k['ok']} ok: {ktext}"
            f" | ready ms med {fmt(r['ready_ms']['median'])} max {fmt(r['ready_ms']['max'])}"
            f" | old gone ms med {fmt(r['old_gone_ms']['median'])} max {fmt(r['old_gone_ms']['max'])}"
            f" | old-worker RSS max {fmt(r['old_rss_max_kib'])} KiB{status}")


def table(results: list[dict]) -> str:
    head = ["candidate", "reloads", "new-conn ok", "nc connect", "nc reset/eof", "nc non-2xx", "nc timeout",
            "keep-alive ok", "ka errors", "ready ms med/max", "old gone ms med/max", "old RSS max KiB", "status"]
    rows = [head]
    for r in results:
        if "new_conn" not in r:
            rows.append([r["candidate"]] + ["-"] * (len(head) - 2) + [r["status"].split(":")[0]])
            continue
        n, k = r["new_conn"], r["keep_alive"]
        split = n["tool"] != "loadgen"
        rows.append([r["candidate"], f"{r['reloads_done']}/{r['reloads_asked']}", str(n["ok"]),
                     str(n["connect"]) if split else f"{n['failures']}*", str(n["reset"]) if split else "*",
                     str(n["non2xx"]) if split else "*", str(n["timeout"]) if split else "*",
                     str(k["ok"]), str(k["failures"]),
                     f"{fmt(r['ready_ms']['median'])}/{fmt(r['ready_ms']['max'])}",
                     f"{fmt(r['old_gone_ms']['median'])}/{fmt(r['old_gone_ms']['max'])}",
                     fmt(r["old_rss_max_kib"]), r["status"].split(":")[0]])
    w = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w[i]) if i in (0, len(head) - 1) else c.rjust(w[i]) for i, c in enumerate(row))
             for row in rows]
    lines.insert(1, "  ".join("-" * x for x in w))
    return "\n".join(l.rstrip() for l in lines)


# --------------------------------------------------------------------------- main

def on_signal(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--candidate", action="append", choices=CANDIDATES,
                    help="run this candidate (repeatable; default: all available)")
    ap.add_argument("--reloads", type=int, default=100)
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between reloads")
    ap.add_argument("--sluice", default=os.environ.get("SLUICE_BIN") or str(REPO / "build/release/src/app/sluice"))
    ap.add_argument("--haproxy", default="/usr/sbin/haproxy", help="haproxy-deb's binary")
    ap.add_argument("--haproxy35", default=str(REPO.parent / "shared/peers/haproxy-3.5"),
                    help="haproxy-3.5's binary (skipped when absent)")
    ap.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    ap.add_argument("--new-conn", choices=["python", "loadgen"], default="python",
                    help="new-connection load: 4 Python threads (errors split by kind) or sluice-loadgen")
    ap.add_argument("--keepalive", choices=["wrk", "python"], default="wrk" if shutil.which("wrk") else "python",
                    help="keep-alive load: wrk -t1 -c20 (default when on PATH) or 20 Python clients")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--keep", action="store_true", help="keep each candidate's temporary directory (logs)")
    ap.add_argument("--client", choices=["newconn", "keepalive"], help=argparse.SUPPRESS)
    ap.add_argument("--client-port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--client-threads", type=int, default=4, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.client:
        return client_main(a.client, a.client_port, a.client_threads)
    if a.reloads < 1 or a.interval <= 0:
        ap.error("--reloads must be >= 1 and --interval > 0")
    if a.new_conn == "loadgen" and not Tools().loadgen:
        ap.error("--new-conn loadgen: no sluice-loadgen (build it: cmake -S bench/loadgen -B build/bench-loadgen)")
    if a.keepalive == "wrk" and not shutil.which("wrk"):
        ap.error("--keepalive wrk: wrk is not on PATH")
    explicit = a.candidate is not None
    names = list(dict.fromkeys(a.candidate or CANDIDATES))
    run_names = []
    skipped = {}
    for n in names:
        b = binary_of(n, a)
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            skipped[n] = f"no executable {b}"
            if explicit or n != "haproxy-3.5":   # haproxy-3.5 is skipped silently when it is not there
                log(f"{n}: skipped: {skipped[n]}")
        else:
            run_names.append(n)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    reaper = Reaper()
    results: list[dict] = []
    left: list[int] = []
    interrupted = False
    log(f"{len(run_names)} candidate(s), {a.reloads} reloads {a.interval} s apart each; new-conn load "
        f"{a.new_conn}, keep-alive load {a.keepalive}")
    try:
        for n in run_names:
            log(f"{n}: start ({binary_of(n, a)})")
            results.append({"candidate": n, "status": "interrupted"})
            try:
                r = run_candidate(n, a, reaper)
            except Exception as e:  # noqa: BLE001 - one candidate's trouble does not stop the others
                traceback.print_exc()
                r = {"candidate": n, "status": f"error: {e!r}", "processes_left": reaper.kill_all()}
            results.pop()
            results.append(r)
            print(summary_line(r), flush=True)
            for line in (f"  reload {x['index']}: {x['failed']}" for x in r.get("reloads", []) if x["failed"]):
                print(line, flush=True)
                break
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: stopping everything")
    finally:
        left = reaper.kill_all()
        if left:
            log(f"processes left after cleanup: {left}")
    print()
    print(f"# {a.reloads} reloads, {a.interval} s apart; new-conn: {a.new_conn}, keep-alive: {a.keepalive}; "
          "nc = new-connection load, ka = keep-alive load")
    print(table(results + [{"candidate": n, "status": f"skipped: {why}"} for n, why in skipped.items()
                           if explicit or n != "haproxy-3.5"]))
    if a.json:
        doc = {"args": {k: v for k, v in vars(a).items() if not k.startswith("client")},
               "machine": {"host": platform.node(), "kernel": platform.release(), "cpus": os.cpu_count(),
                           "python": platform.python_version()},
               "results": results, "skipped": skipped, "interrupted": interrupted, "processes_left": left}
        Path(a.json).write_text(json.dumps(doc, indent=1) + "\n")
    if interrupted:
        return 130
    ran = [r for r in results if "new_conn" in r]
    if not ran:
        return 2
    bad = any(r["status"] != "ok" or r["reloads_failed"] or r["new_conn"]["failures"] or r["keep_alive"]["failures"]
              for r in results)
    return 1 if bad or left else 0


if __name__ == "__main__":
    sys.exit(main())
