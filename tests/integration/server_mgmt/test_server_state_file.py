"""server-state-file / load-server-state-from-file: a restart with the output of `show servers
state` saved before it keeps what the CLI and the checks had set (weights, maintenance, drain,
a server the configuration disables put back in service, a checked server DOWN, a port), as
HAProxy 3.5 does on the same configuration, messages included. This file passes unchanged
against HAProxy 3.5 (a -db wrapper as SLUICE_BIN)."""
from __future__ import annotations

from sluice_harness import cli, free_port, show_stat, stat_row, wait_until


def head(sock, state_line: str, port: int) -> str:
    return f"""
global
    stats socket {sock} level admin
    max-spread-checks 100ms
{state_line}
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
    load-server-state-from-file global
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
"""


def servers_block(live: int, dead: int) -> str:
    return f"""backend be
    server s1 127.0.0.1:{live} check inter 10s
    server s2 127.0.0.1:{live}
    server s3 127.0.0.1:{live} disabled
    server s4 127.0.0.1:{live} weight 3
    server s5 127.0.0.1:{dead} check inter 10s
    server s6 127.0.0.1:{live} disabled
backend other
    server o1 127.0.0.1:{live}
"""


def test_state_survives_a_restart(cfg, sluice, servers, short_tmp):
    sock = short_tmp / "stats.sock"
    state = short_tmp / "state"
    live, dead, port = servers.echo().port, free_port(), free_port()
    text = head(sock, f"    server-state-file {state}", port) + servers_block(live, dead)
    first = sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: stat_row(show_stat(str(sock)), "be", "s5")["status"] == "DOWN", 5)
    for cmd in ("set server be/s1 weight 5", "set server be/s1 state drain",
                "set server be/s2 state maint", "set server be/s3 state ready",
                f"set server be/s4 addr 127.0.0.1 port {live + 1}",
                "set server other/o1 weight 7"):
        cli(str(sock), cmd)
    dump = cli(str(sock), "show servers state")
    state.write_text(dump)
    first.stop()
    # srv_admin_state: s1 drained (8), s2 in forced maintenance (1), s3 disabled by the
    # configuration but made ready (CMAINT, 4, stays), s4 nothing set. s6 stays disabled (5):
    # no line for it after the restart, as in HAProxy.
    admin = {l.split()[3]: l.split()[6] for l in dump.splitlines() if l[:1].isdigit() and len(l.split()) > 18}
    assert (admin["s1"], admin["s2"], admin["s3"], admin["s4"]) == ("8", "1", "4", "0"), admin

    second = sluice(cfg(text.replace("backend other\n", "backend other\n    load-server-state-from-file none\n")),
                    wait_ports=[port], wait_unix=[sock])
    rows = {r["svname"]: r for r in show_stat(str(sock)) if r["pxname"] == "be"}
    got = {n: (rows[n]["status"], rows[n]["weight"]) for n in ("s1", "s2", "s3", "s4", "s5", "s6")}
    assert got == {"s1": ("DRAIN", "5"), "s2": ("MAINT", "1"), "s3": ("no check", "1"),
                   "s4": ("no check", "3"), "s5": ("DOWN", "1"), "s6": ("MAINT", "1")}, got
    # The port set at run time comes back, the configured address stays.
    saved = {l.split()[3]: l.split() for l in cli(str(sock), "show servers state").splitlines()
             if l[:1].isdigit() and len(l.split()) > 18}
    assert (saved["s4"][4], saved["s4"][18]) == ("127.0.0.1", str(live + 1)), saved["s4"]
    # A backend that says none keeps its configuration.
    assert stat_row(show_stat(str(sock)), "other", "o1")["weight"] == "1"
    messages = [l.split(") : ", 1)[1] for l in second.stderr().splitlines() if "server-state" in l
                or "leaving forced maintenance" in l]
    tail = "0 sessions active, 0 requeued, 0 remaining in queue."
    assert messages == [
        f"Server be/s2 is DOWN, changed from server-state after a reload. 2 active and 0 backup "
        f"servers left. {tail}",
        "Server be/s3 is UP/READY (leaving forced maintenance).",
        f"Server be/s5 is DOWN, changed from server-state after a reload. 2 active and 0 backup "
        f"servers left. {tail}",
    ], messages


def test_bad_state_files(cfg, sluice, servers, short_tmp):
    """A file that is not version 1, or with a line that is not a server's state, applies
    nothing; a bad value skips its server only; a file that is not there (the first start) is
    a notice."""
    sock = short_tmp / "stats.sock"
    live, port = servers.echo().port, free_port()
    base = short_tmp
    cases = {
        "v2": ("2\n", "config: Can't get version of the global server state file '{}'."),
        "short": ("1\n# be_id ...\n3 be 4 s4 127.0.0.1 2 0 7 3 0 1 0 0 0 0 0 0 - 1 - 0 0 - - 0\n"
                  "3 be 1 s1 127.0.0.1 x 0 1 1\n",
                  "config: corrupted global server state file '{}' at line 3."),
        "value": ("1\n3 be 4 s4 127.0.0.1 x 0 7 3 0 1 0 0 0 0 0 0 - 1 - 0 0 - - 0\n",
                  "server-state application failed for server 'be/s4', invalid srv_op_state "
                  "value 'x'"),
        "missing": (None, "config: Can't open global server state file '{}': No such file or "
                          "directory"),
    }
    for name, (content, message) in cases.items():
        path = base / name
        if content is not None:
            path.write_text(content)
        text = (head(sock, f"    server-state-base {base}\n    server-state-file {name}", port)
                + servers_block(live, free_port()))
        s = sluice(cfg(text, f"{name}.cfg"), wait_ports=[port], wait_unix=[sock])
        assert stat_row(show_stat(str(sock)), "be", "s4")["weight"] == "3", name
        assert message.format(path) in s.stderr(), (name, s.stderr())
        s.stop()


def test_local_file_and_messages(cfg, sluice, servers, short_tmp):
    """load-server-state-from-file local reads server-state-file-name (by default the
    backend's name) under server-state-base; HAProxy 3.5's messages for the keywords."""
    sock = short_tmp / "stats.sock"
    live, port = servers.echo().port, free_port()
    (short_tmp / "be").write_text(
        "1\n3 be 4 s4 127.0.0.1 2 0 9 3 0 1 0 0 0 0 0 0 - 1 - 0 0 - - 0\n")
    (short_tmp / "mine").write_text(
        "1\n4 other 1 o1 127.0.0.1 2 1 1 1 0 1 0 0 0 0 0 0 - 1 - 0 0 - - 0\n")
    text = (head(sock, f"    server-state-base {short_tmp}", port)
            .replace("load-server-state-from-file global", "load-server-state-from-file local")
            + servers_block(live, free_port()).replace(
                "backend other\n", "backend other\n    server-state-file-name mine\n"))
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
    assert stat_row(show_stat(str(sock)), "be", "s4")["weight"] == "9"
    assert stat_row(show_stat(str(sock)), "other", "o1")["status"] == "MAINT"
