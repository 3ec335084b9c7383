"""Fixtures of the HTTP-mode tests: the recording origin (tests/support/http_origin.py) and a
sluice started once per module for the parser vector tables."""
import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import sluice_harness as h  # noqa: E402
from http_origin import HttpOrigin  # noqa: E402


@pytest.fixture
def origin(origin):
    """The shared origin (tests/integration/conftest.py), and here no request it could not
    parse."""
    yield origin
    origin.stop()
    assert not origin.errors, f"origin errors: {origin.errors!r}"


@pytest.fixture
def origin2():
    o = HttpOrigin()
    yield o
    o.stop()


@pytest.fixture(scope="module")
def module_origin():
    o = HttpOrigin()
    yield o
    o.stop()


@pytest.fixture(scope="module")
def module_proxy(module_origin, tmp_path_factory):
    """sluice in front of module_origin with a default HTTP config; yields (port, sluice)."""
    from hutil import config
    tmp = tmp_path_factory.mktemp("proxy")
    port = h.free_port()
    path = h.write_config(tmp, config(port, module_origin.port))
    s = h.Sluice(tmp / "run")
    s.start(path)
    try:
        s.wait_listening(port)
        yield port, s
    finally:
        s.kill()


@pytest.fixture
def proxy(module_proxy, module_origin):
    """(port, origin) of the module's sluice, with the origin's records cleared."""
    port, s = module_proxy
    if not s.running():
        pytest.fail(f"the module's sluice is not running\n{s.describe()}")
    module_origin.reset()
    return port, module_origin
