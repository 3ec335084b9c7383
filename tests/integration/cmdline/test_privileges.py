"""`chroot`, `user`/`uid`, `group`/`gid`: once every socket is bound, sluice gives up root and
serves from the chroot, as HAProxy does (Debian's default haproxy.cfg has all three)."""
import os
import pwd

import pytest

from sluice_harness import DEFAULTS, echo_roundtrip, free_port, run_sluice

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing ids needs root")


def _ids(pid):
    """(real uid, real gid, supplementary groups) from /proc/<pid>/status."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.split()
    return int(fields["Uid"][0]), int(fields["Gid"][0]), fields.get("Groups", [])


@needs_root
def test_serves_from_the_chroot_as_nobody(cfg, sluice, echo, tmp_path):
    nobody = pwd.getpwnam("nobody")
    jail = tmp_path / "jail"
    jail.mkdir()
    port = free_port()
    s = sluice(cfg(f"""
global
    chroot {jail}
    user nobody
    gid {nobody.pw_gid}
{DEFAULTS}
listen app
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{echo.port}
"""), wait_ports=[port])
    assert echo_roundtrip(port) == b"ping\n"
    assert _ids(s.pid)[:2] == (nobody.pw_uid, nobody.pw_gid)
    assert _ids(s.pid)[2] == []   # supplementary groups dropped
    assert os.readlink(f"/proc/{s.pid}/root") == str(jail)


@needs_root
def test_a_missing_chroot_is_fatal_at_start(cfg, tmp_path):
    port = free_port()
    rc, _, err = run_sluice(["-f", str(cfg(f"""
global
    chroot {tmp_path}/nonexistent
{DEFAULTS}
listen app
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:1
"""))])
    assert rc == 1
    assert f"[sluice.main()] Cannot chroot({tmp_path}/nonexistent)." in err


def test_parse_errors_and_warnings(cfg):
    def check(lines):
        return run_sluice(["-c", "-f", str(cfg("global\n" + lines + "\n" + DEFAULTS))])
    rc, _, err = check("    user no-such-user-here")
    assert rc == 1 and "cannot find user id for 'no-such-user-here'." in err, err
    rc, _, err = check("    group no-such-group-here")
    assert rc == 1 and "cannot find group id for 'no-such-group-here'." in err, err
    rc, _, err = check("    uid x")
    assert rc == 1 and "'uid' expects an integer argument." in err, err
    rc, _, err = check("    chroot")
    assert rc == 1 and "'chroot' expects a directory as an argument." in err, err
    rc, _, err = check("    uid 5\n    user nobody")
    assert rc == 0 and "user/uid already specified. Continuing." in err, err
    rc, _, err = check("    ssl-default-server-ciphers ECDHE-RSA-AES128-GCM-SHA256\n    ca-base /etc/ssl")
    assert rc == 0 and "ssl-default-server-ciphers" not in err, err   # used by server lines
    assert "'ca-base'" not in err, err   # used by bind and server lines
    rc, _, err = check("    ca-base /etc/ssl\n    ca-base /etc/ssl")
    assert rc == 1 and "'ca-base' already specified." in err, err


def test_debian_default_configuration_loads():
    """/etc/haproxy/haproxy.cfg as Debian's haproxy package installs it (when present)."""
    path = "/etc/haproxy/haproxy.cfg"
    if not os.path.exists(path):
        pytest.skip("no Debian haproxy configuration here")
    rc, out, err = run_sluice(["-c", "-f", path])
    assert rc == 0, err
