"""`set server <b>/<s> addr <ip> port <p>` moves the health checks with the traffic, unless the
server line gives the check its own `port` (HAProxy: the check port follows the server's
unless it was configured)."""
from sluice_harness import cli, echo_roundtrip, free_port, refused_port, stat_int, wait_until

from checks_util import config, row


def test_checks_follow_set_server_addr(cfg, sluice, servers, short_tmp):
    port, sock = free_port(), short_tmp / "stats.sock"
    live, own = servers.echo(), servers.echo()
    dead = refused_port()
    srv = (f"    server a 127.0.0.1:{live.port} check inter 100ms rise 2 fall 2\n"
           f"    server d 127.0.0.1:{dead} check inter 100ms rise 2 fall 2\n"
           # Its own check port: the check stays there whatever the traffic address.
           f"    server c 127.0.0.1:{own.port} check port {own.port} inter 100ms rise 2 fall 2")
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "a")["status"] == "UP" and row(sock, "d")["status"] == "DOWN",
               timeout=5)

    for name, to in (("d", live.port), ("a", dead), ("c", dead)):
        assert cli(str(sock), f"set server be/{name} addr 127.0.0.1 port {to}").startswith(
            "port changed"), name
    # Within rise/fall x inter plus a margin: the swapped servers swap states.
    wait_until(lambda: row(sock, "a")["status"] == "DOWN" and row(sock, "d")["status"] == "UP",
               timeout=5, message="checks to follow the new addresses")
    assert row(sock, "a")["check_status"] == "L4CON"
    assert row(sock, "d")["check_status"] == "L4OK"
    c = row(sock, "c")
    assert c["status"] == "UP" and c["check_status"] == "L4OK", c

    # Take c out of rotation (its traffic address is dead but its check is not): all the
    # traffic must then reach the live server through d.
    assert cli(str(sock), "set server be/c state maint").strip() == ""
    before = stat_int(row(sock, "d"), "stot")
    for _ in range(6):
        assert echo_roundtrip(port) == b"ping\n"
    assert stat_int(row(sock, "d"), "stot") - before == 6
