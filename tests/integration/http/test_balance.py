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


# ---------------------------------------------------------------------------------------------
# Side by side with Debian's HAProxy (2.6, which has every algorithm below): the same backend,
# the same servers and weights (3 and 2), map-based hashing with each hash function. Each
# request carries its own key; both proxies must send it to the same server. (hash-type
# consistent places keys on sluice's own ring, not HAProxy's: see docs/config-compat.md.)

import shutil  # noqa: E402

import sluice_harness as h  # noqa: E402

_CASES = [
    # (balance line, hash-type, requests as (target, extra header lines))
    ("uri", "map-based sdbm", [(f"/d{i}/x?q={i}", "") for i in range(12)]),
    ("uri whole", "map-based djb2", [(f"/same?k={i}", "") for i in range(12)]),
    ("uri depth 1", "map-based sdbm", [(f"/a{i % 4}/b{i}/c", "") for i in range(12)]),
    ("uri len 4", "map-based wt6", [(f"/a{i:02d}bcdef", "") for i in range(12)]),
    ("uri path-only", "map-based crc32", [(f"http://h{i}.example/p{i * 3}", f"Host: h{i}.example\r\n") for i in range(12)]),
    ("hdr(x-user)", "map-based sdbm", [("/", f"X-User: u{i}\r\n") for i in range(12)]),
    ("hdr(host) use_domain_only", "map-based djb2", [("/", f"Host: www.d{i}.example:81\r\n") for i in range(12)]),
    ("url_param uid", "map-based sdbm", [(f"/p?a=1&uid=u{i}&b=2", "") for i in range(12)]),
    ("hash req.hdr(x-user),lower", "map-based sdbm", [("/", f"X-User: U{i}\r\n") for i in range(12)]),
    ("hash path,length", "map-based djb2", [("/" + "x" * i, "") for i in range(1, 13)]),
    ("hash src", "map-based sdbm", [("/", "")] * 4),
    ("uri absolute", "map-based sdbm", [(f"http://h{i}.example/p{i * 7}", f"Host: h{i}.example\r\n") for i in range(12)]),
]


def _run_pair(cfg, sluice, origin, origin2, tmp_path, balance, hash_type, requests):
    haproxy = shutil.which("haproxy")
    ports = {}
    procs = []
    for who in (("sluice", "haproxy") if haproxy else ("sluice",)):
        port = h.free_port()
        ports[who] = port
        algo = balance.replace(" absolute", "")
        text = f"""
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:{port}
    http-request set-header x-via {who}
    default_backend be
backend be
    balance {algo}
    hash-type {hash_type}
    server s1 127.0.0.1:{origin.port} weight 3
    server s2 127.0.0.1:{origin2.port} weight 2
"""
        if who == "sluice":
            procs.append(sluice(cfg(text), wait_ports=[port]))
        else:
            p = h.Sluice(tmp_path / "haproxy", binary=haproxy)
            procs.append(p)
            p.start(h.write_config(tmp_path, text, "haproxy.cfg"), extra_args=["-db"])
            p.wait_listening(port)
    try:
        for who, port in ports.items():
            for target, extra in requests:
                with Conn(port) as c:
                    host = "" if "Host:" in extra else "Host: a\r\n"
                    c.send(f"GET {target} HTTP/1.1\r\n{host}{extra}\r\n".encode())
                    assert c.response().status == 200
    finally:
        for p in procs[1:]:
            p.kill()
    picks = {}
    for name, o in (("s1", origin), ("s2", origin2)):
        for r in o.requests():
            key = (r.target, r.header("x-user") or "", r.header("host") or "")
            picks.setdefault(r.header("x-via"), {}).setdefault(key, set()).add(name)
    return picks


@pytest.mark.parametrize("balance,hash_type,requests", _CASES, ids=[c[0] for c in _CASES])
def test_same_server_as_haproxy(cfg, sluice, origin, origin2, tmp_path, balance, hash_type, requests):
    picks = _run_pair(cfg, sluice, origin, origin2, tmp_path, balance, hash_type, requests)
    mine = picks["sluice"]
    # every key stays on one server
    assert all(len(v) == 1 for v in mine.values()), mine
    if balance != "hash src":
        assert {n for v in mine.values() for n in v} == {"s1", "s2"}, mine   # both used
    if "haproxy" not in picks:
        pytest.skip("haproxy is not installed: sluice's own consistency checked only")
    assert mine == picks["haproxy"]


def test_missing_key_falls_back_to_roundrobin(cfg, sluice, origin, origin2):
    """No such parameter, field or sample: the requests are spread as roundrobin spreads them."""
    port = free_port()
    sluice(cfg(_config(port, origin.port, origin2.port, "url_param uid")), wait_ports=[port])
    with Conn(port) as c:
        for i in range(6):
            c.send(f"GET /nokey{i} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
            assert c.response().status == 200
    assert len(origin.requests()) == 3 and len(origin2.requests()) == 3
