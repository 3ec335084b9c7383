"""Reloads: a new process started with `-sf <old pid>` takes over the listeners."""
from sluice_harness import DEFAULTS, echo_roundtrip, free_port


def config(port, server_port, global_extra="", extra_bind_port=None):
    extra = f"    bind 127.0.0.1:{extra_bind_port}\n" if extra_bind_port else ""
    return f"""
global
    nbthread 2
{global_extra}
{DEFAULTS}
listen app
    bind 127.0.0.1:{port}
{extra}    server s1 127.0.0.1:{server_port}
"""


def test_global_noreuseport_turns_so_reuseport_off(cfg, sluice, echo):
    # Without SO_REUSEPORT a second process cannot bind the same port (and no -sf asks the
    # first one to let go).
    port = free_port()
    path = cfg(config(port, echo.port, "    noreuseport"))
    first = sluice(path, wait_ports=[port])
    second = sluice(path)
    assert second.wait_exit(timeout=10) == 1, second.describe()
    assert "Address already in use" in second.stderr(), second.describe()
    assert first.running()
    assert echo_roundtrip(port) == b"ping\n"
