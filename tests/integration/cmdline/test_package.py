"""scripts/package.sh builds a Debian package; installed in a scratch root (dpkg-deb -x), its
binary accepts its default configuration, and it carries the man page, the conffiles, the
systemd unit (master-worker mode, -Ws) and the dependencies of the binary."""
from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import sluice_harness as h

REPO = Path(__file__).resolve().parents[3]
UNIT = "lib/systemd/system/sluice.service"


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> tuple[Path, Path]:
    """scripts/package.sh's .deb, and the scratch root it is unpacked in (built once)."""
    tmp_path = tmp_path_factory.mktemp("package")
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
    return deb, root


def unit_settings(text: str) -> dict[str, list[str]]:
    """'[Section] Key' -> its values in order (ExecReload= appears twice)."""
    settings: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
            continue
        key, _, value = line.partition("=")
        settings.setdefault(f"{section} {key.strip()}", []).append(value.strip())
    return settings


def test_package_installs_and_checks_its_configuration(package):
    deb, root = package
    control = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, text=True,
                             check=True).stdout
    assert "Package: sluice" in control and "libc6" in control, control
    conffiles = subprocess.run(["dpkg-deb", "-I", str(deb), "conffiles"], capture_output=True,
                               text=True, check=True).stdout.split()
    assert conffiles == ["/etc/sluice/sluice.cfg", "/etc/logrotate.d/sluice",
                         "/etc/default/sluice"], conffiles
    check = subprocess.run([str(root / "usr/sbin/sluice"), "-c", "-V", "-f",
                            str(root / "etc/sluice/sluice.cfg")],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "Configuration file is valid" in check.stdout, check
    man = gzip.decompress((root / "usr/share/man/man1/sluice.1.gz").read_bytes()).decode()
    for word in ("\\-sf", "\\-x", "SIGUSR1", "SIGTTOU", "expose-fd listeners", "\\-Ws",
                 "show proc", "sluice.service"):
        assert word in man, word
    assert (root / "etc/logrotate.d/sluice").exists()
    assert (root / "usr/lib/tmpfiles.d/sluice.conf").read_text().startswith("d /run/sluice")


def test_package_installs_the_systemd_unit(package, tmp_path):
    deb, root = package
    unit = unit_settings((root / UNIT).read_text())
    assert unit["[Service] Type"] == ["notify"], unit
    start = unit["[Service] ExecStart"]
    assert len(start) == 1, start
    assert start[0].split()[:2] == ["/usr/sbin/sluice", "-Ws"], start
    for words in ("-f $CONFIG", "-p $PIDFILE", "$EXTRAOPTS"):
        assert words in start[0], (words, start)
    # First the configuration check, then SIGUSR2 to the master: a broken file fails the
    # reload before the master sees it.
    check, signal = unit["[Service] ExecReload"]
    assert check.split()[:2] == ["/usr/sbin/sluice", "-Ws"] and "-c" in check.split(), check
    assert "-f $CONFIG" in check, check
    assert signal.split() == ["/bin/kill", "-USR2", "$MAINPID"], signal
    assert unit["[Service] KillMode"] == ["mixed"]
    assert unit["[Service] Restart"] == ["always"]
    assert unit["[Service] SuccessExitStatus"] == ["143"]
    assert unit["[Service] EnvironmentFile"] == ["-/etc/default/sluice"]
    env = unit["[Service] Environment"][0]
    for value in ('"CONFIG=/etc/sluice/sluice.cfg"', '"PIDFILE=/run/sluice.pid"',
                  '"EXTRAOPTS=-S /run/sluice-master.sock"'):
        assert value in env, (value, env)
    assert unit["[Install] WantedBy"] == ["multi-user.target"]
    # The defaults file only shows what may be set: nothing is set by default.
    defaults = (root / "etc/default/sluice").read_text().splitlines()
    assert all(not line.strip() or line.startswith("#") for line in defaults), defaults
    assert any(line.startswith("#EXTRAOPTS=") for line in defaults), defaults
    # The maintainer scripts are valid sh and leave the service's enablement to the admin.
    for script in ("postinst", "prerm", "postrm"):
        text = subprocess.run(["dpkg-deb", "-I", str(deb), script], capture_output=True,
                              text=True, check=True).stdout
        assert subprocess.run(["sh", "-n"], input=text, text=True).returncode == 0, script
        assert "enable" not in text and "start" not in text.replace("restart", ""), text
    # systemd's own reading of the unit, with the binary where the unit expects it.
    if shutil.which("systemd-analyze"):
        copy = tmp_path / "sluice.service"
        copy.write_text((root / UNIT).read_text()
                        .replace("/usr/sbin/sluice", str(root / "usr/sbin/sluice")))
        verify = subprocess.run(["systemd-analyze", "verify", "--man=no", str(copy)],
                                capture_output=True, text=True, timeout=60)
        assert verify.returncode == 0, verify.stderr


def test_unit_reload_check_accepts_the_default_configuration(package, tmp_path):
    """The unit's first ExecReload= line, as systemd would expand it, with the package's
    configuration: exit 0 and nothing printed (-q). The check runs beside the serving master:
    it must not make (or replace) the master CLI's socket that -S names."""
    _, root = package
    check = unit_settings((root / UNIT).read_text())["[Service] ExecReload"][0]
    sock = tmp_path / "master.sock"
    words = []
    for word in check.split():
        if word == "/usr/sbin/sluice":
            words.append(str(root / "usr/sbin/sluice"))
        elif word == "$CONFIG":
            words.append(str(root / "etc/sluice/sluice.cfg"))
        elif word == "$EXTRAOPTS":
            words += ["-S", str(sock)]
        else:
            words.append(word)
    run = subprocess.run(words, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0, (words, run.stdout, run.stderr)
    assert run.stdout == "", run.stdout
    assert not sock.exists()
