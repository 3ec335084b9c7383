"""Running sluice and Debian's haproxy one after the other on the same configuration, for the
tests that compare their log lines or counters side by side. The comparison is skipped where
haproxy is not installed (a fresh machine: the suite must not need it)."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from typing import Callable

from sluice_harness import is_listening, wait_until


def debian_haproxy() -> str | None:
    """Debian's haproxy binary, or None."""
    for p in (shutil.which("haproxy"), "/usr/sbin/haproxy"):
        if p and os.access(p, os.X_OK):
            return p
    return None


def run_proxy(proxy: str, text: str, tmp: str, port: int, drive: Callable[[int], None],
              while_running: Callable[[], object] | None = None) -> tuple[str, object]:
    """Starts `proxy` ("sluice" or a haproxy path) on the configuration `text`, waits for
    `port`, runs `drive(port)`, then `while_running()`, and stops it. Returns what it wrote on
    stdout (its `log stdout` lines) and what `while_running` returned."""
    path = os.path.join(tmp, f"{os.path.basename(proxy)}.cfg")
    with open(path, "w") as f:
        f.write(text)
    binary = os.environ["SLUICE_BIN"] if proxy == "sluice" else proxy
    args = [binary, "-f", path] + ([] if proxy == "sluice" else ["-db"])
    out_path = path + ".out"
    got = None
    with open(out_path, "wb") as out:
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        try:
            wait_until(lambda: is_listening(port), 5, message=f"{proxy} listens")
            drive(port)
            time.sleep(0.3)   # the last line is written once the stream ends
            if while_running:
                got = while_running()
        finally:
            p.terminate()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
    wait_until(lambda: not is_listening(port), 5, message=f"{proxy} stopped")
    with open(out_path, "rb") as f:
        return f.read().decode(errors="replace"), got
