"""Every shipped example passes `sluice -c`, and the quickstart demo works end to end."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sluice_harness import REPO_ROOT, free_port, parse_show_info, run_sluice, wait_until

EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.cfg"))


def test_there_are_examples():
    names = {p.name for p in EXAMPLES}
    assert {"quickstart.cfg", "tcp-basic.cfg"} <= names, names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_passes_check(path):
    rc, out, err = run_sluice(["-c", "-f", str(path)])
    assert rc == 0, f"{path}:\n{out}\n{err}"


def test_quickstart_demo_through_the_proxy(tmp_path, sluice):
    """The README's demo, on ports picked by the test: `show info` reaches the stats socket
    through the tcp proxy."""
    text = (REPO_ROOT / "examples/quickstart.cfg").read_text()
    proxy_port, cli_port = free_port(), free_port()
    text = re.sub(r"127\.0\.0\.1:8080\b", f"127.0.0.1:{proxy_port}", text)
    text = re.sub(r"127\.0\.0\.1:8081\b", f"127.0.0.1:{cli_port}", text)
    assert str(proxy_port) in text and str(cli_port) in text
    path = tmp_path / "quickstart.cfg"
    path.write_text(text)
    s = sluice(path, wait_ports=[proxy_port, cli_port])
    assert shutil.which("socat")
    out = subprocess.run(["socat", "-t5", "-", f"TCP:127.0.0.1:{proxy_port}"],
                         input=b"show info\n", capture_output=True, timeout=15).stdout.decode()
    info = parse_show_info(out)
    assert info.get("Pid") == str(s.pid), out
    # option tcplog + log stdout: the request shows up on stdout.
    wait_until(lambda: "demo" in s.stdout(), 5, message=lambda: s.describe())
