#!/usr/bin/env python3
"""The candidates of bench/reload.py: how each proxy (sluice -W, sluice -x, HAProxy -W, nginx) is
configured, started and reloaded and how its workers are found, with the /proc and CLI-socket
readings that needs and the bookkeeping of every process started (Reaper).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bench_common import proc_tree

CANDIDATES = ["sluice-mw", "sluice-mw-plan", "sluice-x", "haproxy-deb", "haproxy-3.5", "nginx"]

PROXY_CFG = """# bench/reload.py: {name}
global
    nbthread {nbthread}
{global_extra}
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
    timeout http-keep-alive 10s

frontend fe
    bind 127.0.0.1:{port}{bind_extra}
    http-request return status 200 content-type text/plain string "ok"
"""

NGINX_CFG = """# bench/reload.py: nginx
daemon off;
master_process on;
worker_processes 2;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log notice;
events {{
    worker_connections 4096;
}}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 10s;
    client_body_temp_path {tmp}/ngx-body;
    proxy_temp_path {tmp}/ngx-proxy;
    fastcgi_temp_path {tmp}/ngx-fastcgi;
    uwsgi_temp_path {tmp}/ngx-uwsgi;
    scgi_temp_path {tmp}/ngx-scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            default_type text/plain;
            return 200 "ok";
        }}
    }}
}}
"""


class StartError(RuntimeError):
    pass


# --------------------------------------------------------------------------- /proc

def stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name: [state, ppid, pgrp, ...]; None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
    except OSError:
        return None
    return st[st.rfind(")") + 2:].split()


def starttime(pid: int) -> int | None:
    """Start time of pid in clock ticks since boot; (pid, start time) names one process."""
    f = stat_fields(pid)
    return int(f[19]) if f else None


def pgid_of(pid: int) -> int | None:
    f = stat_fields(pid)
    return int(f[2]) if f else None


def ppid_of(pid: int) -> int | None:
    f = stat_fields(pid)
    return int(f[1]) if f else None


def status_fields(pid: int) -> dict[str, str] | None:
    """/proc/<pid>/status as a dict; None when the process is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None
    d = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        d[k] = v.strip()
    if d.get("State", "").startswith(("Z", "X")):
        return None
    return d


def alive(pid: int) -> bool:
    return status_fields(pid) is not None


def rss_kib(pid: int) -> int | None:
    d = status_fields(pid)
    if d is None or "VmRSS" not in d:
        return None
    return int(d["VmRSS"].split()[0])


def children(pid: int) -> set[int]:
    """Live (non-zombie) direct children of pid."""
    out: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    try:
        for t in tasks:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out.update(int(x) for x in f.read().split())
    except OSError:   # no CONFIG_PROC_CHILDREN: walk /proc
        out = {p for p in proc_tree(pid) if p != pid and ppid_of(p) == pid}
    return {p for p in out if alive(p)}


def unix_query(path: Path | str, cmd: str, timeout: float = 1.0) -> str | None:
    """One command on a CLI socket (stats or master); None when it does not answer."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(cmd.encode() + b"\n")
            s.shutdown(socket.SHUT_WR)
            buf = b""
            while True:
                d = s.recv(65536)
                if not d:
                    break
                buf += d
        return buf.decode(errors="replace")
    except OSError:
        return None


def parse_show_proc(text: str) -> dict[str, list[int]]:
    """HAProxy's `show proc`: {"master": [pid], "workers": [...], "old workers": [...]}."""
    out: dict[str, list[int]] = {"master": [], "workers": [], "old workers": [], "programs": []}
    section = "master"
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            name = s.lstrip("#").strip().lower()
            if name in out:
                section = name
            continue
        f = s.split()
        if f[0].isdigit():
            if len(f) > 1 and f[1] == "master":
                out["master"].append(int(f[0]))
            else:
                out[section].append(int(f[0]))
    return out


# --------------------------------------------------------------------------- processes

