"""How many kernel sockets each bind address gets, and which threads serve them
(shard modes, groups, several addresses and port ranges, UNIX and stats sockets), as
docs/threads-and-shards.md describes."""
import pytest

from sluice_harness import (DEFAULTS, _listening_inodes, _unix_listening_inodes, cli, free_port,
                            free_port_range, run_sluice)


def conf(global_extra, bind_line, sock=None):
    stats = f"    stats socket {sock} level admin\n" if sock else ""
    return f"""
global
{global_extra}
{stats}
{DEFAULTS}
listen px
{bind_line}
    server s1 127.0.0.1:9
"""


def listeners(sock):
    out = cli(str(sock), "show listeners")
    rows = [l.split() for l in out.splitlines() if l and not l.startswith("#")]
    return rows


@pytest.mark.parametrize("global_extra,bind_opts,sockets,threads", [
    # 16: two groups, default by-group: one socket per group, served by that group's threads
    ("    nbthread 4\n    thread-groups 2", "", 2, ["1-2", "3-4"]),
    # 17: by-process: one socket for every thread
    ("    nbthread 4\n    thread-groups 2\n    tune.listener.default-shards by-process", "", 1, ["1-4"]),
    # 18: by-thread: one socket per thread
    ("    nbthread 4\n    thread-groups 2", "shards by-thread", 4, ["1", "2", "3", "4"]),
    # 19: numeric split across groups: thread i -> shard floor(i*3/8)
    ("    nbthread 8\n    thread-groups 2", "shards 3", 3, ["1-3", "4-6", "7-8"]),
    # 20: more shards than threads: trimmed, silently
    ("    nbthread 4", "shards 5", 4, ["1", "2", "3", "4"]),
    # 21: unequal groups (3,3,2,2): strictly one socket per group (HAProxy lets one straddle)
    ("    nbthread 10\n    thread-groups 4", "", 4, ["1-3", "4-6", "7-8", "9-10"]),
    # 22: one group: by-group is by-process
    ("    nbthread 4", "", 1, ["1-4"]),
    # bind `thread` restricts the set: absolute 3-6 over 2x4 threads -> one shard per group
    ("    nbthread 8\n    thread-groups 2", "thread 3-6", 2, ["3-4", "5-6"]),
    ("    nbthread 8\n    thread-groups 2", "thread 2/all", 1, ["5-8"]),
])
def test_socket_count_per_address(cfg, sluice, short_tmp, global_extra, bind_opts, sockets, threads):
    port, sock = free_port(), short_tmp / "s.sock"
    s = sluice(cfg(conf(global_extra, f"    bind 127.0.0.1:{port} {bind_opts}", sock)),
               wait_ports=[port], wait_unix=[sock])
    assert len(_listening_inodes(port)) == sockets
    rows = listeners(sock)
    assert [r[6] for r in rows] == threads, rows
    # The inodes CLI reports are the kernel's sockets for that port.
    assert {r[4] for r in rows} == _listening_inodes(port)
    # No sharding warning. A machine with fewer CPUs than these threads gets the (separate)
    # CPU-count warning, which says nothing about sockets.
    warnings = [l for l in s.stderr().splitlines()
                if "WARNING" in l and "threads running on a total of" not in l]
    assert not warnings, s.stderr()


def test_noreuseport_falls_back_to_one_socket(cfg, sluice, short_tmp):
    # 23: noreuseport + 2 groups + default: one socket, no warning; with `shards 4`: a warning
    # naming the protocol.
    p1, p2, sock = free_port(), free_port(), short_tmp / "s.sock"
    text = conf("    nbthread 4\n    thread-groups 2\n    noreuseport",
                f"    bind 127.0.0.1:{p1}\n    bind 127.0.0.1:{p2} shards 4", sock)
    s = sluice(cfg(text), wait_ports=[p1, p2], wait_unix=[sock])
    assert len(_listening_inodes(p1)) == 1
    assert len(_listening_inodes(p2)) == 1
    err = s.stderr()
    assert err.count("Disabling sharding for listener in proxy 'px' because SO_REUSEPORT is "
                     "disabled for tcpv4 protocol.") == 1, err
    rows = listeners(sock)
    assert all(r[-1] == "fallback" for r in rows if r[1].endswith(str(p2))), rows


