#!/usr/bin/env python3
"""Memory per idle TLS connection: sluice beside HAProxy (Debian's 2.6, and 3.5 when ../shared
has it) and nginx, each terminating TLS 1.3 on 127.0.0.1 with the same self-signed ECDSA P-256
certificate, one thread/worker each, HTTP mode with a 2-byte answer.

    python3 bench/tls_idle_memory.py [--counts 1000,3000] [--reps 3] [--out DIR]

Each run starts the proxy fresh, makes and closes 8 warm-up connections, reads its memory (Rss
and Pss of /proc/<pid>/smaps_rollup, summed over nginx's master and worker), opens connections
until each of --counts is held (cumulative), and reads it again --settle s after the proxy holds
them all: (after - before) / N KiB per connection, user space only (socket buffers are the
kernel's), and the slope between two counts. Variants: `idle` (handshake done, nothing sent),
`request` (one keep-alive `GET /` answered, then idle). Candidates rotate with each repetition.
Reference: what OpenSSL alone keeps per server-side connection (Python's ssl over memory BIOs,
same certificate, in a child process).
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import itertools
import json
import os
import platform
import re
import resource
import selectors
import shlex
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import pick_ports, proc_tree, wait_port  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
WINDOW = 64  # handshakes in flight at once
REQUEST = b"GET / HTTP/1.1\r\nHost: bench.test\r\n\r\n"
LIVE: list[subprocess.Popen] = []  # started and not yet stopped: stopped on any exit


def log(msg: str) -> None:
    print(f"[tls-mem {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def make_cert(d: Path) -> Path:
    key, crt, pem = d / "ecdsa.key", d / "ecdsa.crt", d / "ecdsa.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-days", "30", "-subj", "/CN=bench.test", "-keyout", str(key),
                    "-out", str(crt)], check=True, capture_output=True, timeout=30)
    pem.write_text(crt.read_text() + key.read_text())
    return pem


# maxconn 9000: HAProxy wants 2 descriptors per connection and the hard limit here is 20,000.
HAPROXY_LIKE = """global
    nbthread 1
    maxconn 9000
defaults
    mode http
    timeout client 120s
    timeout server 120s
    timeout connect 5s
    timeout http-request 120s
    timeout http-keep-alive 120s
frontend tls
    bind 127.0.0.1:{port} ssl crt {pem}
    http-request return status 200 content-type text/plain string ok
"""

NGINX = """daemon off;
master_process on;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log error;
events {{ worker_connections 9000; }}
http {{
    access_log off;
    client_header_timeout 120s;
    keepalive_timeout 120s;
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {crt};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;  # 1.22's default has no TLS 1.3
        location / {{ default_type text/plain; return 200 "ok"; }}
    }}
}}
"""


def stop_proc(p: subprocess.Popen, sig: int) -> None:
    """Signal, wait 5 s, then SIGKILL the process group (start_new_session: the proxy's own)."""
    try:
        p.send_signal(sig)
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, signal.SIGKILL)  # nginx's worker too, should the master have died first
    p.wait(timeout=5)
    LIVE.remove(p)


class Candidate:
    def __init__(self, name: str, binary: str, tmp: Path):
        self.name, self.binary, self.tmp, self.proc = name, binary, tmp, None

    def start(self, port: int, pem: Path) -> None:
        if self.name == "nginx":
            cfg = self.tmp / "nginx.conf"
            cfg.write_text(NGINX.format(tmp=self.tmp, port=port, crt=pem.with_suffix(".crt"),
                                        key=pem.with_suffix(".key")))
            args = [self.binary, "-c", str(cfg), "-p", str(self.tmp), "-e", str(self.tmp / "nginx-error.log")]
        else:  # sluice and HAProxy read the same configuration; -db: foreground without traces
            cfg = self.tmp / f"{self.name}.cfg"
            cfg.write_text(HAPROXY_LIKE.format(port=port, pem=pem))
            args = [self.binary, "-db", "-f", str(cfg)]
        with open(self.tmp / f"{self.name}.stderr", "ab") as errlog:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=errlog, stderr=errlog,
                                         start_new_session=True)
        LIVE.append(self.proc)
        try:
            wait_port(port, 10, self.proc)
        except RuntimeError as e:
            self.stop()
            tail = (self.tmp / f"{self.name}.stderr").read_text(errors="replace")[-600:]
            raise RuntimeError(f"{self.name}: {e}\n{tail}") from None

    def memory(self) -> dict:
        """Rss and Pss in bytes and open descriptors, summed over the proxy's processes."""
        out = {"rss": 0, "pss": 0, "fds": 0}
        for p in proc_tree(self.proc.pid):
            try:
                with open(f"/proc/{p}/smaps_rollup") as f:
                    for k, v in re.findall(r"^(Rss|Pss):\s+(\d+) kB", f.read(), re.M):
                        out[k.lower()] += int(v) * 1024
                out["fds"] += len(os.listdir(f"/proc/{p}/fd"))
            except OSError:
                pass
        return out

    def stop(self) -> None:
        if self.proc is not None:
            stop_proc(self.proc, signal.SIGQUIT if self.name == "nginx" else signal.SIGTERM)
            self.proc = None


