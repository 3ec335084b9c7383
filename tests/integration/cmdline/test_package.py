"""scripts/package.sh builds a Debian package; installed in a scratch root (dpkg-deb -x), its
binary accepts its default configuration, and it carries the man page, the conffiles and the
dependencies of the binary."""
from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import sluice_harness as h

REPO = Path(__file__).resolve().parents[3]


def test_package_installs_and_checks_its_configuration(tmp_path):
    if not shutil.which("dpkg-deb"):
        pytest.skip("dpkg-deb is not installed (not a Debian system)")
    out = subprocess.run([str(REPO / "scripts/package.sh"), str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "SLUICE_BIN": h.sluice_bin()})
    assert out.returncode == 0, out.stderr
    deb = Path(out.stdout.strip())
    assert deb.name.startswith("sluice_") and deb.suffix == ".deb"
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=60)
    control = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, text=True,
                             check=True).stdout
    assert "Package: sluice" in control and "libc6" in control, control
    conffiles = subprocess.run(["dpkg-deb", "-I", str(deb), "conffiles"], capture_output=True,
                               text=True, check=True).stdout.split()
    assert conffiles == ["/etc/sluice/sluice.cfg", "/etc/logrotate.d/sluice"], conffiles
    check = subprocess.run([str(root / "usr/sbin/sluice"), "-c", "-V", "-f",
                            str(root / "etc/sluice/sluice.cfg")],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "Configuration file is valid" in check.stdout, check
    man = gzip.decompress((root / "usr/share/man/man1/sluice.1.gz").read_bytes()).decode()
    for word in ("\\-sf", "\\-x", "SIGUSR1", "SIGTTOU", "expose-fd listeners"):
        assert word in man, word
    assert (root / "etc/logrotate.d/sluice").exists()
    assert (root / "usr/lib/tmpfiles.d/sluice.conf").read_text().startswith("d /run/sluice")
