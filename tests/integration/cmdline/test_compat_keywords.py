"""Keywords of real HAProxy configurations: accepted where sluice's design makes them no-ops
(splicing), refused with HAProxy's messages or a reason where it cannot do them, checked as
HAProxy 3.5 checks them."""
from sluice_harness import DEFAULTS, HTTP_DEFAULTS, free_port, run_sluice


def check(cfg, text):
    return run_sluice(["-c", "-f", str(cfg(text))])


def test_splicing_tunables_are_checked_and_change_nothing(cfg):
    rc, out, err = check(cfg, f"""
global
    nosplice
    maxpipes 1024
    tune.pipesize 65536
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{free_port()}
    option splice-auto
    http-request return status 200
""")
    assert rc == 0 and "[WARNING]" not in err, err
    rc, _, err = check(cfg, "global\n    maxpipes lots\n")
    assert rc == 1 and "'maxpipes' expects an integer argument, got 'lots'." in err, err
    rc, _, err = check(cfg, "global\n    nosplice now\n")
    assert rc == 1 and "'nosplice' cannot handle unexpected argument 'now'." in err, err


def test_duplicate_proxy_ids_are_reported_as_haproxy_does(cfg):
    text = f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{free_port()}
    id 7
    default_backend b
backend b
    id 7
"""
    lines = text.split("\n")
    # Line numbers of the file written, which starts at the text's second line.
    fe_line = lines.index("frontend f")
    id_line = len(lines) - 1 - lines[::-1].index("    id 7")
    rc, _, err = check(cfg, text)
    assert rc == 1
    assert (f":{id_line}]: backend b reuses same custom id as frontend f (declared at ") in err, err
    assert f":{fe_line}).\n" in err, err


def test_use_server_without_a_condition_is_an_error_even_in_a_frontend(cfg):
    rc, _, err = check(cfg, f"""
{HTTP_DEFAULTS}
backend b
    server s1 127.0.0.1:1
frontend f
    bind 127.0.0.1:{free_port()}
    use-server s1
    default_backend b
""")
    assert rc == 1
    assert "'use-server' ignored because frontend 'f' has no backend capability." in err, err
    assert "'use-server' requires either 'if' or 'unless' followed by a condition." in err, err


def test_an_http_reply_status_missing_from_its_http_errors_section_warns(cfg, tmp_path):
    page = tmp_path / "503.http"
    page.write_text("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n")
    rc, _, err = check(cfg, f"""
{HTTP_DEFAULTS}
http-errors myerrs
    errorfile 503 {page}
frontend f
    bind 127.0.0.1:{free_port()}
    http-request deny deny_status 404 errorfiles myerrs if {{ path /a }}
    http-request return status 503 errorfiles myerrs
""")
    assert rc == 0, err
    assert ("Proxy 'f': status '404' referenced by an http reply not declared in http-errors "
            "section 'myerrs'.") in err, err
    assert "status '503'" not in err, err


def test_chksize_and_pattern_cache_size(cfg):
    rc, _, err = check(cfg, "global\n    tune.chksize 100\n")
    assert rc == 1
    assert "option 'tune.chksize' is not supported any more (tune.bufsize is used instead)." in err, err
    rc, _, err = check(cfg, "global\n    tune.pattern.cache-size 10000\n")
    assert rc == 0 and "[WARNING]" not in err, err


def no_new_privs(pid: int) -> str:
    with open(f"/proc/{pid}/status") as f:
        return next(l.split()[1] for l in f if l.startswith("NoNewPrivs:"))


def test_no_new_privileges_unless_insecure_setuid_wanted(cfg, sluice):
    for extra, want in (("", "1"), ("    insecure-setuid-wanted\n", "0")):
        port = free_port()
        s = sluice(cfg(f"global\n{extra}{HTTP_DEFAULTS}\nfrontend f\n    bind 127.0.0.1:{port}\n"
                       "    http-request return status 200\n", f"p{want}.cfg"), wait_ports=[port])
        assert no_new_privs(s.pid) == want, extra
        s.stop()


def socket_buffers(ss_filter: str) -> list[tuple[int, int]]:
    """(rb, tb): the receive and send buffers of the sockets `ss` lists for the filter."""
    import re
    import subprocess
    out = subprocess.run(["ss", "-tanm"] + ss_filter.split(), capture_output=True, text=True).stdout
    return [(int(r), int(t)) for r, t in re.findall(r"\brb(\d+),t\d+,tb(\d+)", out)]


def test_socket_buffer_tunables(cfg, sluice, echo):
    import socket
    port = free_port()
    # Sizes the system would not pick itself; the kernel doubles what it is given.
    sluice(cfg(f"""
global
    tune.rcvbuf.client 40000
    tune.sndbuf.client 30000
    tune.rcvbuf.server 25000
    tune.sndbuf.server 35000
{DEFAULTS}
listen app
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{echo.port}
"""), wait_ports=[port])
    assert socket_buffers(f"state listening sport = :{port}") == [(80000, 60000)]
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"x\n")
        assert c.recv(10) == b"x\n"
        # The accepted socket inherited the listener's; the server-side one got its own.
        assert socket_buffers(f"state established sport = :{port}") == [(80000, 60000)]
        assert socket_buffers(f"state established dport = :{echo.port}") == [(50000, 70000)]
    rc, _, err = check(cfg, "global\n    tune.rcvbuf.client lots\n")
    assert rc == 1 and "'tune.rcvbuf.client' expects an integer argument, got 'lots'." in err, err


def test_contstats_counters_move_while_the_connection_is_open(cfg, sluice, echo, short_tmp):
    import socket
    from sluice_harness import cli, parse_show_stat, wait_until
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(f"""
global
    stats socket {sock} level admin
{DEFAULTS}
listen app
    bind 127.0.0.1:{port}
    option contstats
    server s1 127.0.0.1:{echo.port}
"""), wait_ports=[port], wait_unix=[sock])

    def frontend_bytes():
        _, rows = parse_show_stat(cli(sock, "show stat"))
        fe = next(r for r in rows if r["pxname"] == "app" and r["svname"] == "FRONTEND")
        return int(fe["bin"]), int(fe["bout"])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"x" * 1000 + b"\n")
        got = b""
        while len(got) < 1001:
            got += c.recv(4096)
        # The tunnel is still open: what it carried is counted already, as contstats asks.
        wait_until(lambda: frontend_bytes() == (1001, 1001), 5, message="the bytes counted")
