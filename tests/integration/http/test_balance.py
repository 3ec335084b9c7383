"""Balance algorithms that hash the request (`balance uri`, `balance hdr(<name>)`): in HTTP mode
each request is routed by its own path or field, so the same key always lands on the same
server of a backend whatever the client connection."""
import pytest

from sluice_harness import free_port
from hutil import Conn, preamble


def _config(port, o1, o2, balance):
    return preamble(nbthread=2) + f"""frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    balance {balance}
    server s1 127.0.0.1:{o1}
    server s2 127.0.0.1:{o2}
"""


def _where(origin, origin2):
    """Which origin saw each path: {path: {'o1'|'o2', ...}}."""
    seen = {}
    for name, o in (("o1", origin), ("o2", origin2)):
        for r in o.requests():
            seen.setdefault(r.target, set()).add(name)
    return seen


@pytest.mark.parametrize("balance", ["uri", "hdr(x-user)"])
def test_same_key_same_server(cfg, sluice, origin, origin2, balance):
    port = free_port()
    sluice(cfg(_config(port, origin.port, origin2.port, balance)), wait_ports=[port])
    keys = [f"k{i}" for i in range(15)]   # odd: roundrobin cannot look consistent
    for rnd in range(3):
        # A new client connection per round, requests in keep-alive within it.
        with Conn(port) as c:
            for k in keys:
                path = f"/{k}" if balance == "uri" else f"/r{rnd}-{k}"
                user = k
                c.send(f"GET {path} HTTP/1.1\r\nHost: a\r\nX-User: {user}\r\n\r\n".encode())
                assert c.response().status == 200
    if balance == "uri":
        seen = _where(origin, origin2)
        # every path was answered by exactly one server, three times
        assert all(len(v) == 1 for v in seen.values()), seen
        assert {p for p in seen} == {f"/{k}" for k in keys}
    else:
        per_user = {}
        for name, o in (("o1", origin), ("o2", origin2)):
            for r in o.requests():
                per_user.setdefault(r.header("x-user"), set()).add(name)
        assert all(len(v) == 1 for v in per_user.values()), per_user
        assert set(per_user) == set(keys)
    # 15 keys hashed over 2 servers: both are used
    assert origin.requests() and origin2.requests(), (len(origin.requests()), len(origin2.requests()))