def answered(buf: bytes) -> bool:
    head, sep, body = buf.partition(b"\r\n\r\n")
    if sep and not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"unexpected answer {head[:60]!r}")
    m = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
    return bool(sep) and (len(body) >= int(m.group(1)) if m else body.endswith(b"0\r\n\r\n"))


def open_conns(port: int, n: int, ctx: ssl.SSLContext, request: bool, timeout: float = 120) -> list:
    """n TLS connections, handshakes done (and one request answered when `request`), WINDOW in
    flight at once on non-blocking sockets."""
    sel, done, started = selectors.DefaultSelector(), [], 0
    deadline = time.monotonic() + timeout
    try:
        while len(done) < n:
            while started < n and started - len(done) < WINDOW:
                s = socket.socket()
                s.setblocking(False)
                sel.register(s, selectors.EVENT_WRITE, ["connect", b""])
                if (err := s.connect_ex(("127.0.0.1", port))) not in (0, errno.EINPROGRESS):
                    raise OSError(err, f"connect: {os.strerror(err)}")
                started += 1
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(done)} of {n} connections ready after {timeout}s")
            for key, _ in sel.select(timeout=1):
                s, st = key.fileobj, key.data
                if st[0] == "connect":
                    if err := s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        raise OSError(err, f"connect: {os.strerror(err)}")
                    sel.unregister(s)
                    s = ctx.wrap_socket(s, do_handshake_on_connect=False)
                    sel.register(s, selectors.EVENT_WRITE, st)
                    st[0] = "handshake"
                try:
                    if st[0] == "handshake":
                        s.do_handshake()
                        st[0] = "ready"
                        if request:
                            s.sendall(REQUEST)  # one small record: not partial on a new socket
                            st[0] = "answer"
                    while st[0] == "answer":
                        if not (data := s.recv(4096)):
                            raise RuntimeError("connection closed before the answer")
                        st[1] += data
                        st[0] = "ready" if answered(st[1]) else "answer"
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError) as e:
                    want_read = isinstance(e, ssl.SSLWantReadError)
                    sel.modify(s, selectors.EVENT_READ if want_read else selectors.EVENT_WRITE, st)
                    continue
                sel.unregister(s)
                done.append(s)
    except BaseException:
        close_all([k.fileobj for k in sel.get_map().values()] + done)
        raise
    finally:
        sel.close()
    return done


def close_all(conns: list) -> None:
    while conns:
        conns.pop().close()


def client_ctx() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    return ctx


def openssl_alone(pem: str, n: int) -> float:
    """Child mode (--openssl-alone): n server-side TLS 1.3 connections of Python's ssl (OpenSSL,
    SSL_MODE_RELEASE_BUFFERS) over memory BIOs, handshakes done, the client sides freed: the Rss
    growth per connection in KiB, about what OpenSSL keeps for an idle connection in any server."""
    sctx, cctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER), client_ctx()
    sctx.load_cert_chain(pem)

    def server_side():
        si, so, ci, co = (ssl.MemoryBIO() for _ in range(4))
        srv, cli = sctx.wrap_bio(si, so, server_side=True), cctx.wrap_bio(ci, co)
        for _ in range(8):
            for obj in (cli, srv):
                try:
                    obj.do_handshake()
                    if obj is srv:
                        so.read()  # the session tickets: the client side is dropped
                        return srv, si, so
                except ssl.SSLWantReadError:
                    pass
            ci.write(so.read())
            si.write(co.read())
        raise RuntimeError("in-memory handshake did not complete")

    def rss() -> int:
        with open("/proc/self/smaps_rollup") as f:
            return int(re.search(r"^Rss:\s+(\d+)", f.read(), re.M).group(1)) * 1024

    warm = [server_side() for _ in range(8)]
    before = rss()
    held = [server_side() for _ in range(n)]
    return (rss() - before) / 1024 / len(held)  # `warm` stays alive until the return: no reuse