def test_dash_dR_disables_reuseport(cfg, sluice, short_tmp):
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(conf("    nbthread 4\n    thread-groups 2", f"    bind 127.0.0.1:{port}", sock)),
           wait_ports=[port], wait_unix=[sock], extra_args=["-dR"])
    assert len(_listening_inodes(port)) == 1


def test_unix_socket_never_shards(cfg, sluice, short_tmp):
    # 25: a UNIX socket cannot be multi-bound: `shards 4` warns, by-group is silent.
    a, b, sock = short_tmp / "a.sock", short_tmp / "b.sock", short_tmp / "s.sock"
    text = conf("    nbthread 4\n    thread-groups 2", f"    bind unix@{a} shards 4\n    bind {b}", sock)
    s = sluice(cfg(text), wait_unix=[a, b, sock])
    assert len(_unix_listening_inodes(str(a))) == 1
    assert len(_unix_listening_inodes(str(b))) == 1
    err = s.stderr()
    assert "because SO_REUSEPORT is disabled for unix_stream protocol." in err, err
    assert err.count("Disabling sharding") == 1, err


def test_each_address_of_a_bind_line_is_sharded(cfg, sluice, short_tmp):
    # 26 and 27: comma lists and port ranges are sharded per port.
    base = free_port_range(3)
    other = free_port()
    sock = short_tmp / "s.sock"
    text = conf("    nbthread 4\n    thread-groups 2",
                f"    bind 127.0.0.1:{base}-{base + 2},127.0.0.1:{other}", sock)
    sluice(cfg(text), wait_ports=[base, base + 1, base + 2, other], wait_unix=[sock])
    for p in (base, base + 1, base + 2, other):
        assert len(_listening_inodes(p)) == 2, p


def test_stats_socket_is_never_sharded(cfg, sluice):
    # The CLI is a special listener: one socket whatever the defaults (sluice's rule).
    port, cli_port = free_port(), free_port()
    text = f"""
global
    nbthread 4
    thread-groups 2
    tune.listener.default-shards by-thread
    stats socket ipv4@127.0.0.1:{cli_port} level admin
{DEFAULTS}
listen px
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:9
"""
    sluice(cfg(text), wait_ports=[port, cli_port])
    assert len(_listening_inodes(cli_port)) == 1
    assert len(_listening_inodes(port)) == 4
    assert "sluice" in cli(("127.0.0.1", cli_port), "show info")


def test_show_info_reports_threads_groups_and_listeners(cfg, sluice, short_tmp):
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(conf("    nbthread 4\n    thread-groups 2", f"    bind 127.0.0.1:{port}", sock)),
           wait_ports=[port], wait_unix=[sock])
    info = dict(l.split(": ", 1) for l in cli(str(sock), "show info").splitlines() if ": " in l)
    assert info["Nbthread"] == "4"
    assert info["NbThreadGroups"] == "2"
    # The bind line's 2 (one per group) and the stats socket's 2 (one per group, HAProxy's
    # count for a socket shared by the groups: one listener per group).
    assert info["Listeners"] == "4"


def test_explain_prints_the_plan(cfg):
    port = free_port()
    path = cfg(conf("    nbthread 8\n    thread-groups 2", f"    bind 127.0.0.1:{port} shards 3"))
    rc, out, err = run_sluice(["-c", "-f", str(path), "--explain"])
    assert rc == 0, err
    assert "threads: 8 in 2 groups" in out, out
    assert "group 1: threads 1-4" in out and "group 2: threads 5-8" in out, out
    assert f"127.0.0.1:{port}: 3 sockets" in out, out
    assert "shard 2: groups 1-2, threads 4-6" in out, out


def test_thread_set_errors_name_the_bind_line(cfg):
    path = cfg(conf("    nbthread 4", "    bind 127.0.0.1:1 thread 2/all"))
    rc, out, err = run_sluice(["-c", "-f", str(path)])
    assert rc == 1
    assert "proxy 'px': 'thread' directive references non-existing thread group 2 in " \
           "'bind 127.0.0.1:1 thread 2/all' at [" in err, err


