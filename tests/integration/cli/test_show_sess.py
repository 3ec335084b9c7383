"""`show sess`, `shutdown session`, `shutdown sessions server` and `clear counters server`
(spec cli-and-stats.md 5) on a two-thread sluice: every worker lists its own sessions."""
import re

from sluice_harness import (cli, connect, parse_show_stat, recv_exact, stat_int, stat_row,
                            wait_until)

LINE = re.compile(r"^(0x[0-9a-f]+): proto=(\S+) src=(\S+) fe=(\S+) be=(\S+) srv=(\S+) ")


def sessions(addr):
    """{id: (src, fe, be, srv)} from `show sess`."""
    text = cli(addr, "show sess")
    assert text.endswith("\n\n"), repr(text)
    out = {}
    for line in text.strip("\n").split("\n"):
        m = LINE.match(line)
        assert m, line
        out[m.group(1)] = (m.group(3), m.group(4), m.group(5), m.group(6))
    return out


def open_clients(port, n):
    """n established connections through fe, each proven by an echoed byte."""
    socks = []
    for i in range(n):
        s = connect(port)
        s.sendall(b"x")
        assert recv_exact(s, 1) == b"x"
        socks.append(s)
    return socks


def by_source(addr, socks):
    """The `show sess` id of each client socket, found by its source address."""
    listed = sessions(addr)
    ids = {}
    for s in socks:
        src = "127.0.0.1:%d" % s.getsockname()[1]
        match = [sid for sid, v in listed.items() if v[0] == src]
        assert len(match) == 1, (src, listed)
        ids[s] = match[0]
    return ids, listed


def closed_by_peer(sock, timeout=5.0):
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_lists_every_session_of_every_thread(cli_setup):
    socks = open_clients(cli_setup.port, 6)
    try:
        ids, listed = by_source(cli_setup.admin, socks)
        for sid in ids.values():
            src, fe, be, srv = listed[sid]
            assert (fe, be) == ("fe", "be") and srv in ("s1", "s2"), listed[sid]
        # The asking CLI connection is listed too, with HAProxy's GLOBAL frontend.
        own = [v for v in listed.values() if v[1] == "GLOBAL"]
        assert own and own[0][0].startswith("unix:"), listed
        assert len(listed) == 7, listed
        # multi-queue hands held connections to the less loaded thread: both workers answer.
        text = cli(cli_setup.admin, "show sess")
        tids = {m.group(1) for m in re.finditer(r" fe=fe .* tid=(\d+) ", text)}
        assert tids == {"1", "2"}, text
    finally:
        for s in socks:
            s.close()
    wait_until(lambda: len(sessions(cli_setup.admin)) == 1, timeout=5)


def test_detail_of_one_session(cli_setup):
    socks = open_clients(cli_setup.port, 1)
    try:
        ids, listed = by_source(cli_setup.admin, socks)
        sid = ids[socks[0]]
        text = cli(cli_setup.admin, f"show sess {sid}")
        lines = text.split("\n")
        assert lines[0].startswith(f"{sid}: [") and "source=" + listed[sid][0] in lines[0]
        assert any(l.startswith("  frontend=fe (id=") for l in lines), text
        assert any(l.startswith("  backend=be (id=") for l in lines), text
        assert any(l.startswith("  server=" + listed[sid][3] + " (id=") for l in lines), text
        assert text.endswith("\n\n") and "\n\n" not in text[:-2], repr(text)
        assert cli(cli_setup.admin, "show sess 0x10") == "Session not found.\n\n"
        assert cli(cli_setup.admin, "show sess nothex") == \
            "Session pointer expected (use 'show sess').\n\n"
        assert cli(cli_setup.admin, "show sess help").startswith("Usage: show sess")
    finally:
        socks[0].close()


def test_shutdown_session_closes_that_one(cli_setup):
    socks = open_clients(cli_setup.port, 4)
    try:
        ids, _ = by_source(cli_setup.admin, socks)
        victim = socks[1]
        assert cli(cli_setup.admin, f"shutdown session {ids[victim]}") == "\n"
        assert closed_by_peer(victim)
        left = sessions(cli_setup.admin)
        assert ids[victim] not in left
        for s in socks:
            if s is not victim:
                assert ids[s] in left
                s.sendall(b"y")
                assert recv_exact(s, 1) == b"y"
        assert cli(cli_setup.admin, f"shutdown session {ids[victim]}") == \
            "No such session (use 'show sess').\n\n"
        assert cli(cli_setup.admin, "shutdown session") == \
            "Session pointer expected (use 'show sess').\n\n"
        # Admin only.
        assert cli(cli_setup.user, f"shutdown session {ids[socks[0]]}") == "Permission denied\n\n"
        socks[0].sendall(b"w")
        assert recv_exact(socks[0], 1) == b"w"
    finally:
        for s in socks:
            s.close()


def test_shutdown_sessions_server(cli_setup):
    socks = open_clients(cli_setup.port, 6)
    try:
        ids, listed = by_source(cli_setup.admin, socks)
        on_s1 = [s for s in socks if listed[ids[s]][3] == "s1"]
        on_s2 = [s for s in socks if listed[ids[s]][3] == "s2"]
        assert on_s1 and on_s2, listed   # roundrobin
        assert cli(cli_setup.admin, "shutdown sessions server be/s1") == "\n"
        for s in on_s1:
            assert closed_by_peer(s)
        for s in on_s2:
            s.sendall(b"z")
            assert recv_exact(s, 1) == b"z"
        assert cli(cli_setup.admin, "shutdown sessions server be/nope") == "No such server.\n\n"
    finally:
        for s in socks:
            s.close()


def test_clear_counters_server(cli_setup):
    for s in open_clients(cli_setup.port, 4):
        s.close()

    def stot(name):
        _, rows = parse_show_stat(cli(cli_setup.admin, "show stat"))
        return stat_int(stat_row(rows, "be", name), "stot")

    wait_until(lambda: stot("s1") == 2 and stot("s2") == 2, timeout=5)
    assert cli(cli_setup.admin, "clear counters server be/s1") == "Server counters cleared.\n\n"
    assert stot("s1") == 0 and stot("s2") == 2
    assert cli(cli_setup.user, "clear counters server be/s2") == "Permission denied\n\n"
    assert stot("s2") == 2
