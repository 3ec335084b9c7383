"""`disable frontend`, `enable frontend`, `shutdown frontend` (spec cli-and-stats.md 5): the
frontend's listeners refuse new connections (every thread stops watching them), established
ones go on, `enable` brings them back, `shutdown` is for good."""
from sluice_harness import (cli, connect, connect_refused, echo_roundtrip, parse_show_stat,
                            recv_exact, stat_row)


def _status(cli_setup, px):
    _, rows = parse_show_stat(cli(cli_setup.admin, "show stat"))
    return stat_row(rows, px, "FRONTEND")["status"]


def test_disable_enable_shutdown(cli_setup):
    port, admin = cli_setup.port, cli_setup.admin
    assert echo_roundtrip(port) == b"ping\n"
    established = connect(port)
    established.sendall(b"a")
    assert recv_exact(established, 1) == b"a"
    try:
        assert cli(admin, "disable frontend fe") == "\n"
        assert _status(cli_setup, "fe") == "PAUSED"
        assert connect_refused(port)
        # The connection already open goes on.
        established.sendall(b"b")
        assert recv_exact(established, 1) == b"b"
        assert cli(admin, "disable frontend fe") == "All sockets are already disabled.\n\n"

        assert cli(admin, "enable frontend fe") == "\n"
        assert _status(cli_setup, "fe") == "OPEN"
        # Every thread watches it again: several connections in a row are served.
        for _ in range(6):
            assert echo_roundtrip(port) == b"ping\n"
        assert cli(admin, "enable frontend fe") == "All sockets are already enabled.\n\n"

        assert cli(admin, "shutdown frontend fe") == "\n"
        assert _status(cli_setup, "fe") == "STOP"
        assert connect_refused(port)
        established.sendall(b"c")
        assert recv_exact(established, 1) == b"c"
        assert cli(admin, "enable frontend fe") == \
            "Frontend was previously shut down, cannot enable.\n\n"
        assert cli(admin, "shutdown frontend fe") == "Frontend was already shut down.\n\n"
        assert connect_refused(port)
    finally:
        established.close()


def test_errors_and_level(cli_setup):
    assert cli(cli_setup.admin, "disable frontend") == "A frontend name is expected.\n\n"
    assert cli(cli_setup.admin, "disable frontend be") == "No such frontend.\n\n"
    assert cli(cli_setup.user, "disable frontend fe") == "Permission denied\n\n"
    assert not connect_refused(cli_setup.port)
