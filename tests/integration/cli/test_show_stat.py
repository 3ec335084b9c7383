"""`show stat` CSV: framing, row order, counters."""
import pytest

from sluice_harness import (cli, cli_socat, connect, parse_show_stat, recv_all, stat_int,
                            stat_row, wait_until)

HEADER_START = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,"


@pytest.mark.parametrize("which", ["unix-admin", "tcp-user"])
def test_show_stat_framing_and_order(cli_setup, which):
    text = cli(cli_setup.sockets[which], "show stat")
    assert text.startswith(HEADER_START), text[:200]
    assert text.endswith(",\n\n"), repr(text[-40:])
    lines = text.split("\n")[:-2]
    ncommas = lines[0].count(",")
    for line in lines[1:]:
        assert line.count(",") == ncommas, f"row has {line.count(',')} commas, header {ncommas}: {line}"
    header, rows = parse_show_stat(text)
    assert header[:4] == ["pxname", "svname", "qcur", "qmax"]
    assert [(r["pxname"], r["svname"]) for r in rows] == [
        ("fe", "FRONTEND"),
        ("be", "s1"), ("be", "s2"), ("be", "BACKEND"),
        ("other", "FRONTEND"), ("other", "o1"), ("other", "BACKEND"),
    ]
    assert stat_row(rows, "be", "s1")["status"] == "UP" or stat_row(rows, "be", "s1")["status"] == "no check"


def test_show_stat_with_socat(cli_setup):
    text = cli_socat(cli_setup.admin, "show stat")
    assert text.startswith(HEADER_START)


def test_show_stat_counts_a_known_transfer(cli_setup):
    payload = b"z" * 1000
    with connect(cli_setup.port) as c:
        c.sendall(payload)
        import socket as _s
        c.shutdown(_s.SHUT_WR)
        assert recv_all(c) == payload   # the echo server closes after our FIN

    def settled():
        rows = parse_show_stat(cli(cli_setup.admin, "show stat"))[1]
        fe = stat_row(rows, "fe", "FRONTEND")
        be = stat_row(rows, "be", "BACKEND")
        ok = (stat_int(fe, "stot") == 1 and stat_int(be, "stot") == 1
              and stat_int(fe, "bin") == 1000 and stat_int(fe, "bout") == 1000
              and stat_int(be, "scur") == 0)
        return rows if ok else None
    rows = wait_until(settled, 3, message="show stat to count the transfer")
    fe, be = stat_row(rows, "fe", "FRONTEND"), stat_row(rows, "be", "BACKEND")
    assert (stat_int(be, "bin"), stat_int(be, "bout")) == (1000, 1000)
    servers = [stat_row(rows, "be", "s1"), stat_row(rows, "be", "s2")]
    assert sum(stat_int(s, "stot") for s in servers) == 1
    assert sum(stat_int(s, "bin") for s in servers) == 1000
    assert sum(stat_int(s, "bout") for s in servers) == 1000
    other = stat_row(rows, "other", "FRONTEND")
    assert stat_int(other, "stot") == 0
