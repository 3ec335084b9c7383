"""Helpers of the master-worker tests: the master CLI, `show proc`, the processes a master
started (so that every test can check none is left)."""
from __future__ import annotations

from pathlib import Path

from sluice_harness import HTTP_DEFAULTS, cli, http_get, pid_alive, wait_until


def http_config(port: int, extra_global: str = "", nbthread: int = 2) -> str:
    return f"""
global
    nbthread {nbthread}
{extra_global}
{HTTP_DEFAULTS}
frontend fe
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain string "ok"
"""


def show_proc(msock: Path) -> dict:
    """{'master': (pid, reloads, failed), 'workers': [(pid, reloads)], 'old': [(pid, reloads)]}."""
    out = cli(msock, "show proc")
    res: dict = {"master": None, "workers": [], "old": [], "text": out}
    section = None
    for line in out.splitlines():
        if line.startswith("#<PID>") or not line.strip():
            continue
        if line == "# workers":
            section = "workers"
            continue
        if line == "# old workers":
            section = "old"
            continue
        f = line.split()
        if f[1] == "master":
            res["master"] = (int(f[0]), int(f[2]), int(f[4].rstrip("]")))
        elif section:
            res[section].append((int(f[0]), int(f[2])))
    return res


def current_worker(msock: Path) -> int:
    """The current worker; on the master's first load, once that load is complete: the
    master takes no reload before (its listening sockets answer before the worker is ready)."""
    if show_proc(msock)["master"][1] == 0:
        wait_until(lambda: "Loading success." in cli(msock, "show startup-logs"), 10,
                   message="the worker's load to complete")
    w = show_proc(msock)["workers"]
    assert len(w) == 1, w
    return w[0][0]


def alive(pid: int) -> bool:
    return pid_alive(pid)


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def wait_gone(pids, timeout: float = 10.0) -> None:
    wait_until(lambda: not any(alive(p) for p in pids), timeout,
               message=lambda: f"processes {[p for p in pids if alive(p)]} to exit")


def get(port: int) -> bytes:
    return http_get(port)
