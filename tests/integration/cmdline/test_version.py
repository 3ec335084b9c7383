"""`-v` / `-vv`: version and build information, like haproxy."""
from sluice_harness import run_sluice


def test_v_prints_version_line():
    rc, out, err = run_sluice(["-v"])
    assert rc == 0, err
    assert out.splitlines()[0].startswith("sluice version "), out


def test_vv_prints_build_options_and_limits():
    rc, out, err = run_sluice(["-vv"])
    assert rc == 0, err
    assert out.splitlines()[0].startswith("sluice version "), out
    assert "build options" in out.lower(), out
    assert "max threads" in out.lower(), out
