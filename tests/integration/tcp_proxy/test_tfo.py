"""`bind ... tfo`: TCP Fast Open on the listener. In a network namespace of its own (where
net.ipv4.tcp_fastopen can allow servers without touching the machine's setting), a client's
second connection carries its data in the SYN, and the kernel counts it as a passive TFO
connection only when the listener has TCP_FASTOPEN. Needs root and `ip`; skipped otherwise."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import textwrap
import uuid

import pytest

from sluice_harness import DEFAULTS, free_port, sluice_bin, wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"),
                                reason="needs root and iproute2 for a network namespace")

CLIENT = textwrap.dedent("""
    import socket, sys
    port = int(sys.argv[1])
    for _ in range(3):
        s = socket.socket()
        # Blocking: without a cookie yet, the first one connects first, then sends.
        s.sendto(b"ping\\n", socket.MSG_FASTOPEN, ("127.0.0.1", port))
        s.settimeout(5)
        assert s.recv(10) == b"ping\\n"
        s.close()
    print("ok")
""")


def passive_tfo(ns: str) -> int:
    out = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/netstat"],
                         capture_output=True, text=True, timeout=10).stdout.splitlines()
    for names, values in zip(out[::2], out[1::2]):
        if names.startswith("TcpExt:"):
            return int(dict(zip(names.split()[1:], values.split()[1:])).get("TCPFastOpenPassive", 0))
    return 0


@pytest.mark.parametrize("tfo", [True, False], ids=["tfo", "without"])
def test_fast_open_listener(tmp_path, tfo):
    ns = f"sluice-tfo-{uuid.uuid4().hex[:8]}"
    made = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:
        pytest.skip(f"cannot create a network namespace here: {made.stderr.strip()}")
    proc = echo = None
    try:
        run = ["ip", "netns", "exec", ns]
        subprocess.run(run + ["ip", "link", "set", "lo", "up"], check=True, timeout=10)
        subprocess.run(run + ["sysctl", "-q", "-w", "net.ipv4.tcp_fastopen=3"], check=True, timeout=10)
        port, echo_port = free_port(), free_port()
        echo = subprocess.Popen(run + ["python3", "-c", textwrap.dedent(f"""
            import socket, threading
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", {echo_port})); s.listen(16)
            def serve(c):
                while d := c.recv(4096): c.sendall(d)
            while True:
                c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
        """)])
        cfg = tmp_path / "tfo.cfg"
        cfg.write_text(f"{DEFAULTS}\nlisten app\n    bind 127.0.0.1:{port}{' tfo' if tfo else ''}\n"
                       f"    server s1 127.0.0.1:{echo_port}\n")
        proc = subprocess.Popen(run + [sluice_bin(), "-db", "-f", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def answers() -> bool:
            r = subprocess.run(run + ["python3", "-c", CLIENT, str(port)], capture_output=True,
                               text=True, timeout=20)
            return r.stdout.strip() == "ok"
        wait_until(answers, 10, message="sluice answering in the namespace")
        before = passive_tfo(ns)
        assert answers()
        gained = passive_tfo(ns) - before
        assert (gained >= 1) if tfo else (gained == 0), gained
    finally:
        for p in (proc, echo):
            if p:
                p.kill()
                p.wait(timeout=5)
        subprocess.run(["ip", "netns", "delete", ns], timeout=10)
