"""`-D -p <pidfile>`: daemon mode."""
import contextlib
import os
import signal

from sluice_harness import (DEFAULTS, echo_roundtrip, free_port, is_listening, pid_alive,
                            run_sluice, wait_until)


def test_daemon_writes_pidfile_and_stops_on_sigterm(cfg, tmp_path, echo):
    port = free_port()
    pidfile = tmp_path / "sluice.pid"
    path = cfg(f"""
        {DEFAULTS}
        listen app
            bind 127.0.0.1:{port}
            server s1 127.0.0.1:{echo.port}
    """)
    pid = None
    try:
        rc, out, err = run_sluice(["-D", "-p", str(pidfile), "-f", str(path)], timeout=10)
        assert rc == 0, (out, err)
        wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), 5,
                   message="the pidfile")
        pid = int(pidfile.read_text().split()[0])
        assert pid_alive(pid)
        wait_until(lambda: is_listening(port, pid), 10, message=f"daemon {pid} listening")
        assert echo_roundtrip(port) == b"ping\n"

        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not pid_alive(pid), 5, message=f"daemon {pid} to exit")
        wait_until(lambda: not is_listening(port), 2, message="the port to be released")
        pid = None
    finally:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
