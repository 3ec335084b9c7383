"""Starting and stopping a real process: signals, bad configs, bind errors."""
import signal
import socket
import time

import pytest

from sluice_harness import DEFAULTS, echo_roundtrip, free_port, line_of, run_sluice


def config(port, backend_port, extra=""):
    return f"""
        global
            nbthread 2
        {DEFAULTS}
        listen app
            bind 127.0.0.1:{port}
            server s1 127.0.0.1:{backend_port}
        {extra}
    """


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_promptly_with_status_0(cfg, sluice, echo, sig):
    port = free_port()
    s = sluice(cfg(config(port, echo.port)), wait_ports=[port])
    assert echo_roundtrip(port) == b"ping\n"
    t0 = time.monotonic()
    rc = s.stop(sig, timeout=5)
    elapsed = time.monotonic() - t0
    assert rc == 0, s.describe()
    assert elapsed < 2.0, f"took {elapsed:.2f}s to stop"


def test_bad_config_fails_a_normal_start(cfg, tmp_path):
    path = cfg("global\n    nbthread zero\n")
    rc, out, err = run_sluice(["-f", str(path)], timeout=10)
    assert rc == 1
    assert "[ALERT]" in err


def test_bind_in_use_fails_with_file_and_line(cfg):
    busy = socket.socket()
    busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # beside free_port's reservation
    busy.bind(("127.0.0.1", free_port()))
    busy.listen(1)
    try:
        port = busy.getsockname()[1]
        path = cfg(config(port, free_port()))
        rc, out, err = run_sluice(["-f", str(path)], timeout=10)
        assert rc == 1, (out, err)
        assert "cannot bind" in err, err
        assert f"{path}:{line_of(path, 'bind ')}" in err, err
    finally:
        busy.close()