def measure(c: Candidate, port: int, pem: Path, ctx: ssl.SSLContext, variant: str,
            counts: list[int], settle: float) -> dict:
    conns: list = []
    c.start(port, pem)
    try:
        close_all(open_conns(port, 8, ctx, True))
        time.sleep(settle)
        before = c.memory()
        res = {"before": before, "points": []}
        for n in counts:
            conns += open_conns(port, n - len(conns), ctx, variant == "request")
            deadline = time.monotonic() + 20  # until the proxy has accepted them all
            while c.memory()["fds"] < before["fds"] + n and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(settle)
            m = c.memory()
            if c.proc.poll() is not None:
                raise RuntimeError(f"{c.name} exited with {c.proc.returncode}")
            if m["fds"] - before["fds"] < n:
                log(f"{c.name}: only {m['fds'] - before['fds']} of {n} connections held by the proxy")
            res["points"].append({"n": n, **m, "held": m["fds"] - before["fds"],
                                  "kib_rss": (m["rss"] - before["rss"]) / 1024 / n,
                                  "kib_pss": (m["pss"] - before["pss"]) / 1024 / n})
        return res
    finally:
        close_all(conns)
        c.stop()


def summarize(runs: list[dict], names: list[str], variants: list[str], counts: list[int]) -> dict:
    """Per variant, count and candidate: median, min and max KiB/connection (Rss) over the
    repetitions, and the median slope from the previous count."""
    out: dict = {}
    for v, (i, n), name in itertools.product(variants, enumerate(counts), names):
        pts = [r["points"] for r in runs if r["candidate"] == name and r["variant"] == v]
        if pts:
            vals = [p[i]["kib_rss"] for p in pts]
            row = {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
                   "pss": statistics.median(p[i]["kib_pss"] for p in pts)}
            if i:
                row["slope"] = statistics.median((p[i]["rss"] - p[i - 1]["rss"]) / 1024 / (n - counts[i - 1])
                                                 for p in pts)
            out.setdefault(v, {}).setdefault(str(n), {})[name] = row
    return out


LABEL = {"sluice": "sluice", "haproxy-deb": "HAProxy 2.6", "haproxy-3.5": "HAProxy 3.5", "nginx": "nginx"}


