"""Many clients served by one worker at once. An HTTP session does not send from inside an
event handler: it queues itself and the worker sends for every queued session after the batch
(docs/architecture.md, "A worker"). These tests put many sessions in the same batches, with
pipelined requests, request bodies, responses larger than the socket buffers and clients that
vanish mid-exchange, and check that every byte still reaches the right peer, in order."""
from __future__ import annotations

import hashlib
import selectors
import socket
import struct
import time

from http_origin import pattern_sha256
from hutil import Conn, config
from sluice_harness import free_port, slow_factor


def _start(sluice, cfg, origin):
    port = free_port()
    sluice(cfg(config(port, origin.port, timeouts="timeout connect 2s\n    timeout client 30s\n"
                                                  "    timeout server 30s")),
           wait_ports=[port])
    return port


def _split(data: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The complete responses at the start of `data` as (head, body) pairs (every response here
    has a content-length), and what follows them."""
    out = []
    while True:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            return out, data
        head = data[:end + 4]
        length = next(int(line.partition(b":")[2]) for line in head.split(b"\r\n")[1:]
                      if line.partition(b":")[0].strip().lower() == b"content-length")
        if len(data) < end + 4 + length:
            return out, data
        out.append((head, data[end + 4:end + 4 + length]))
        data = data[end + 4 + length:]


def _exchange_all(port: int, requests: list[bytes], answers: int, deadline: float) -> list[bytes]:
    """Opens one connection per request batch, sends them all, then reads every connection in
    one thread, 16 KiB at a time, until each holds `answers` complete responses."""
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in requests]
    for s, req in zip(socks, requests):
        s.sendall(req)
    for i, s in enumerate(socks):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
    got = [b""] * len(requests)
    waiting = set(range(len(requests)))
    while waiting:
        left = deadline - time.monotonic()
        assert left > 0, f"{len(waiting)} clients still waiting, e.g. #{min(waiting)} holding " \
                         f"{len(got[min(waiting)])} bytes"
        for key, _ in sel.select(timeout=min(left, 0.5)):
            i = key.data
            data = key.fileobj.recv(16384)
            got[i] += data
            if not data or len(_split(got[i])[0]) >= answers:
                waiting.discard(i)
                sel.unregister(key.fileobj)
    for s in socks:
        s.close()
    return got


def test_many_clients_in_one_batch_get_whole_ordered_responses(cfg, sluice, origin):
    port = _start(sluice, cfg, origin)
    requests, wanted = [], []
    for i in range(40):
        small = 1000 + 997 * i
        body = bytes((i + k) % 251 for k in range(20000 + 131 * i))
        big = 300_000 + 1000 * i   # more than the socket buffers hold: partial writes
        requests.append(f"GET /big?n={small} HTTP/1.1\r\nHost: a\r\n\r\n"
                        f"POST /sink HTTP/1.1\r\nHost: a\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                        + body + f"GET /big?n={big} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        wanted.append([pattern_sha256(small),
                       f"{len(body)} {hashlib.sha256(body).hexdigest()}\n".encode(),
                       pattern_sha256(big)])
    streams = _exchange_all(port, requests, 3, time.monotonic() + 60 * slow_factor())
    for i, data in enumerate(streams):
        responses, rest = _split(data)
        assert len(responses) == 3 and rest == b"", (i, [h for h, _ in responses], len(rest))
        for want, (head, body) in zip(wanted[i], responses):
            assert head.startswith(b"HTTP/1.1 200 "), (i, head)
            got = body if isinstance(want, bytes) else hashlib.sha256(body).hexdigest()
            assert got == want, (i, head)
    with Conn(port) as c:
        c.send(b"GET /big?n=10 HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 200


def test_clients_vanishing_in_the_batch_do_not_disturb_the_others(cfg, sluice, origin):
    port = _start(sluice, cfg, origin)
    deadline = time.monotonic() + 60 * slow_factor()
    for _ in range(3):
        # Clients that reset their connection right after asking for a large response, while
        # sessions around them have output queued; the others must still get theirs whole.
        quitters = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(20)]
        for i, s in enumerate(quitters):
            s.sendall(f"GET /big?n={200_000 + i} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        sizes = [50_000 + 7 * i for i in range(20)]
        requests = [f"GET /big?n={n} HTTP/1.1\r\nHost: a\r\n\r\n".encode() for n in sizes]
        for s in quitters:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        streams = _exchange_all(port, requests, 1, deadline)
        for n, data in zip(sizes, streams):
            responses, rest = _split(data)
            assert len(responses) == 1 and rest == b"", (n, len(data))
            head, body = responses[0]
            assert head.startswith(b"HTTP/1.1 200 ") and hashlib.sha256(body).hexdigest() == pattern_sha256(n)
    with Conn(port) as c:
        c.send(b"GET /big?n=1000 HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.response()
        assert r.status == 200 and len(r.body) == 1000
