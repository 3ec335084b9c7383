"""Smoke test of the benchmark scripts (bench/): they start, drive and stop every process and write
their reports. It never asserts anything about performance: runs last 1 second, once, on a subset.
Skips only when wrk, nginx or haproxy is missing."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sluice_harness import REPO_ROOT, sluice_bin

BENCH = REPO_ROOT / "bench"


def _env() -> dict:
    env = dict(os.environ)
    sb = Path(sluice_bin())
    env["SLUICE_BIN"] = str(sb)
    # The load generator is built next to the binary (add_subdirectory(bench)); otherwise
    # bench/lib.sh builds it on its own.
    lg = sb.parents[2] / "bench" / "loadgen" / "sluice-loadgen"
    if lg.exists():
        env["LOADGEN_BIN"] = str(lg)
    for k in list(env):
        if k.startswith("BENCH_"):
            del env[k]
    return env


@pytest.fixture(scope="module")
def tools():
    missing = [t for t in ("wrk", "nginx", "haproxy") if not (shutil.which(t) or Path(f"/usr/sbin/{t}").exists())]
    if missing:
        pytest.skip(f"missing: {', '.join(missing)}")


def _run(args: list[str], timeout: float = 90) -> subprocess.CompletedProcess:
    p = subprocess.run(args, cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{args} exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def test_run_sh_subset(tools, tmp_path):
    cands = "sluice,haproxy,nginx"
    if not any(Path(d, "ngx_stream_module.so").exists() for d in ("/usr/lib/nginx/modules", "/usr/share/nginx/modules")):
        cands = "sluice,haproxy"  # no nginx stream module: nginx can't do the TCP scenarios
    _run([str(BENCH / "run.sh"), "--duration", "1", "--reps", "1", "--threads", "1",
          "--scenarios", "http-close,tcp-connrate,memory,memory-http", "--candidates", cands,
          "--mem-conns", "200", "--out", str(tmp_path)])
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert not [r for r in runs if "error" in r], runs
    assert {(r["scenario"], r["candidate"]) for r in runs} == {
        (s, c) for s in ("http-close", "tcp-connrate", "memory", "memory-http") for c in cands.split(",")}
    for r in runs:
        assert r["ops"] > 0 and r["cpu_per_unit"] is not None, r
        if r["scenario"] == "memory":
            assert r["ops"] == 200 and r["upstream"] == 200, r
        if r["scenario"] == "memory-http":
            assert r["ops"] == 200 and r["answered"] == 200, r
    md = (tmp_path / "results.md").read_text()
    for heading in ("## http-close", "## tcp-connrate", "## memory", "## memory-http", "ratio to sluice", "Machine:"):
        assert heading in md
    assert (tmp_path / "machine.txt").exists()
    if shutil.which("gnuplot"):
        assert (tmp_path / "chart.png").stat().st_size > 0
    # `report` rebuilds the same tables from runs.jsonl.
    before = [l for l in md.splitlines() if l.startswith("| ")]
    _run([str(BENCH / "run.sh"), "report", str(tmp_path)])
    md2 = (tmp_path / "results.md").read_text()
    assert [l for l in md2.splitlines() if l.startswith("| ")] == before
    assert "Report rewritten by" in md2 and "Command: `" in md2


def test_run_sh_split_placement(tools, tmp_path):
    # --placement split: the proxy gets CPUs of its own when there are more CPUs than threads.
    _run([str(BENCH / "run.sh"), "--duration", "1", "--reps", "1", "--threads", "1",
          "--scenarios", "http-keepalive", "--candidates", "sluice", "--placement", "split",
          "--out", str(tmp_path)])
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 1 and "error" not in runs[0] and runs[0]["ops"] > 0, runs
    cpus = sorted(os.sched_getaffinity(0))
    split = len(cpus) > 1
    assert runs[0]["placement"] == ("split" if split else "shared"), runs
    if split:   # the proxy really ran on the first CPU alone
        assert runs[0]["proxy_cpus_allowed"] == str(cpus[0]), runs
    md = (tmp_path / "results.md").read_text()
    assert ("proxy on CPU" in md) == split and "Placement: split" in md, md[:2000]


def test_candidate_order_rotates_each_repetition():
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench", BENCH / "bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    args = bench.parse(["--scenarios", "http-close,tcp-connrate", "--threads", "1",
                        "--candidates", "sluice,haproxy,nginx"])
    orders = [[(s, c.name) for s, c in bench.rotated_plan(args, rep)] for rep in (1, 2, 3, 4)]
    first = [c for s, c in orders[0] if s == "http-close"]
    assert first == ["sluice", "haproxy", "nginx"]
    for rep, order in enumerate(orders):
        for scn in ("http-close", "tcp-connrate"):   # scenarios keep their order, candidates rotate
            names = [c for s, c in order if s == scn]
            k = rep % 3
            assert names == first[k:] + first[:k], (rep, scn, names)
        assert [s for s, _ in order] == ["http-close"] * 3 + ["tcp-connrate"] * 3


def test_scaling_dry_run_and_tiny_run(tools, tmp_path):
    p = _run([str(BENCH / "scaling.sh"), "--cores", "16", "--dry-run"])
    assert "by-process" in p.stdout and "by-thread" in p.stdout and "4 groups of 2" in p.stdout
    out = tmp_path / "scaling.md"
    _run([str(BENCH / "scaling.sh"), "--cores", str(min(os.cpu_count() or 1, 2)), "--duration", "1",
          "--reps", "1", "--out", str(out)])
    md = out.read_text()
    assert "| by-thread |" in md and "failed:" not in md


def test_portable_pack_and_scaling_with_peers(tools, tmp_path):
    """bench/portable.sh packs every program with its libraries and runs them through the packed
    loader; the scaling run then compares the peers in HTTP mode (what a lent machine runs)."""
    env = _env()
    if "LOADGEN_BIN" not in env:
        pytest.skip("sluice-loadgen is not built next to the binary")
    pack = tmp_path / "pack"
    subprocess.run([str(BENCH / "portable.sh"), "pack", str(pack)], env=env, check=True, timeout=120,
                   capture_output=True)
    assert (pack / "lib" / "ld-linux-x86-64.so.2").exists() and (pack / "bin" / "haproxy").exists()
    out = tmp_path / "scaling.md"
    p = subprocess.run([str(BENCH / "portable.sh"), "run", str(pack), "--cores", str(min(os.cpu_count() or 1, 2)),
                        "--mode", "http", "--shards", "by-process", "--peers", "haproxy,nginx",
                        "--duration", "1", "--reps", "1", "--out", str(out)],
                       env=env, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    md = out.read_text()
    assert "(HTTP mode)" in md and "failed:" not in md, md
    rows = [line for line in md.splitlines() if line.startswith("| ") and "conn" not in line and "---" not in line]
    assert any(r.startswith("| by-process |") for r in rows)
    assert any(r.startswith("| HAProxy, nbthread 2") for r in rows) and any(r.startswith("| nginx http") for r in rows)
    assert "by-thread" not in md
    # the packed programs ran, not the installed ones
    programs = next(line for line in md.splitlines() if line.startswith("Programs: "))
    assert programs.count(str(pack / "bin")) == 4, programs


def test_instructions_sh(tools):
    if not shutil.which("valgrind"):
        pytest.skip("valgrind missing: instructions.sh is not exercised")
    import os
    import subprocess
    vv = subprocess.run([os.environ["SLUICE_BIN"], "-vv"], capture_output=True, text=True).stdout
    if "SANITIZE= none" not in vv:
        # valgrind cannot run an ASan/TSan binary; the release run of the suite covers this.
        pytest.skip("sanitizer build: instructions.sh needs a plain binary under valgrind")
    p = _run([str(BENCH / "instructions.sh"), "--conns", "100", "--top", "5"])
    assert "instructions/connection:" in p.stdout