class Reaper:
    """Every process this script starts: each Popen gets its own process group, and every pid seen
    under a proxy is remembered with its start time; kill_all() kills them all and checks."""

    def __init__(self) -> None:
        self.popens: list[subprocess.Popen] = []
        self.pgids: set[int] = set()
        self.seen: dict[int, int] = {}

    def spawn(self, cmd: list[str], **kw) -> subprocess.Popen:
        p = subprocess.Popen(cmd, process_group=0, **kw)
        self.popens.append(p)
        self.pgids.add(p.pid)
        self.note(p.pid)
        return p

    def note(self, pid: int) -> None:
        st = starttime(pid)
        if st is not None and pid not in self.seen:
            self.seen[pid] = st

    def note_tree(self, pid: int) -> None:
        for p in [pid, *children(pid)]:
            self.note(p)
            for c in children(p):
                self.note(c)

    def reap(self) -> None:
        for p in self.popens:
            p.poll()

    def ours(self) -> list[int]:
        """Processes still there that this script started (zombies of its own children reaped)."""
        self.reap()
        left = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            pid = int(d)
            if pid == os.getpid():
                continue
            if (pid in self.seen and starttime(pid) == self.seen[pid]) or pgid_of(pid) in self.pgids:
                if alive(pid):
                    left.append(pid)
        return left

    def kill_all(self, grace: float = 3.0) -> list[int]:
        for p in self.popens:
            if p.poll() is None:
                try:
                    p.terminate()
                except OSError:
                    pass
        end = time.monotonic() + grace
        while time.monotonic() < end and self.ours():
            time.sleep(0.05)
        for _ in range(3):
            left = self.ours()
            if not left:
                break
            for g in {pgid_of(pid) for pid in left} & self.pgids:   # only groups with one of ours in them
                try:
                    os.killpg(g, signal.SIGKILL)
                except OSError:
                    pass
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.2)
        for p in self.popens:
            try:
                p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        return self.ours()


