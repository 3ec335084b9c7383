"""`show info` through every kind of stats socket."""
import pytest

from sluice_harness import cli, cli_socat, echo_roundtrip, parse_show_info, wait_until


@pytest.mark.parametrize("which", ["unix-admin", "tcp-user", "fd-admin"])
def test_show_info_fields(cli_setup, which):
    text = cli(cli_setup.sockets[which], "show info")
    lines = text.split("\n")
    assert lines[0].startswith("Name: "), text[:200]
    assert text.endswith("\n\n"), repr(text[-50:])
    info = parse_show_info(text)
    assert info["Pid"] == str(cli_setup.proc.pid)
    assert info["Nbthread"] == "2"
    for name in ("Version", "Uptime_sec", "Maxconn", "CurrConns", "CumConns"):
        assert name in info, f"{name} missing from show info"
    for line in lines[:-2]:
        assert ": " in line, f"bad show info line {line!r}"


def test_show_info_with_socat(cli_setup):
    info = parse_show_info(cli_socat(cli_setup.admin, "show info"))
    assert info["Pid"] == str(cli_setup.proc.pid)


def test_show_info_counts_connections(cli_setup):
    before = int(parse_show_info(cli(cli_setup.admin, "show info"))["CumConns"])
    for _ in range(3):
        assert echo_roundtrip(cli_setup.port) == b"ping\n"
    # CumConns may also count CLI connections, so only a lower bound is exact.
    wait_until(lambda: int(parse_show_info(cli(cli_setup.admin, "show info"))["CumConns"]) >= before + 3,
               3, message="CumConns to count 3 connections")


def test_show_info_curr_conns_sees_open_connection(cli_setup):
    from sluice_harness import connect, recv_exact
    with connect(cli_setup.port) as c:
        c.sendall(b"x\n")
        assert recv_exact(c, 2) == b"x\n"
        wait_until(lambda: int(parse_show_info(cli(cli_setup.admin, "show info"))["CurrConns"]) >= 1,
                   3, message="CurrConns >= 1")
    wait_until(lambda: int(parse_show_info(cli(cli_setup.admin, "show info"))["CurrConns"]) == 0,
               3, message="CurrConns back to 0")