def markdown(summary: dict, names: list[str], counts: list[int]) -> str:
    cols = [m for m in names if any(m in per for by_n in summary.values() for per in by_n.values())]
    lines = ["| variant, connections held: KiB per connection | " + " | ".join(LABEL[m] for m in cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    for v, by_n in summary.items():
        for i, n in enumerate(counts):
            per = by_n[str(n)]
            for key in ("median", "slope")[:1 + bool(i)]:
                base = per.get("sluice", {}).get(key)
                cells = [f"{per[m][key]:.2f}"
                         + (f" ({per[m]['min']:.2f}-{per[m]['max']:.2f})" if key == "median" else "")
                         + (f", **{per[m][key] / base:.2f}x**" if base and m != "sluice" else "")
                         if m in per else "-" for m in cols]
                title = f"{n:,} held" if key == "median" else f"slope {counts[i - 1]:,} -> {n:,}"
                lines.append(f"| `{v}`, {title} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default="1000,3000", help="connections held, cumulative (max ~4000)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--variants", default="idle,request")
    ap.add_argument("--settle", type=float, default=1.0, help="seconds from the last handshake to a reading")
    ap.add_argument("--sluice", default=os.environ.get("SLUICE_BIN") or str(REPO / "build/release/src/app/sluice"))
    ap.add_argument("--haproxy", default="/usr/sbin/haproxy")
    ap.add_argument("--haproxy35", default=str(REPO.parent / "shared/peers/haproxy-3.5"))
    ap.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    ap.add_argument("--candidates", help="comma-separated: sluice, haproxy-deb, haproxy-3.5, nginx "
                                         "(default: all there)")
    ap.add_argument("--out", help="writes results.md and results.json there")
    ap.add_argument("--note", default=f"{os.cpu_count()} vCPU; memory figures do not drift with CPU speed")
    ap.add_argument("--openssl-alone", metavar="PEM", help=argparse.SUPPRESS)  # the child mode
    a = ap.parse_args()
    counts = sorted(int(x) for x in a.counts.split(","))
    if a.openssl_alone:
        print(json.dumps([openssl_alone(a.openssl_alone, n) for n in counts]))
        return 0
    variants = a.variants.split(",")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and counts[-1] + 200 > hard:
        raise SystemExit(f"--counts up to {counts[-1]} needs more than the open-file limit {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the proxies inherit it too
    for sig in (signal.SIGINT, signal.SIGTERM):  # also when started with SIGINT ignored (`cmd &`)
        signal.signal(sig, signal.default_int_handler)  # raises KeyboardInterrupt

    tmp = Path(tempfile.mkdtemp(prefix="sluice-tls-mem-"))
    try:
        sluice = tmp / "sluice"  # a private copy: a rebuild of the tree during the run does not change it
        if os.access(a.sluice, os.X_OK):
            shutil.copy2(a.sluice, sluice)
        names = [("sluice", str(sluice)), ("haproxy-deb", a.haproxy), ("haproxy-3.5", a.haproxy35),
                 ("nginx", a.nginx)]
        wanted = set(a.candidates.split(",")) if a.candidates else None
        cands = [Candidate(n, b, tmp) for n, b in names
                 if os.access(b, os.X_OK) and (wanted is None or n in wanted)]
        log("candidates: " + ", ".join(c.name for c in cands))
        versions = {}
        for c, cmd in [(c.name, [c.binary, "-v"]) for c in cands] + [("openssl", ["openssl", "version"])]:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            versions[c] = ((p.stdout or p.stderr).strip().splitlines() or ["?"])[0]
        if "sluice" in versions:
            tree = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                                  capture_output=True, text=True, timeout=10).stdout.strip()
            versions["sluice"] += f" (repository at the start: {tree or '?'})"
        pem, port, ctx = make_cert(tmp), pick_ports(1)[0], client_ctx()
        runs, alone, t0 = [], [], time.monotonic()
        for rep in range(a.reps):
            order = cands[rep % len(cands):] + cands[:rep % len(cands)]
            for v in variants:
                for c in order:
                    r = measure(c, port, pem, ctx, v, counts, a.settle)
                    runs.append({"rep": rep, "variant": v, "candidate": c.name, **r})
                    log(f"rep {rep} {v:7} {c.name:12} before {r['before']['rss'] / 2**20:.1f} MiB  "
                        + "  ".join(f"{p['n']}: {p['kib_rss']:.2f} KiB/conn (pss {p['kib_pss']:.2f})"
                                    for p in r["points"]))
            alone.append(json.loads(subprocess.run(
                [sys.executable, __file__, "--openssl-alone", str(pem), "--counts", str(counts[-1])],
                capture_output=True, check=True, timeout=300).stdout)[0])
            log(f"rep {rep} OpenSSL alone, {counts[-1]} server-side connections: {alone[-1]:.2f} KiB/conn")
        wall = time.monotonic() - t0
    finally:
        for p in list(LIVE):
            stop_proc(p, signal.SIGTERM)
        shutil.rmtree(tmp, ignore_errors=True)

    summary = summarize(runs, [c.name for c in cands], variants, counts)
    table = markdown(summary, [c.name for c in cands], counts)
    alone_line = (f"OpenSSL alone (Python's ssl, server side over memory BIOs, {counts[-1]:,} held, "
                  f"same certificate): {statistics.median(alone):.2f} KiB per connection "
                  f"({min(alone):.2f}-{max(alone):.2f}), Python's objects and BIO buffers included.")
    print(f"# User-space memory (RSS growth) per TLS connection held, KiB, median of {a.reps}; "
          f"x = peer / sluice\n{table}\n{alone_line}")
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        cmd = "python3 " + shlex.join([os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:])
        (out / "results.json").write_text(json.dumps(
            {"command": cmd, "note": a.note, "versions": versions, "counts": counts,
             "kernel": platform.release(), "summary": summary, "openssl_alone_kib": alone,
             "runs": runs}, indent=1))
        doc = [d.strip() for d in __doc__.split("\n\n")]
        (out / "results.md").write_text(f"""# Memory per idle TLS connection, {time.strftime('%Y-%m-%d')}

Command: `{cmd}` ({wall:.0f} s). Machine: {a.note}; kernel {platform.release()}.
Versions: {'; '.join(f'{k}: {v}' for k, v in versions.items())}.

{doc[0][:-1]} (`nbthread 1`, nginx `worker_processes 1`; the answer:
`http-request return` / `return 200`; the client: Python's ssl, {WINDOW} handshakes at a time).

{doc[2]}

Medians of {a.reps}, with min-max; bold: peer / sluice (above 1: the peer uses more).

{table}

{alone_line}

Raw runs (Rss, Pss, descriptors before and at each count): `results.json`.
""")
        log(f"wrote {out}/results.md and results.json")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        for p in list(LIVE):
            stop_proc(p, signal.SIGTERM)
        sys.exit(130)
