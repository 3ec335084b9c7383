"""The Prometheus exporter's output passes Prometheus' own linter, `promtool check metrics`, for
every group of metrics the query can select (scope=global|frontend|backend|server|*,
extra-counters, no-maint): a scrape that promtool flags would break or confuse real
Prometheus servers and dashboards. Any line promtool prints is a problem."""
from __future__ import annotations

import re
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest

import sluice_harness as h
from http_origin import HttpOrigin
from stats_layout import start_layout

EXPORTER = "    http-request use-service prometheus-exporter if { path /metrics }"
ALL = {"process", "frontend", "backend", "server"}

# query -> the metric groups (haproxy_<group>_...) it must give: exactly those, or at least
# those for the queries that select everything.
SCOPES = [
    ("", ALL, False),
    ("?scope=global", {"process"}, True),
    ("?scope=frontend", {"frontend"}, True),
    ("?scope=backend", {"backend"}, True),
    ("?scope=server", {"server"}, True),
    ("?scope=*", ALL, False),
    ("?scope=frontend&scope=backend", {"frontend", "backend"}, True),
    ("?extra-counters", ALL, False),
    ("?scope=backend&extra-counters", {"backend"}, True),
    ("?scope=server&no-maint", {"server"}, True),
]

# haproxy_server_status's state with value 1, per server: a server without checks is UP.
PROM_STATES = {"web1": "UP", "web2": "DOWN", "web3": "MAINT", "web4": "UP"}


def _is_haproxy_without_promex(error: str) -> bool:
    """The reference HAProxy may be built without USE_PROMEX; only then is the test skipped
    (a sluice that refused the service must fail, whatever its message)."""
    if "'prometheus-exporter' unknown service name" not in error:
        return False
    _, out, err = h.run_sluice(["-v"])
    return "HAProxy version" in out + err


@pytest.fixture(scope="module")
def exporter(tmp_path_factory):
    """One instance for the module: the layout, with the exporter on web_fe's /metrics."""
    if shutil.which("promtool") is None:
        pytest.skip("promtool not installed: apt-get install prometheus")
    origin = HttpOrigin()
    sock_dir = h.short_tmpdir()
    try:
        try:
            layout = start_layout(tmp_path_factory.mktemp("exporter"), sock_dir, origin,
                                  fe_lines=EXPORTER)
        except AssertionError as exc:
            if _is_haproxy_without_promex(str(exc)):
                pytest.skip("this HAProxy is built without the Prometheus exporter (USE_PROMEX)")
            raise
        try:
            yield layout
        finally:
            layout.proc.kill()
    finally:
        origin.stop()
        shutil.rmtree(sock_dir, ignore_errors=True)


def fetch(port: int, target: str) -> tuple[int, str, bytes]:
    """GET through urllib with no proxy (whatever *_proxy says): (status, content-type, body)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}{target}", timeout=10 * h.slow_factor()) as r:
            return r.status, r.headers.get("content-type"), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type"), e.read()


def families(body: str) -> set[str]:
    return {line.split(" ")[2] for line in body.splitlines() if line.startswith("# TYPE ")}


def server_states(body: str) -> dict[str, str]:
    """server -> the state label of its haproxy_server_status sample with value 1."""
    out = {}
    pat = re.compile(r'^haproxy_server_status\{(.*)\} 1$')
    for line in body.splitlines():
        m = pat.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
            if labels.get("proxy") == "app_be":
                out[labels["server"]] = labels["state"]
    return out


@pytest.mark.parametrize("query, groups, exact", SCOPES, ids=[q or "all" for q, _, _ in SCOPES])
def test_promtool_check_metrics(exporter, promtool, query, groups, exact):
    status, ctype, body = fetch(exporter.port, "/metrics" + query)
    text = body.decode(errors="replace")
    assert status == 200, f"/metrics{query}: {status}\n{text[:500]}"
    assert ctype == "text/plain; version=0.0.4", ctype

    # The query chose the groups.
    got = {name.split("_")[1] for name in families(text)}
    if exact:
        assert got == groups, f"/metrics{query} gave groups {sorted(got)}"
    else:
        assert groups <= got, f"/metrics{query} lacks {sorted(groups - got)}"
    if "server" in groups:
        expected = dict(PROM_STATES)
        if "no-maint" in query:
            del expected["web3"]
        assert server_states(text) == expected, text[:2000]

    proc = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                          timeout=30 * h.slow_factor())
    lines = [l for l in (proc.stdout + proc.stderr).decode(errors="replace").splitlines()
             if l.strip()]
    assert proc.returncode == 0 and not lines, (
        f"promtool check metrics on /metrics{query} (exit {proc.returncode}):\n"
        + "\n".join(lines))
