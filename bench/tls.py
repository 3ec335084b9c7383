#!/usr/bin/env python3
"""TLS termination side by side: CPU per full handshake, per resumed handshake and per HTTPS
keep-alive request, for sluice, HAProxy (Debian's, and 3.5 when ../shared has it) and nginx on
the same certificates (ECDSA P-256 and RSA-2048), one thread/worker each, in interleaved
repetitions (with --threads, also with several threads or workers each: OpenSSL 3.0 takes
locks that threads contend for). The figure is the terminator's CPU time (utime + stime of its process tree) over
what it completed, so a client slower than the server does not change it. Also `openssl speed`
on this machine: the signature and key exchange operations a full handshake needs, which no
terminator can go below.

    python3 bench/tls.py [--reps 3] [--seconds 4] [--threads 1,2] [--certs ecdsa,rsa] [--json out.json]

Loads: `openssl s_time -new` (full handshakes, TLS 1.3, one HTTP request each) and `-reuse`
(resumed by ticket), two client processes each, and `wrk` over HTTPS (keep-alive) when on PATH.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import cpu_ticks, pick_ports, stop, wait_port  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def log(msg: str) -> None:
    print(f"[tls {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def make_cert(d: Path, kind: str) -> Path:
    key, crt = d / f"{kind}.key", d / f"{kind}.crt"
    algo = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"] if kind == "ecdsa" else \
        ["-newkey", "rsa:2048"]
    subprocess.run(["openssl", "req", "-x509", *algo, "-nodes", "-days", "30", "-subj",
                    "/CN=bench.test", "-keyout", str(key), "-out", str(crt)], check=True,
                   capture_output=True)
    pem = d / f"{kind}.pem"
    pem.write_text(crt.read_text() + key.read_text())
    return pem


HAPROXY_LIKE = """global
    nbthread {threads}
    tune.ssl.cachesize 20000
defaults
    mode http
    timeout client 10s
    timeout server 10s
    timeout connect 2s
    timeout http-keep-alive 10s
frontend tls
    bind 127.0.0.1:{port} ssl crt {pem}
    http-request return status 200 content-type text/plain string ok