def test_topology_gives_one_group_per_l3_cache(cfg):
    # Case 14 with a fake sysfs of 8 L3 domains x 6 CPUs: the default policy makes 8 groups of
    # 6 threads, each bound to its CCX, and by-group gives 8 sockets.
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "unit" / "core" / "sysfs" / "epyc-8ccx"
    port = free_port()
    path = cfg(f"""
global
{DEFAULTS}
listen px
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:9
""".replace("global\ndefaults", "global\n\ndefaults"))
    rc, out, err = run_sluice(["-c", "-f", str(path), "--explain"], env={"SLUICE_SYSFS_ROOT": str(root)})
    assert rc == 0, err
    assert "threads: 48 in 8 groups" in out, out
    assert "thread 7 -> cpus" in out, out
    assert f"127.0.0.1:{port}: 8 sockets" in out, out


def test_more_threads_than_cpus_warns(cfg):
    # After mapping, as in HAProxy: threads that must share CPUs are worth a warning, counted
    # against the usable CPUs (a fake sysfs of 48 CPUs), or against the CPUs of a cpu-map that
    # binds every thread.
    from pathlib import Path
    env = {"SLUICE_SYSFS_ROOT": str(Path(__file__).resolve().parents[2] / "unit" / "core" /
                                    "sysfs" / "epyc-8ccx")}
    def check(global_extra):
        path = cfg(conf(global_extra, "    bind 127.0.0.1:1"))
        rc, out, err = run_sluice(["-c", "-f", str(path)], env=env)
        assert rc == 0, err
        return err
    err = check("    nbthread 64\n    thread-groups 2")
    assert "[WARNING]" in err and "enables 64 threads running on a total of 48 CPUs" in err, err
    err = check("    nbthread 4\n    cpu-map 1/all 0-1")
    assert "binds 4 threads to a total of 2 CPUs via cpu-map directives" in err, err
    assert "WARNING" not in check("    nbthread 48"), "48 threads on 48 CPUs"
    assert "WARNING" not in check("    nbthread 4\n    cpu-map auto:1/1-4 0-3")


def test_bind_name_labels_its_sockets(cfg, sluice, short_tmp):
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(conf("    nbthread 4\n    thread-groups 2", f"    bind 127.0.0.1:{port} name web", sock)),
           wait_ports=[port], wait_unix=[sock])
    rows = listeners(sock)
    assert [r[9] for r in rows] == ["web", "web"], rows
    assert [r[10] for r in rows] == ["OPEN", "OPEN"], rows


def test_bind_id_numbers_the_lines_sockets_and_collisions_are_refused(cfg, sluice, short_tmp):
    # Case 31: a line's `id` goes to its first socket, its other shards take the
    # next ids; lines without an id take the lowest ids nobody claimed.
    p1, p2, p3, sock = free_port(), free_port(), free_port(), short_tmp / "s.sock"
    text = conf("    nbthread 4",
                f"    bind 127.0.0.1:{p1} shards by-thread id 10\n"
                f"    bind 127.0.0.1:{p2} id 20\n"
                f"    bind 127.0.0.1:{p3} shards 2", sock)
    sluice(cfg(text), wait_ports=[p1, p2, p3], wait_unix=[sock])
    names = {r[1]: [] for r in listeners(sock)}
    for r in listeners(sock):
        names[r[1]].append(r[9])
    assert names == {f"127.0.0.1:{p1}": ["sock-10", "sock-11", "sock-12", "sock-13"],
                     f"127.0.0.1:{p2}": ["sock-20"],
                     f"127.0.0.1:{p3}": ["sock-1", "sock-2"]}, names

    # The second line's id 12 falls inside the first line's block (10..13): refused at start.
    bad = cfg(conf("    nbthread 4",
                   f"    bind 127.0.0.1:{free_port()} shards by-thread id 10\n"
                   f"    bind 127.0.0.1:{free_port()} id 12"), "bad.cfg")
    rc, _, err = run_sluice(["-f", str(bad)])
    assert rc != 0
    assert "listener id 12 is also given to a socket of the bind line at" in err, err
    assert f"[{bad}:" in err, err
