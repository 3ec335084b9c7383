"""Several `-f`, and `-f <dir>` reading its *.cfg files in byte order."""
from sluice_harness import DEFAULTS, cli, free_port, run_sluice, write_config


def test_several_f_files_share_one_namespace(tmp_path):
    p1, s1 = free_port(), free_port()
    g = write_config(tmp_path, f"global\n    nbthread 1\n{DEFAULTS}", "g.cfg")
    fe = write_config(tmp_path, f"""
        frontend fe
            bind 127.0.0.1:{p1}
            default_backend be
    """, "fe.cfg")
    be = write_config(tmp_path, f"""
        backend be
            server s1 127.0.0.1:{s1}
    """, "be.cfg")
    rc, out, err = run_sluice(["-c", "-f", str(g), "-f", str(fe), "-f", str(be)])
    assert (rc, out, err) == (0, "", "")
    # Without the file holding the backend, default_backend cannot be resolved.
    rc, out, err = run_sluice(["-c", "-f", str(g), "-f", str(fe)])
    assert rc == 1 and "[ALERT]" in err


def test_directory_skips_non_cfg_and_hidden_files(tmp_path):
    d = tmp_path / "conf.d"
    write_config(d, f"global\n    nbthread 1\n{DEFAULTS}", "00-global.cfg")
    write_config(d, f"listen a\n    bind 127.0.0.1:{free_port()}\n    server s 127.0.0.1:{free_port()}\n", "a.cfg")
    write_config(d, "this is not a configuration\n", "notes.txt")
    write_config(d, "neither is this\n", ".hidden.cfg")
    write_config(d, "nor this\n", "a.cfg.bak")
    rc, out, err = run_sluice(["-c", "-f", str(d) + "/"])
    assert (rc, out, err) == (0, "", "")


def test_directory_files_load_in_byte_order(tmp_path, sluice, short_tmp):
    d = tmp_path / "conf.d"
    sock = short_tmp / "stats.sock"
    write_config(d, f"global\n    stats socket {sock} level admin\n{DEFAULTS}", "00-global.cfg")
    # Byte order: "10" < "A" < "_" < "a" < "b"; creation order differs on purpose.
    for name in ("b", "a", "_", "A", "10"):
        write_config(d, f"backend be_{name}\n    server s 127.0.0.1:{free_port()}\n", f"{name}.cfg")
    s = sluice(str(d), wait_unix=[sock])
    lines = cli(str(sock), "show backend").splitlines()
    assert lines[0] == "# name"
    assert [l for l in lines[1:] if l] == ["be_10", "be_A", "be__", "be_a", "be_b"]
    assert s.stop() == 0
