"""The other stats socket commands, levels, framing and prompt mode."""
import re
import socket

from sluice_harness import CliConn, cli, cli_socat, echo_roundtrip, recv_all, run_sluice


def test_show_servers_state(cli_setup):
    text = cli_socat(cli_setup.admin, "show servers state")
    lines = text.split("\n")
    assert lines[0] == "1"
    header = lines[1].split()
    assert header[:6] == ["#", "be_id", "be_name", "srv_id", "srv_name", "srv_addr"]
    names = header[1:]
    assert len(names) == 25
    rows = [l.split() for l in lines[2:] if l]
    assert all(len(r) == 25 for r in rows), rows
    assert [(r[1], r[3]) for r in rows] == [("be", "s1"), ("be", "s2"), ("other", "o1")]
    assert text.endswith("\n\n")


def test_show_backend(cli_setup):
    assert cli_socat(cli_setup.admin, "show backend") == "# name\nbe\nother\n\n"


def test_help(cli_setup):
    lines = cli(cli_setup.admin, "help").split("\n")
    assert lines[0] == "The following commands are valid at this level:"
    assert lines[-1] == "" and lines[-2] == ""
    tail = [l.split(":")[0].strip() for l in lines[-5:-2]]
    assert tail[0].startswith("help") and tail[1].startswith("prompt") and tail[2] == "quit"


def test_show_version_matches_dash_v(cli_setup):
    text = cli_socat(cli_setup.admin, "show version")
    assert text.endswith("\n\n") and text.count("\n") == 2, repr(text)
    version = text.strip()
    rc, out, _ = run_sluice(["-v"])
    assert version in out.splitlines()[0]


def test_unknown_command(cli_setup):
    # cli() reads to EOF and would raise on a reset: the answer ends with a normal close.
    text = cli(cli_setup.admin, "frobnicate now")
    assert text.startswith("Unknown command"), text[:200]
    assert text.endswith("\n\n")


def test_two_commands_on_one_line(cli_setup):
    text = cli(cli_setup.admin, "show version;show cli level")
    parts = text.split("\n\n")
    assert parts[1:] == ["admin", ""], repr(text)


def test_second_line_is_discarded_in_non_interactive_mode(cli_setup):
    text = cli(cli_setup.admin, "show cli level\nshow cli level\n")
    assert text == "admin\n\n"


def test_prompt_mode(cli_setup):
    version = cli(cli_setup.admin, "show version").strip()
    with CliConn(cli_setup.admin) as c:
        c.send("prompt\n")
        assert c.read_until("> ") == "\n> "
        c.send("show version\n")
        assert c.read_until("\n> ") == f"{version}\n\n> "
        c.send("show version;show cli level\n")
        assert c.read_until("\n> ") == f"{version}\n\nadmin\n\n> "
        c.send("quit\n")
        assert c.read_to_eof() == ""


def test_user_level_is_enforced(cli_setup):
    assert cli(cli_setup.user, "show cli level") == "user\n\n"
    assert cli(cli_setup.user, "show activity") == "Permission denied\n\n"
    assert cli_socat(cli_setup.user, "show activity") == "Permission denied\n\n"


def test_fd_socket_is_admin(cli_setup):
    assert cli(cli_setup.fd_admin, "show cli level") == "admin\n\n"


def test_show_activity_per_thread_columns(cli_setup):
    for _ in range(6):
        assert echo_roundtrip(cli_setup.port) == b"ping\n"
    text = cli_socat(cli_setup.admin, "show activity")
    m = re.search(r"^accepted: (\d+) \[ (\d+) (\d+) \]$", text, re.M)
    assert m, text
    total, a, b = map(int, m.groups())
    assert total == a + b
    assert total >= 6


def test_no_output_without_lf(cli_setup):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(cli_setup.admin)
        s.sendall(b"show info")
        s.shutdown(socket.SHUT_WR)
        assert recv_all(s) == b""


def test_show_cli_sockets(cli_setup):
    """Every stats socket with its level, in configuration order; any level may ask."""
    lines = cli(cli_setup.user, "show cli sockets").split("\n")
    assert lines[0] == "# socket lvl processes"
    assert lines[1] == f"unix@{cli_setup.admin} admin all"
    assert lines[2] == f"ipv4@127.0.0.1:{cli_setup.user[1]} user all"
    assert re.fullmatch(r"fd@\d+ admin all", lines[3]), lines
    assert lines[4:] == ["", ""]
