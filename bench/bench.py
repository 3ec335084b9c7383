#!/usr/bin/env python3
"""sluice benchmarks against HAProxy and nginx, all on loopback, in one interleaved run.

Called through bench/run.sh (and bench/instructions.sh, bench/syscalls.sh, bench/profile.sh,
bench/scaling.sh); docs/performance.md explains what each scenario measures and how to read it.

The figure that matters on a small shared machine is the proxy's own CPU time per forwarded
request or connection (utime + stime from /proc/<pid>/stat, summed over the proxy's processes),
not requests per second: the latter mostly measures how the scheduler shares the cores between
client, proxy and origin. Candidates run interleaved (A B C A B C ...), each run on a freshly
started proxy, and the report gives medians and each peer's ratio to sluice from the same run.

stdlib only. The code is split by responsibility: bench_common.py (processes, tools,
candidates), bench_load.py (scenarios and measurements), bench_report.py (tables and charts),
bench_run.py (the run and its report), bench_tools.py (instructions, system calls, profiles),
bench_scaling.py (scaling runs).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import *  # noqa: E402,F401,F403
from bench_load import *  # noqa: E402,F401,F403
from bench_report import *  # noqa: E402,F401,F403
from bench_run import *  # noqa: E402,F401,F403
from bench_run import _single  # noqa: E402,F401
from bench_scaling import *  # noqa: E402,F401,F403
from bench_tools import *  # noqa: E402,F401,F403


def main(argv: list[str]) -> int:
    sub = {"scaling": cmd_scaling, "instructions": cmd_instructions, "syscalls": cmd_syscalls, "profile": cmd_profile,
           "report": cmd_report}
    if argv and argv[0] in sub:
        return sub[argv[0]](argv[1:])
    return cmd_run(parse(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
