"""`server ... init-addr last,libc,none,<ip>` (and on default-server): a server whose host name
does not resolve at start-up stops the start unless init-addr says what to do. `none` starts
it without an address, in maintenance ("MAINT (resolution)"), and the CLI cannot give it one;
an IP gives it that address. The name used ("no..such") is refused by the resolver library
itself, so that no DNS query leaves the machine. HAProxy 3.5 refuses that name before any
resolution ("Can't create DNS resolution for server"); with "nosuch.invalid" instead (which
needs a resolver that answers), its texts and states are the ones expected here."""
from __future__ import annotations

import socket

import sluice_harness as h
from sluice_harness import HTTP_DEFAULTS, config_refused, free_port, run_sluice


def test_start_up_choices(cfg):
    base = f"{HTTP_DEFAULTS}\nbackend b\n"
    path = cfg(base + "    server s no..such:80\n")
    config_refused(path, f"[{path}:{h.line_of(path, 'server s')}] : 'server b/s' : could not "
                         "resolve address 'no..such'.")
    path = cfg(base + "    server s no..such:80 init-addr last\n")
    config_refused(path, "'server b/s' : no method found to resolve address 'no..such'.")
    config_refused(cfg(base + "    server s no..such:80 init-addr foo\n"),
                   "'server b/s' : 'init-addr' : unknown init-addr method 'foo', supported "
                   "methods are 'libc', 'last', 'none'..")
    for ok in ("    server s no..such:80 init-addr none\n",
               "    server s no..such:80 init-addr last,libc,10.1.2.3\n",
               "    default-server init-addr none\n    server s no..such:80\n",
               "    server s localhost:80 init-addr none\n"):
        rc, _, err = run_sluice(["-c", "-f", str(cfg(base + ok))])
        assert rc == 0, (ok, err)


def test_servers_without_address(cfg, sluice, short_tmp):
    port = free_port()
    sock = f"{short_tmp}/s.sock"
    text = f"""
global
    stats socket {sock} level admin
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    default_backend b
backend b
    server s no..such:80 init-addr none check
    server t no..such:80 init-addr libc,127.0.0.2
"""
    sluice(cfg(text), wait_ports=[port])
    rows = h.show_stat(sock)
    s, t = h.stat_row(rows, "b", "s"), h.stat_row(rows, "b", "t")
    assert (s["status"], s["addr"]) == ("MAINT (resolution)", ""), s
    assert (t["status"], t["addr"]) == ("no check", "127.0.0.2:80"), t
    state = h.cli(sock, "show servers state b").splitlines()
    line = next(l.split() for l in state if l.startswith("3 b 1 s "))
    assert (line[4], line[5], line[6]) == ("-", "0", "32"), line
    assert h.cli(sock, "set server b/s addr 127.0.0.1 port 9").strip() == (
        "Update for the current server address family is only supported through configuration "
        "file.")
    h.cli(sock, "set server b/s state ready")
    assert h.stat_row(h.show_stat(sock), "b", "s")["status"] == "MAINT (resolution)"
    # Traffic goes to t only (an unused address: the connection is refused, a 503).
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = c.recv(100)
    assert got.startswith(b"HTTP/1.1 503 "), got
    assert h.stat_row(h.show_stat(sock), "b", "t")["econ"] != "0"


STATE_HEAD = ("1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state "
              "srv_uweight srv_iweight srv_time_since_last_change srv_check_status "
              "srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id "
              "srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port "
              "srv_check_addr srv_agent_addr srv_agent_port\n")


def test_last_takes_the_address_of_the_server_state_file(cfg, sluice, short_tmp):
    # `last` is the address a server named by a host name had when the state was saved: it
    # wins over the methods after it (the default is last,libc), not over those before it, and
    # never over an address written as an IP. HAProxy 3.5 gives these states (with
    # "nosuch.invalid", see above); it does not compare srv_fqdn with the name (v).
    port = free_port()
    sock, state = f"{short_tmp}/s.sock", short_tmp / "state"
    lines = [("s", "127.0.0.5", "no..such", 80), ("t", "127.0.0.6", "localhost", 81),
             ("u", "127.0.0.7", "localhost", 82), ("v", "127.0.0.8", "other.name", 83),
             ("w", "127.0.0.9", "-", 84), ("x", "127.0.0.10", "no..such", 85),
             ("y", "-", "localhost", 86)]
    state.write_text(STATE_HEAD + "".join(
        f"3 b {i} {n} {a} 2 0 1 1 100 1 0 0 0 0 0 0 {f} {p} - 0 0 - - 0\n"
        for i, (n, a, f, p) in enumerate(lines, 1)))
    text = f"""
global
    stats socket {sock} level admin
    server-state-file {state}
{HTTP_DEFAULTS}
    load-server-state-from-file global
frontend f
    bind 127.0.0.1:{port}
    default_backend b
backend b
    server s no..such:80 init-addr last,none
    server t localhost:81
    server u localhost:82 init-addr libc,last
    server v localhost:83
    server w 127.0.0.1:84
    server x no..such:85 init-addr none,last
    server y localhost:86
"""
    path = cfg(text)
    sluice(path, wait_ports=[port])
    got = {l.split()[3]: (l.split()[4], l.split()[6], l.split()[17], l.split()[18])
           for l in h.cli(sock, "show servers state b").splitlines()
           if l.startswith("3 b ")}
    assert got == {"s": ("127.0.0.5", "0", "no..such", "80"),
                   "t": ("127.0.0.6", "0", "localhost", "81"),
                   "u": ("127.0.0.1", "0", "localhost", "82"),
                   "v": ("127.0.0.8", "0", "localhost", "83"),
                   "w": ("127.0.0.1", "0", "-", "84"),
                   "x": ("-", "32", "no..such", "85"),
                   "y": ("127.0.0.1", "0", "localhost", "86")}, got
    assert h.stat_row(h.show_stat(sock), "b", "s")["addr"] == "127.0.0.5:80"
    # -c reads the state file too: `init-addr last` alone passes with it, fails without it.
    rc, _, err = run_sluice(["-c", "-f", str(path)])
    assert rc == 0, err
    only_last = cfg(text.replace("init-addr last,none", "init-addr last"))
    rc, _, err = run_sluice(["-c", "-f", str(only_last)])
    assert rc == 0, err
    state.write_text(STATE_HEAD)
    rc, _, err = run_sluice(["-c", "-f", str(only_last)])
    assert rc != 0 and "'server b/s' : no method found to resolve address 'no..such'." in err, err
    # A broken file says so before that alert.
    state.write_text("1\n3 b 1 s 127.0.0.5\n")
    rc, _, err = run_sluice(["-c", "-f", str(only_last)])
    assert rc != 0 and "corrupted global server state file" in err, err
    assert err.index("corrupted") < err.index("no method found"), err
