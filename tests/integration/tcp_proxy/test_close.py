"""How sluice ends a relayed TCP connection on the server side: after the server's FIN a plain
close (the FIN of the client is passed on, a half-closed server still reads its EOF); when sluice
gives up first (client abort, timeout) a reset, so that no TIME_WAIT holds its ephemeral port."""
import socket
import struct

from sluice_harness import DEFAULTS, connect, free_port, local_listener, read_end, recv_all


def fe_be(port, server_port):
    return f"""
global
    nbthread 1
{DEFAULTS}
frontend fe
    bind 127.0.0.1:{port}
    default_backend be

backend be
    server s1 127.0.0.1:{server_port}
"""




def test_half_closed_server_gets_the_clients_fin_not_a_reset(cfg, sluice):
    ls = local_listener()
    port = free_port()
    sluice(cfg(fe_be(port, ls.getsockname()[1])), wait_ports=[port])
    with ls, connect(port) as c:
        srv, _ = ls.accept()
        with srv:
            srv.sendall(b"answer")
            srv.shutdown(socket.SHUT_WR)       # the server is done sending, still reading
            assert recv_all(c) == b"answer"    # data and EOF reach the client
            c.sendall(b"last words")
            c.shutdown(socket.SHUT_WR)
            srv.settimeout(5)
            got = b""
            while len(got) < len(b"last words"):
                chunk = srv.recv(100)
                assert chunk, got
                got += chunk
            assert got == b"last words"
            assert read_end(srv) == "eof"


def test_client_abort_resets_the_server_connection(cfg, sluice):
    ls = local_listener()
    port = free_port()
    sluice(cfg(fe_be(port, ls.getsockname()[1])), wait_ports=[port])
    with ls:
        c = connect(port)
        srv, _ = ls.accept()
        with srv:
            c.sendall(b"ping")
            srv.settimeout(5)
            assert srv.recv(100) == b"ping"
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            c.close()                          # the client resets: sluice aborts the session
            assert read_end(srv) == "reset"
