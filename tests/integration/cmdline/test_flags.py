"""Command-line flags: unknown flags, -d* debug flags."""
import re

import pytest

from sluice_harness import DEFAULTS, free_port, run_sluice


def valid(cfg):
    return str(cfg(f"""
        {DEFAULTS}
        listen app
            bind 127.0.0.1:{free_port()}
            server s1 127.0.0.1:{free_port()}
    """))


def test_unknown_flag_prints_usage(cfg):
    rc, out, err = run_sluice(["--definitely-not-a-flag", "-f", valid(cfg)])
    assert rc == 1, (out, err)
    assert "usage" in (out + err).lower(), (out, err)


def test_no_arguments_prints_usage():
    rc, out, err = run_sluice([])
    assert rc == 1, (out, err)
    assert "usage" in (out + err).lower(), (out, err)


@pytest.mark.parametrize("flag", ["-dM", "-dr", "-dW", "-dV", "-dS", "-dZ", "-dG", "-dQ"])
def test_debug_flags_are_accepted_or_refused_cleanly(cfg, flag):
    rc, out, err = run_sluice([flag, "-c", "-f", valid(cfg)])
    assert rc in (0, 1), f"{flag}: exit {rc}\n{out}\n{err}"
    if rc == 1:
        assert err.strip(), f"{flag} refused without a message"
        assert flag in err or "usage" in err.lower() or "not supported" in err.lower(), err


def test_dD_diagnostics_mode_is_accepted(cfg):
    rc, out, err = run_sluice(["-dD", "-c", "-f", valid(cfg)])
    assert rc == 0, err


def test_vq_prints_the_version_and_vqs_its_branch():
    rc, out, _ = run_sluice(["-vq"])
    assert rc == 0 and re.fullmatch(r"\d+\.\d+\.\d+\S*\n", out), out
    version = out.strip()
    for flag in ("-vqs", "-vqb"):
        rc, out, _ = run_sluice([flag])
        assert rc == 0 and out.strip() == ".".join(version.split(".")[:2]), (flag, out)


def test_db_keeps_a_daemon_configuration_in_the_foreground(cfg, sluice):
    port = free_port()
    path = cfg(f"""
        global
            daemon
        {DEFAULTS}
        listen app
            bind 127.0.0.1:{port}
            server s1 127.0.0.1:{free_port()}
    """)
    s = sluice(path, wait_ports=[port], extra_args=["-db"])
    # The process we started listens itself (no fork into the background) and has no child.
    from sluice_harness import is_listening
    assert is_listening(port, s.pid)
    with open(f"/proc/{s.pid}/task/{s.pid}/children") as f:
        assert f.read().split() == []
    assert s.stop() == 0


def test_N_sets_the_maxconn_of_frontends_that_set_none(cfg, sluice, short_tmp):
    from sluice_harness import cli, parse_show_stat
    port, other, sock = free_port(), free_port(), short_tmp / "s.sock"
    path = cfg(f"""
        global
            stats socket {sock} level admin
        {DEFAULTS}
        listen app
            bind 127.0.0.1:{port}
            server s1 127.0.0.1:{free_port()}
        listen own
            bind 127.0.0.1:{other}
            maxconn 77
            server s1 127.0.0.1:{free_port()}
    """)
    sluice(path, wait_ports=[port], wait_unix=[sock], extra_args=["-N", "123"])
    _, rows = parse_show_stat(cli(sock, "show stat"))
    slim = {r["pxname"]: r["slim"] for r in rows if r["svname"] == "FRONTEND"}
    assert slim == {"app": "123", "own": "77"}, slim
    rc, _, err = run_sluice(["-N", "zero", "-c", "-f", str(path)])
    assert rc == 1 and "'-N' expects a positive integer" in err, err


def test_4_is_accepted_and_m_refused_with_the_reason(cfg):
    rc, out, err = run_sluice(["-4", "-c", "-f", valid(cfg)])
    assert rc == 0, err
    rc, out, err = run_sluice(["-m", "64", "-c", "-f", valid(cfg)])
    assert rc == 1, (out, err)
    assert "'-m' is not supported by sluice: HAProxy caps its memory pools" in err, err