"""

NGINX = """daemon off;
master_process on;
worker_processes {threads};
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log error;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    ssl_session_cache shared:SSL:10m;
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {crt};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;
        keepalive_requests 1000000;
        location / {{ return 200 "ok"; }}
    }}
}}
"""


class Candidate:
    def __init__(self, name: str, binary: str, tmp: Path):
        self.name, self.binary, self.tmp = name, binary, tmp
        self.proc: subprocess.Popen | None = None

    def start(self, port: int, pem: Path, threads: int) -> None:
        if self.name == "nginx":  # sluice-base runs as sluice does
            crt, key = pem.with_suffix(".crt"), pem.with_suffix(".key")
            cfg = self.tmp / "nginx.conf"
            cfg.write_text(NGINX.format(tmp=self.tmp, port=port, crt=crt, key=key, threads=threads))
            args = [self.binary, "-c", str(cfg), "-p", str(self.tmp)]
        else:
            cfg = self.tmp / f"{self.name}.cfg"
            cfg.write_text(HAPROXY_LIKE.format(port=port, pem=pem, threads=threads))
            args = [self.binary, "-db", "-f", str(cfg)]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        wait_port(port, 10, self.proc)

    def cpu_s(self) -> float:
        u, s = cpu_ticks(self.proc.pid)
        return (u + s) / TICK

    def stop(self) -> None:
        stop(self.proc, signal.SIGTERM if self.name != "nginx" else signal.SIGQUIT)
        self.proc = None


def s_time(port: int, mode: str, seconds: int, clients: int) -> int:
    """Connections completed by `clients` parallel `openssl s_time` runs."""
    procs = [subprocess.Popen(["openssl", "s_time", "-connect", f"127.0.0.1:{port}", mode,
                               "-time", str(seconds), "-www", "/"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
             for _ in range(clients)]
    total = 0
    for p in procs:
        out = p.communicate(timeout=seconds + 30)[0].decode()
        m = re.search(r"(\d+) connections in [\d.]+s", out)
        if m:
            total += int(m.group(1))
    return total


def wrk(port: int, seconds: int) -> int:
    out = subprocess.run(["wrk", "-t1", "-c16", "-d", f"{seconds}s", f"https://127.0.0.1:{port}/"],
                         capture_output=True, timeout=seconds + 30).stdout.decode()
    m = re.search(r"(\d+) requests in", out)
    return int(m.group(1)) if m else 0


def measure(c: Candidate, port: int, pem: Path, seconds: int, threads: int) -> dict:
    c.start(port, pem, threads)
    try:
        res = {}
        for label, mode in (("full", "-new"), ("resumed", "-reuse")):
            before = c.cpu_s()
            n = s_time(port, mode, seconds, 2 * threads)
            cpu = c.cpu_s() - before
            res[label] = {"count": n, "cpu_s": cpu, "us_per": cpu / n * 1e6 if n else None}
        if shutil.which("wrk"):
            before = c.cpu_s()
            n = wrk(port, seconds)
            cpu = c.cpu_s() - before
            res["keepalive"] = {"count": n, "cpu_s": cpu, "us_per": cpu / n * 1e6 if n else None}
        return res
    finally:
        c.stop()


def openssl_speed(seconds: int) -> dict:
    """Operations per second on one core: ECDSA P-256 and RSA-2048 signs, X25519 derives."""
    out = subprocess.run(["openssl", "speed", "-seconds", str(seconds), "ecdsap256", "rsa2048",
                          "ecdhx25519"], capture_output=True, timeout=120).stdout.decode()
    res = {}
    m = re.search(r"^rsa 2048 bits\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)", out, re.M)
    if m:
        res["rsa2048_sign_per_s"] = float(m.group(1))
    m = re.search(r"^\s*256 bits ecdsa \(nistp256\)\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)", out, re.M)
    if m:
        res["ecdsa_p256_sign_per_s"] = float(m.group(1))
    m = re.search(r"^\s*253 bits ecdh \(X25519\)\s+[\d.]+s\s+([\d.]+)", out, re.M)
    if m:
        res["x25519_op_per_s"] = float(m.group(1))
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--sluice", default=os.environ.get("SLUICE_BIN") or str(REPO / "build/release/src/app/sluice"))
    ap.add_argument("--haproxy", default="/usr/sbin/haproxy")
    ap.add_argument("--haproxy35", default=str(REPO.parent / "shared/peers/haproxy-3.5"))
    ap.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    ap.add_argument("--sluice-base", help="a second sluice binary (a baseline), run as sluice-base")
    ap.add_argument("--candidates", help="comma-separated names to run (sluice, sluice-base, "
                                         "haproxy-deb, haproxy-3.5, nginx); default: all there")
    ap.add_argument("--threads", default="1", help="comma-separated thread (nginx: worker) counts")
    ap.add_argument("--certs", default="ecdsa,rsa")
    ap.add_argument("--json")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sluice-tls-bench-"))
    names = [("sluice", a.sluice), ("haproxy-deb", a.haproxy), ("haproxy-3.5", a.haproxy35),
             ("nginx", a.nginx)]
    if a.sluice_base:
        names.insert(1, ("sluice-base", a.sluice_base))
    wanted = set(a.candidates.split(",")) if a.candidates else None
    cands = [Candidate(n, b, tmp) for n, b in names
             if os.access(b, os.X_OK) and (wanted is None or n in wanted)]
    certs = {k: make_cert(tmp, k) for k in a.certs.split(",")}
    thread_counts = [int(t) for t in a.threads.split(",")]
    port = pick_ports(1)[0]
    results: dict = {"speed": openssl_speed(3), "runs": []}
    log(f"openssl speed: {results['speed']}")
    for rep in range(a.reps):
        # The order rotates with each repetition, so that drift hits every candidate alike.
        order = cands[rep % len(cands):] + cands[:rep % len(cands)]
        for threads in thread_counts:
            for kind, pem in certs.items():
                for c in order:
                    r = measure(c, port, pem, a.seconds, threads)
                    results["runs"].append({"rep": rep, "threads": threads, "cert": kind,
                                            "candidate": c.name, **r})
                    log(f"rep {rep} t{threads} {kind:5} {c.name:12} " + "  ".join(
                        f"{k} {v['count']} ({v['us_per']:.1f} us)" for k, v in r.items() if v["us_per"]))
    summary = {}
    for threads in thread_counts:
        for kind in certs:
            for c in cands:
                for load in ("full", "resumed", "keepalive"):
                    vals = [r[load]["us_per"] for r in results["runs"]
                            if r["threads"] == threads and r["cert"] == kind and r["candidate"] == c.name
                            and load in r and r[load]["us_per"]]
                    if vals:
                        summary.setdefault(f"{threads}t {kind}", {}).setdefault(load, {})[c.name] = \
                            statistics.median(vals)
    results["median_us_per"] = summary
    print(f"# CPU us per operation (median of {a.reps}); ratio = peer / sluice")
    for kind, loads in summary.items():
        for load, per in loads.items():
            base = per.get("sluice")
            row = "  ".join(f"{n} {v:.1f}" + (f" ({v / base:.2f})" if base and n != "sluice" else "")
                            for n, v in per.items())
            print(f"{kind:8} {load:9} {row}")
    sp = results["speed"]
    if "ecdsa_p256_sign_per_s" in sp and "x25519_op_per_s" in sp:
        floor = 1e6 / sp["ecdsa_p256_sign_per_s"] + 2e6 / sp["x25519_op_per_s"]
        print(f"crypto floor, full TLS 1.3 handshake with ECDSA P-256: {floor:.1f} us "
              "(one signature, one X25519 key pair and one derive)")
    if "rsa2048_sign_per_s" in sp and "x25519_op_per_s" in sp:
        floor = 1e6 / sp["rsa2048_sign_per_s"] + 2e6 / sp["x25519_op_per_s"]
        print(f"crypto floor, full TLS 1.3 handshake with RSA-2048: {floor:.1f} us")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
