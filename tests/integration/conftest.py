"""Shared fixtures for the integration tests (see tests/support/sluice_harness.py)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

# ctest sets PYTHONPATH=tests/support; this also makes a plain `pytest tests/integration` work.
_SUPPORT = Path(__file__).resolve().parents[1] / "support"
if str(_SUPPORT) not in sys.path:
    sys.path.insert(0, str(_SUPPORT))

import sluice_harness as h  # noqa: E402


@pytest.fixture
def sluice_bin() -> str:
    return h.sluice_bin()


@pytest.fixture
def short_tmp():
    """A short /tmp directory for unix socket paths; removed afterwards."""
    d = h.short_tmpdir()
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def cfg(tmp_path):
    """cfg(text, name='sluice.cfg') -> path of a config file written under tmp_path."""
    def write(text: str, name: str = "sluice.cfg") -> Path:
        return h.write_config(tmp_path, text, name)
    return write


@pytest.fixture
def sluice(tmp_path):
    """Factory: sluice(cfg_path_or_text, wait_ports=(...), wait_unix=(...), extra_args=(...),
    env=None, pass_fds=()) -> a running h.Sluice whose listeners are up. Every process it
    started is killed at teardown, whatever the test did."""
    started: list[h.Sluice] = []

    def start(config, wait_ports=(), wait_unix=(), extra_args=(), env=None, pass_fds=()):
        if isinstance(config, str) and "\n" in config:
            config = h.write_config(tmp_path, config, f"sluice{len(started)}.cfg")
        s = h.Sluice(tmp_path / f"run{len(started)}")
        started.append(s)
        s.start(config, extra_args=extra_args, env=env, pass_fds=pass_fds)
        for p in wait_ports:
            s.wait_listening(p)
        for u in wait_unix:
            s.wait_listening_unix(str(u))
        return s

    yield start
    for s in started:
        s.kill()


@pytest.fixture
def servers():
    """A registry that stops every fake server a test created: servers.add(EchoServer())."""
    class Registry:
        def __init__(self):
            self.items = []

        def add(self, server):
            self.items.append(server)
            return server

        def echo(self, **kw):
            return self.add(h.EchoServer(**kw))

    reg = Registry()
    yield reg
    for s in reversed(reg.items):
        try:
            s.stop()
        except Exception:  # noqa: BLE001 - best effort teardown
            pass


@pytest.fixture
def echo(servers):
    """One echo server."""
    return servers.echo()


@pytest.fixture
def nginx(tmp_path):
    """Debian's nginx on a free port answering 200 "hello\\n"; stopped afterwards."""
    n = h.start_nginx(tmp_path)
    yield n
    n.stop()


@pytest.fixture
def origin():
    """A recording HTTP/1.1 origin (tests/support/http_origin.py) on 127.0.0.1 and a free
    port; stopped afterwards."""
    from http_origin import HttpOrigin
    o = HttpOrigin()
    yield o
    o.stop()


@pytest.fixture
def udp_log():
    r = h.UdpLogReceiver()
    yield r
    r.stop()


def pytest_report_header(config):
    return f"sluice binary: {os.environ.get('SLUICE_BIN', '(SLUICE_BIN unset)')}"
