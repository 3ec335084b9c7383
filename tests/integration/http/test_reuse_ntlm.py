"""Connection-oriented authentication and server connection reuse (http1.md section 3): a server
that answers 401 with `WWW-Authenticate: NTLM...` or `Negotiate...` (407 and
`Proxy-Authenticate` alike) authenticates the connection, not the request. As HAProxy (2.6 and
3.5), the server connection then becomes private: it stays with its client connection, serves
that client's next requests (which prefer its server), is never shared with another client,
and closes with the client."""
import time

import pytest

from sluice_harness import free_port
from hutil import Conn, config, preamble, wait_conn_closed


def _start(sluice, cfg, origin, **kw):
    port = free_port()
    sluice(cfg(config(port, origin.port, **kw)), wait_ports=[port])
    return port


def _get(c, path="/"):
    c.send(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: a\r\n\r\n")
    return c.response()


def _challenge(status: int, name: str, value: str) -> bytes:
    reason = "Unauthorized" if status == 401 else "Proxy Authentication Required"
    return (f"HTTP/1.1 {status} {reason}\r\n{name}: {value}\r\n"
            f"Content-Length: 0\r\n\r\n").encode()


def _conn_of(origin, path):
    reqs = [r for r in origin.requests() if r.path == path]
    assert len(reqs) == 1, origin.requests()
    return reqs[0].conn_id


@pytest.mark.parametrize("status,name,value", [
    (401, "WWW-Authenticate", "NTLM"),
    (401, "WWW-Authenticate", "NTLM TlRMTVNTUAACAAAAAAAAACgAAAABggAAU3J2Tm9uY2UAAAAAAAAAAA=="),
    (401, "WWW-Authenticate", "Negotiate"),
    (401, "www-authenticate", "ntlm"),
    (401, "WWW-Authenticate", 'Basic realm="r", NTLM'),
    (407, "Proxy-Authenticate", "NTLM"),
])
@pytest.mark.parametrize("reuse", ["safe", "always"])
def test_auth_challenge_makes_the_connection_private(cfg, sluice, origin, reuse, status, name,
                                                     value):
    origin.script("/auth", _challenge(status, name, value))
    port = _start(sluice, cfg, origin, be=f"http-reuse {reuse}")
    with Conn(port) as a:
        r = _get(a, "/auth")
        assert r.status == status, r
        time.sleep(0.1)
        with Conn(port) as b:
            # Another client never gets it, not even with http-reuse always.
            assert _get(b, "/b1").status == 200
            assert _get(b, "/b2").status == 200
        # The same client's next request goes on it.
        assert _get(a, "/a2").status == 200
        assert _get(a, "/a3").status == 200
    auth = _conn_of(origin, "/auth")
    assert _conn_of(origin, "/a2") == _conn_of(origin, "/a3") == auth
    assert _conn_of(origin, "/b1") != auth and _conn_of(origin, "/b2") != auth
    # It closes with its client.
    wait_conn_closed(origin, auth)


@pytest.mark.parametrize("status,name,value", [
    (401, "WWW-Authenticate", "Basic realm=\"r\""),
    (401, "WWW-Authenticate", "Digest realm=\"NTLM\""),
    (407, "WWW-Authenticate", "NTLM"),    # not the field of a 407
    (401, "Proxy-Authenticate", "NTLM"),  # not the field of a 401
    (403, "WWW-Authenticate", "NTLM"),
])
def test_other_challenges_leave_the_connection_shared(cfg, sluice, origin, status, name, value):
    origin.script("/auth", _challenge(status, name, value))
    port = _start(sluice, cfg, origin, be="http-reuse always")
    with Conn(port) as a:
        assert _get(a, "/auth").status == status
        time.sleep(0.1)
        with Conn(port) as b:
            assert _get(b, "/b1").status == 200
    assert _conn_of(origin, "/b1") == _conn_of(origin, "/auth"), "always: the idle one is shared"


def test_private_auth_connection_keeps_its_server(cfg, sluice, origin, origin2):
    # Round robin would send the next request to the other server: the client stays on the
    # server that holds its authenticated connection.
    origin.script("/auth", _challenge(401, "WWW-Authenticate", "NTLM"))
    origin2.script("/auth", _challenge(401, "WWW-Authenticate", "NTLM"))
    port = free_port()
    sluice(cfg(preamble() + f"""frontend fe
    bind 127.0.0.1:{port}
    default_backend be

backend be
    balance roundrobin
    server s1 127.0.0.1:{origin.port}
    server s2 127.0.0.1:{origin2.port}
"""), wait_ports=[port])
    with Conn(port) as a:
        assert _get(a, "/auth").status == 401
        for i in range(3):
            assert _get(a, f"/n{i}").status == 200
    first, other = (origin, origin2) if origin.paths()[:1] == ["/auth"] else (origin2, origin)
    assert first.paths() == ["/auth", "/n0", "/n1", "/n2"], (origin.paths(), origin2.paths())
    assert other.paths() == []
    assert first.connection_count() == 1
