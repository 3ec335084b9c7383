"""A request whose Upgrade field is empty asks for no protocol: it is forwarded as a plain
request (without Connection: upgrade), and a server that answers it with a 101 anyway gets the
client a 502, as HAProxy 3.5 does."""
import socket

from sluice_harness import TcpServer, free_port


def test_a_101_to_a_request_with_an_empty_upgrade_is_a_502(cfg, sluice):
    seen = []

    def handler(conn: socket.socket, _srv) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            data = conn.recv(4096)
            if not data:
                return
            head += data
        seen.append(head)
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n"
                     b"Upgrade: websocket\r\n\r\n")
        conn.recv(1)

    server = TcpServer(handler)
    try:
        port = free_port()
        sluice(cfg(f"""
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    server s1 127.0.0.1:{server.port}
"""), wait_ports=[port])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade:\r\n\r\n")
            answer = b""
            while not (b"\r\n\r\n" in answer and answer.endswith(b"</html>\n")):
                data = c.recv(4096)   # bounded by the socket's 5 s timeout
                if not data:
                    break
                answer += data
        assert answer.startswith(b"HTTP/1.1 502 "), answer
        assert seen and b"upgrade" not in seen[0].lower(), seen
    finally:
        server.stop()
