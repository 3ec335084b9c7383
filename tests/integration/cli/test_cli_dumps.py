"""What the stats socket counts and lists: `show info` listeners (spec 2), disabled proxies
(3.3, 5), unknown-command suggestions (1.6) and `clear counters` (5)."""
from sluice_harness import (cli, echo_roundtrip, free_port, parse_show_info, show_stat,
                            stat_int, stat_row, wait_until)
from cli_util import start_with_admin_socket


BACKENDS = """
backend be
    server s1 127.0.0.1:9
    server s2 127.0.0.1:9
"""


def test_show_info_counts_stats_socket_listeners(cfg, sluice, short_tmp):
    port = free_port()
    other = str(short_tmp / "user.sock")
    _, sock = start_with_admin_socket(cfg, sluice, short_tmp,
                     extra_global=f"    stats socket {other} level user",
                     body=f"frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n"
                          + BACKENDS)
    info = parse_show_info(cli(sock, "show info"))
    # One frontend listener and two stats sockets; the jobs add this CLI connection.
    assert info["Listeners"] == "3"
    assert info["Jobs"] == "4"


def test_disabled_proxy_is_skipped(cfg, sluice, short_tmp):
    body = """
backend b_off
    disabled
    server x 127.0.0.1:9
backend b_on
    server y 127.0.0.1:9
"""
    _, sock = start_with_admin_socket(cfg, sluice, short_tmp, body=body)
    rows = show_stat(sock)
    assert [(r["pxname"], r["svname"]) for r in rows] == [("b_on", "y"), ("b_on", "BACKEND")]
    # The disabled proxy keeps its id (2): the next one is 3.
    assert stat_row(rows, "b_on", "y")["iid"] == "3"
    state = cli(sock, "show servers state").split("\n")
    assert [l.split()[1] for l in state[2:] if l] == ["b_on"]
    assert cli(sock, "show backend") == "# name\nb_on\n\n"
    assert cli(sock, "set server b_off/x state ready") == "Proxy is disabled.\n\n"
    assert cli(sock, "get weight b_off/x") == "Proxy is disabled.\n\n"
    assert cli(sock, "set server b_off/nope state ready") == "No such server.\n\n"


def _suggestions(text):
    lines = text.split("\n")
    return lines[1:-5]


def test_unknown_command_suggestions_per_keyword(cfg, sluice, short_tmp):
    _, sock = start_with_admin_socket(cfg, sluice, short_tmp)
    for typed in ("set foo", "set"):
        text = cli(sock, typed)
        assert text.startswith("Unknown command: 'set', but maybe"), text
        sug = _suggestions(text)
        assert 1 <= len(sug) <= 5, sug
        assert all(l.startswith("  set ") for l in sug), sug
    # HAProxy 3.5 lists get acl, get map, get var and get weight here.
    sug = _suggestions(cli(sock, "get foo"))
    assert [l.split()[1] for l in sug] == ["acl", "map", "var", "weight"], sug
    assert sug[0].startswith("  get acl <acl> <value> "), sug


def test_clear_counters(cfg, sluice, servers, short_tmp):
    e = servers.echo()
    port = free_port()
    body = f"""
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    server s1 127.0.0.1:{e.port}
"""
    _, sock = start_with_admin_socket(cfg, sluice, short_tmp, body=body)
    for _ in range(3):
        assert echo_roundtrip(port) == b"ping\n"
    wait_until(lambda: stat_int(stat_row(show_stat(sock), "fe", "FRONTEND"), "stot") == 3,
               timeout=5)
    fe = stat_row(show_stat(sock), "fe", "FRONTEND")
    assert stat_int(fe, "smax") >= 1 and stat_int(fe, "rate_max") >= 1
    # Maxima only: totals stay.
    assert cli(sock, "clear counters") == "\n"
    rows = show_stat(sock)
    fe, s1 = stat_row(rows, "fe", "FRONTEND"), stat_row(rows, "be", "s1")
    assert (fe["smax"], fe["rate_max"], s1["smax"]) == ("0", "0", "0")
    assert fe["stot"] == "3" and s1["stot"] == "3" and fe["conn_tot"] == "3"
    # `all` is admin only.
    assert "Permission denied" in cli(sock, "operator;clear counters all")
    assert cli(sock, "clear counters all") == "\n"
    rows = show_stat(sock)
    fe, s1, be = (stat_row(rows, "fe", "FRONTEND"), stat_row(rows, "be", "s1"),
                  stat_row(rows, "be", "BACKEND"))
    assert (fe["stot"], fe["conn_tot"], s1["stot"], be["stot"], s1["lbtot"]) == \
        ("0", "0", "0", "0", "0")
    assert s1["lastsess"] == "-1"
