"""Server selection: weighted roundrobin, disabled and backup servers."""
from sluice_harness import DEFAULTS, echo_roundtrip, free_port


def config(port, server_lines):
    return f"""
global
    nbthread 2
{DEFAULTS}
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    balance roundrobin
{server_lines}
"""


def test_weighted_roundrobin_1_to_3(cfg, sluice, servers):
    a, b = servers.echo(), servers.echo()
    port = free_port()
    sluice(cfg(config(port, f"    server a 127.0.0.1:{a.port} weight 1\n"
                            f"    server b 127.0.0.1:{b.port} weight 3\n")), wait_ports=[port])
    for i in range(40):
        assert echo_roundtrip(port, f"{i}\n".encode()) == f"{i}\n".encode()
    assert (a.connections, b.connections) == (10, 30)


def test_equal_weights_alternate(cfg, sluice, servers):
    a, b = servers.echo(), servers.echo()
    port = free_port()
    sluice(cfg(config(port, f"    server a 127.0.0.1:{a.port}\n"
                            f"    server b 127.0.0.1:{b.port}\n")), wait_ports=[port])
    for _ in range(10):
        echo_roundtrip(port)
    assert (a.connections, b.connections) == (5, 5)


def test_disabled_server_gets_no_traffic(cfg, sluice, servers):
    a, b = servers.echo(), servers.echo()
    port = free_port()
    sluice(cfg(config(port, f"    server a 127.0.0.1:{a.port} disabled\n"
                            f"    server b 127.0.0.1:{b.port}\n")), wait_ports=[port])
    for _ in range(10):
        assert echo_roundtrip(port) == b"ping\n"
    assert (a.connections, b.connections) == (0, 10)


def test_backup_unused_while_an_active_server_is_usable(cfg, sluice, servers):
    a, bk = servers.echo(), servers.echo()
    port = free_port()
    sluice(cfg(config(port, f"    server a 127.0.0.1:{a.port}\n"
                            f"    server bk 127.0.0.1:{bk.port} backup\n")), wait_ports=[port])
    for _ in range(6):
        assert echo_roundtrip(port) == b"ping\n"
    assert (a.connections, bk.connections) == (6, 0)


def test_backup_used_when_all_active_servers_are_disabled(cfg, sluice, servers):
    a, b, bk = servers.echo(), servers.echo(), servers.echo()
    port = free_port()
    sluice(cfg(config(port, f"    server a 127.0.0.1:{a.port} disabled\n"
                            f"    server b 127.0.0.1:{b.port} disabled\n"
                            f"    server bk 127.0.0.1:{bk.port} backup\n")), wait_ports=[port])
    for _ in range(6):
        assert echo_roundtrip(port) == b"ping\n"
    assert (a.connections, b.connections, bk.connections) == (0, 0, 6)
