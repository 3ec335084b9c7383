"""`-c`: check the configuration and exit (spec config-language.md section 6)."""
from sluice_harness import DEFAULTS, free_port, line_of, run_sluice


def valid_config(cfg):
    return cfg(f"""
        global
            nbthread 2
        {DEFAULTS}
        listen app
            bind 127.0.0.1:{free_port()}
            server s1 127.0.0.1:{free_port()}
    """)


def test_valid_config_is_silent(cfg):
    rc, out, err = run_sluice(["-c", "-f", str(valid_config(cfg))])
    assert (rc, out, err) == (0, "", "")


def test_valid_config_with_V_says_valid(cfg):
    rc, out, err = run_sluice(["-c", "-V", "-f", str(valid_config(cfg))])
    assert rc == 0, err
    assert "Configuration file is valid" in out


def test_error_names_file_and_line(cfg):
    path = cfg(f"""
        global
            nbthread 2
            frobnicate 12
        {DEFAULTS}
    """)
    rc, out, err = run_sluice(["-c", "-f", str(path)])
    assert rc == 1
    assert "[ALERT]" in err
    assert f"parsing [{path}:{line_of(path, 'frobnicate')}]" in err, err


def test_unknown_keyword_is_named(cfg):
    path = cfg(f"""
        {DEFAULTS}
        listen app
            bind 127.0.0.1:{free_port()}
            fancyknob on
            server s1 127.0.0.1:{free_port()}
    """)
    rc, out, err = run_sluice(["-c", "-f", str(path)])
    assert rc == 1
    assert "fancyknob" in err, err
    assert f"{path}:{line_of(path, 'fancyknob')}" in err, err


def test_mode_http_is_valid_and_other_modes_are_refused(cfg):
    path = cfg(f"""
        {DEFAULTS}
        listen web
            mode http
            bind 127.0.0.1:{free_port()}
            server s1 127.0.0.1:{free_port()}
    """)
    rc, out, err = run_sluice(["-c", "-f", str(path)])
    assert rc == 0, (out, err)
    path = cfg(f"""
        {DEFAULTS}
        listen web
            mode spop
            bind 127.0.0.1:{free_port()}
            server s1 127.0.0.1:{free_port()}
    """, "spop.cfg")
    rc, out, err = run_sluice(["-c", "-f", str(path)])
    assert rc == 1, (out, err)
    assert "[ALERT]" in err
    assert "'mode spop' is not supported" in err, err
    assert f"{path}:{line_of(path, 'mode spop')}" in err, err


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.cfg"
    rc, out, err = run_sluice(["-c", "-f", str(missing)])
    assert rc == 1
    assert "Cannot open configuration file" in err, err
    assert str(missing) in err


def test_quiet_check(cfg):
    rc, out, err = run_sluice(["-q", "-c", "-f", str(valid_config(cfg))])
    assert (rc, out) == (0, "")