def wait_listening(port: int, alive_check, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not alive_check():
            raise StartError("exited before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)
    raise StartError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s")


def http_get_status(port: int) -> int | None:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
            buf = b""
            while b"\r\n" not in buf:
                d = s.recv(4096)
                if not d:
                    break
                buf += d
        m = re.match(rb"HTTP/1\.\d (\d{3})", buf)
        return int(m.group(1)) if m else None
    except OSError:
        return None


# --------------------------------------------------------------------------- candidates

@dataclass
class Reload:
    index: int
    t0: float
    old: set[int]
    new: int | None = None
    ready_s: float | None = None
    gone_s: float | None = None
    rss_max_kib: int = 0
    failed: str = ""
    note: str = ""
    new_threads: int | None = None   # OS threads of the new worker, read before the next reload

    def sample_threads(self) -> None:
        d = status_fields(self.new) if self.new and self.ready_s is not None else None
        self.new_threads = int(d["Threads"]) if d and "Threads" in d else None

    def as_json(self) -> dict:
        return {"index": self.index + 1, "ready_ms": ms(self.ready_s), "old_gone_ms": ms(self.gone_s),
                "old_pids": sorted(self.old), "new_pid": self.new, "old_rss_max_kib": self.rss_max_kib,
                "new_threads": self.new_threads, "failed": self.failed or None, "note": self.note or None}


def ms(s: float | None) -> float | None:
    return None if s is None else round(s * 1000, 1)


class Proxy:
    """One candidate's proxy: start, reload, tell when the new worker serves, stop."""

    def __init__(self, name: str, binary: str, tmp: Path, port: int, reaper: Reaper) -> None:
        self.name, self.binary, self.tmp, self.port, self.reaper = name, binary, tmp, port, reaper
        self.cfg = tmp / "proxy.cfg"
        self.logf = tmp / "proxy.log"
        self.log = open(self.logf, "ab")
        self.known_old: set[int] = set()

    def spawn(self, cmd: list[str]) -> subprocess.Popen:
        return self.reaper.spawn(cmd, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                 cwd=self.tmp)

    def log_tail(self, n: int = 3) -> str:
        lines = [l for l in self.logf.read_text(errors="replace").splitlines() if l.strip()]
        return " | ".join(l.strip()[:200] for l in lines[-n:])

    def write_cfg(self, text: str) -> None:
        tmp = self.cfg.with_suffix(".new")
        tmp.write_text(text)
        os.replace(tmp, self.cfg)

    # overridden
    def ready_by(self) -> str: ...
    def start(self) -> None: ...
    def running(self) -> bool: ...
    def serving(self) -> set[int]: ...
    def reload(self, i: int) -> Reload: ...
    def check_ready(self, r: Reload) -> bool: ...


class MasterWorker(Proxy):
    """sluice -W / HAProxy -W: a master that forks the workers; SIGUSR2 reloads."""

    def __init__(self, *a, stats: bool, plan: bool = False, **kw) -> None:
        super().__init__(*a, **kw)
        self.stats, self.plan = stats, plan
        self.msock = self.tmp / "master.sock"
        self.pidfile = self.tmp / "proxy.pid"
        self.nbthread = 2
        self.plan_changes = 0
        self.master = 0
        self.cli = False   # the master CLI answers `show proc`

    def render(self) -> str:
        extra = f"    stats socket {self.tmp}/s.sock level admin expose-fd listeners\n" if self.stats else ""
        # The plan-change variant gives each thread its own shard: nbthread 1 <-> 2 then adds
        # and removes a listening socket of the address, not only threads.
        bind_extra = " shards by-thread" if self.plan else ""
        return PROXY_CFG.format(name=self.name, nbthread=self.nbthread, global_extra=extra, port=self.port,
                                bind_extra=bind_extra)

    def start(self) -> None:
        self.write_cfg(self.render())
        p = self.spawn([self.binary, "-W", "-S", str(self.msock), "-f", str(self.cfg), "-p", str(self.pidfile)])
        self.proc = p
        self.master = p.pid
        try:
            wait_listening(self.port, self.running)
        except StartError:
            # a master that daemonized anyway: follow the pid file
            if p.poll() == 0 and self.pidfile.exists():
                try:
                    self.master = int(self.pidfile.read_text().split()[0])
                except (ValueError, IndexError):
                    pass
            if self.master == p.pid or not alive(self.master):
                raise
            self.reaper.note(self.master)
            wait_listening(self.port, self.running)
        end, cli_wait = time.monotonic() + 10, 0.0
        while time.monotonic() < end:
            text = unix_query(self.msock, "show proc")
            if text and parse_show_proc(text)["workers"]:
                self.cli = True
                break
            if children(self.master):
                # a master whose CLI has no `show proc` (yet): after 2 s, new workers are its new children
                cli_wait = cli_wait or time.monotonic() + 2
                if time.monotonic() > cli_wait:
                    break
            time.sleep(0.05)
        if not self.serving():
            raise StartError("the master has no worker")
        self.reaper.note_tree(self.master)

    def ready_by(self) -> str:
        if self.cli:
            return "master CLI `show proc` lists a new worker"
        return "a new child of the master (no `show proc`)"

    def running(self) -> bool:
        if self.master == self.proc.pid:
            return self.proc.poll() is None
        return alive(self.master)

    def workers(self) -> set[int]:
        if self.cli:
            text = unix_query(self.msock, "show proc")
            if text:
                return set(parse_show_proc(text)["workers"])
        return children(self.master)

    def serving(self) -> set[int]:
        return children(self.master) - self.known_old

    def reload(self, i: int) -> Reload:
        note = ""
        if self.plan and (i + 1) % 10 == 0:
            self.nbthread = 1 if self.plan_changes % 2 == 0 else 2
            self.plan_changes += 1
            self.write_cfg(self.render())
            note = f"nbthread {self.nbthread}"
        old = self.serving()
        self.known_old |= old
        t0 = time.monotonic()
        os.kill(self.master, signal.SIGUSR2)
        return Reload(i, t0, old, note=note)

    def check_ready(self, r: Reload) -> bool:
        new = {p for p in self.workers() if p not in self.known_old and alive(p)}
        if new:
            r.new = min(new)
            for p in new:
                self.reaper.note(p)
            return True
        return False


class Takeover(Proxy):
    """sluice without a master: the new process takes the listeners over the stats socket (-x)."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.sock = self.tmp / "s.sock"

    def start(self) -> None:
        self.write_cfg(PROXY_CFG.format(
            name=self.name, nbthread=2, port=self.port, bind_extra="",
            global_extra=f"    stats socket {self.sock} level admin expose-fd listeners\n"))
        self.cur = self.spawn([self.binary, "-f", str(self.cfg)])
        wait_listening(self.port, self.running)
        end = time.monotonic() + 10
        while self.pid_on_socket() != self.cur.pid:
            if time.monotonic() > end or not self.running():
                raise StartError("the stats socket does not answer `show info`")
            time.sleep(0.02)

    def pid_on_socket(self) -> int | None:
        text = unix_query(self.sock, "show info", timeout=0.5)
        m = re.search(r"^Pid: (\d+)", text or "", re.M)
        return int(m.group(1)) if m else None

    def ready_by(self) -> str:
        return "stats socket `show info` answers with the new Pid"

    def running(self) -> bool:
        # The old process leaves once the new one (-sf) serves, which may be before the stats
        # socket has shown the new pid here: the proxy runs while either does.
        self.reaper.reap()
        pending = getattr(self, "pending", None)
        return self.cur.poll() is None or (pending is not None and pending.poll() is None)

    def serving(self) -> set[int]:
        return {self.cur.pid} if self.cur.poll() is None else set()

    def reload(self, i: int) -> Reload:
        old = self.cur
        t0 = time.monotonic()
        self.pending = self.spawn([self.binary, "-f", str(self.cfg), "-x", str(self.sock), "-sf", str(old.pid)])
        return Reload(i, t0, {old.pid}, new=self.pending.pid)

    def check_ready(self, r: Reload) -> bool:
        self.reaper.reap()
        if self.pending.poll() is not None:
            r.failed = f"new process exited with {self.pending.returncode}: {self.log_tail(1)}"
            return False
        if self.pid_on_socket() == self.pending.pid:
            self.cur = self.pending
            return True
        return False


class Nginx(Proxy):
    def start(self) -> None:
        self.cfg = self.tmp / "nginx.conf"
        self.write_cfg(NGINX_CFG.format(tmp=self.tmp, port=self.port))
        self.proc = self.spawn([self.binary, "-p", str(self.tmp), "-e", str(self.tmp / "nginx-error.log"),
                                "-c", str(self.cfg)])
        wait_listening(self.port, self.running)
        end = time.monotonic() + 10
        while len(self.serving()) < 2:
            if time.monotonic() > end:
                raise StartError("the master has no workers")
            time.sleep(0.02)
        self.reaper.note_tree(self.proc.pid)

    def log_tail(self, n: int = 3) -> str:
        f = self.tmp / "nginx-error.log"
        text = (self.logf.read_text(errors="replace") + (f.read_text(errors="replace") if f.exists() else ""))
        lines = [l for l in text.splitlines() if l.strip()]
        return " | ".join(l.strip()[:200] for l in lines[-n:])

    def ready_by(self) -> str:
        return "a new worker child of the master"

    def running(self) -> bool:
        return self.proc.poll() is None

    def serving(self) -> set[int]:
        return children(self.proc.pid) - self.known_old

    def reload(self, i: int) -> Reload:
        old = self.serving()
        self.known_old |= old
        t0 = time.monotonic()
        os.kill(self.proc.pid, signal.SIGHUP)
        return Reload(i, t0, old)

    def check_ready(self, r: Reload) -> bool:
        new = self.serving()
        if new:
            r.new = min(new)
            for p in new:
                self.reaper.note(p)
            return True
        return False


def make_proxy(name: str, a: argparse.Namespace, tmp: Path, port: int, reaper: Reaper) -> Proxy:
    if name in ("sluice-mw", "sluice-mw-plan"):
        return MasterWorker(name, a.sluice, tmp, port, reaper, stats=False, plan=name.endswith("plan"))
    if name == "sluice-x":
        return Takeover(name, a.sluice, tmp, port, reaper)
    if name == "haproxy-deb":
        return MasterWorker(name, a.haproxy, tmp, port, reaper, stats=True)
    if name == "haproxy-3.5":
        return MasterWorker(name, a.haproxy35, tmp, port, reaper, stats=True)
    if name == "nginx":
        return Nginx(name, a.nginx, tmp, port, reaper)
    raise ValueError(name)


def binary_of(name: str, a: argparse.Namespace) -> str:
    return {"sluice-mw": a.sluice, "sluice-mw-plan": a.sluice, "sluice-x": a.sluice, "haproxy-deb": a.haproxy,
            "haproxy-3.5": a.haproxy35, "nginx": a.nginx}[name]
