"""`option external-check`: the command runs for each check with HAProxy 3.5's arguments and
environment (a script records them), exit status 0 passes, another is the code of an
"External check error", `timeout check` kills it and whatever it started ("External check
timeout"). The lines are HAProxy 3.5's for the same scripts; this file passes against it but
for the last check: HAProxy kills the script alone, and the script's own children outlive it.
sluice kills its process group."""
from __future__ import annotations

import random
import subprocess
import time

from sluice_harness import slow_factor

from checks_util import health_lines


def script(tmp_path, name: str, body: str) -> str:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)
    return str(p)


def test_external_checks(cfg, sluice, servers, udp_log, short_tmp, tmp_path):
    record = tmp_path / "record"
    # Written aside, then renamed: a read never meets a file being rewritten by the next check.
    ok = script(tmp_path, "ok.sh", f'echo "$*" > {record}.args.tmp && mv {record}.args.tmp {record}.args\n'
                                   f'/usr/bin/env > {record}.env.tmp && mv {record}.env.tmp {record}.env')
    bad = script(tmp_path, "bad.sh", "exit 3")
    # A duration of its own, so that only this test's sleeps are counted below.
    nap = f"30.{random.randrange(10**5, 10**6)}"
    slow = script(tmp_path, "slow.sh", f"/bin/sleep {nap}")
    target = servers.echo()
    global_extra = "    external-check\n    insecure-fork-wanted\n"
    got = health_lines(cfg, sluice, udp_log, short_tmp, {
        "ok": (f"    external-check path /usr/bin:/bin\n    external-check command {ok}", target.port),
        "bad": (f"    external-check command {bad}", target.port),
        "slow": (f"    external-check command {slow}", target.port),
    }, option="option external-check", global_extra=global_extra)
    down = ", check duration: Nms, status: 0/1 DOWN."
    assert got["ok"] == ("Health check for server ok/s1 succeeded, reason: External check passed, "
                         "code: 0, check duration: Nms, status: 1/1 UP."), got
    assert got["bad"] == f"Health check for server bad/s1 failed, reason: External check error, code: 3{down}"
    assert got["slow"] == (f"Health check for server slow/s1 failed, reason: External check timeout, "
                           f"code: 0{down}")
    assert open(f"{record}.args").read().strip() == f"NOT_USED NOT_USED 127.0.0.1 {target.port}"
    env = dict(l.split("=", 1) for l in open(f"{record}.env").read().splitlines() if "=" in l)
    assert env["PATH"] == "/usr/bin:/bin"
    assert env["HAPROXY_PROXY_NAME"] == "ok" and env["HAPROXY_PROXY_ADDR"] == ""
    assert env["HAPROXY_SERVER_NAME"] == "s1" and env["HAPROXY_SERVER_ID"] == "1"
    assert env["HAPROXY_SERVER_ADDR"] == "127.0.0.1" and env["HAPROXY_SERVER_PORT"] == str(target.port)
    assert env["HAPROXY_SERVER_CURCONN"] == "0" and env["HAPROXY_SERVER_PROTO"] == "tcp"
    assert "HOME" not in env   # no preserve-env: only what HAProxy sets
    # A killed check leaves nothing behind: the script's own children go with it (at most the
    # check running now has its `sleep` alive; without the process group they pile up).
    def sleeping() -> int:
        out = subprocess.run(["pgrep", "-fc", f"^/bin/sleep {nap}$"], capture_output=True, text=True)
        return int(out.stdout.strip() or 0)
    time.sleep(1.0 * slow_factor())
    assert sleeping() <= 1
