#!/usr/bin/env python3
"""TCP segments per forwarded connection, by side and kind, counted on the loopback interface.

Runs N sequential connections against a proxy that is already listening (each: connect, send one
request, read until the proxy closes, close) and counts, with an AF_PACKET socket on `lo`
(root only), every TCP segment whose ports include the proxy's or the server's port:

    bench/packets.py --proxy-port 8080 --server-port 8081 [--requests 200] [--mode http|tcp]

The count is deterministic where CPU figures are not: it shows which packets a change removes
(docs/performance.md, "Closing connections"). Each loopback segment is counted once.
"""
import argparse
import socket
import struct
import threading
import time

REQUESTS = {
    "http": b"GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n",
    "tcp": b"GET / HTTP/1.0\r\nHost: bench\r\n\r\n",
}


def kind_of(flags: int, payload: int) -> str:
    parts = [name for bit, name in ((2, "SYN"), (1, "FIN"), (4, "RST")) if flags & bit]
    if payload > 0:
        parts.append("data")
    elif not parts:
        parts.append("ack")
    return " ".join(parts)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--proxy-port", type=int, required=True)
    p.add_argument("--server-port", type=int, required=True)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--mode", choices=sorted(REQUESTS), default="http")
    o = p.parse_args()
    sniffer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    sniffer.bind(("lo", 0))
    sniffer.settimeout(0.2)
    counts: dict[tuple[str, str], int] = {}
    stop = threading.Event()

    def sniff() -> None:
        while not stop.is_set():
            try:
                data, addr = sniffer.recvfrom(65535)
            except socket.timeout:
                continue
            if addr[2] != socket.PACKET_HOST:   # a loopback segment is seen going out and in
                continue
            ip = data[14:]
            if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
                continue
            ihl = (ip[0] & 15) * 4
            sport, dport = struct.unpack("!HH", ip[ihl:ihl + 4])
            if {sport, dport}.isdisjoint({o.proxy_port, o.server_port}):
                continue
            side = "client-proxy" if o.proxy_port in (sport, dport) else "proxy-server"
            payload = len(ip) - ihl - (ip[ihl + 12] >> 4) * 4
            key = (side, kind_of(ip[ihl + 13], payload))
            counts[key] = counts.get(key, 0) + 1

    t = threading.Thread(target=sniff)
    t.start()
    time.sleep(0.3)
    try:
        for _ in range(o.requests):
            with socket.create_connection(("127.0.0.1", o.proxy_port), timeout=5) as c:
                c.sendall(REQUESTS[o.mode])
                while c.recv(65536):
                    pass
        time.sleep(0.5)
    finally:
        stop.set()
        t.join()
    print("| side | segment | per connection |\n|---|---|---|")
    for (side, kind), n in sorted(counts.items()):
        print(f"| {side} | {kind} | {n / o.requests:.2f} |")
    print(f"| **total** | | **{sum(counts.values()) / o.requests:.2f}** |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
