"""Shared by the cookie tests: HAProxy's dynamic cookie value, and one request on a connection
of its own."""
from __future__ import annotations

import ctypes
import socket
import struct


def _xxh64(data: bytes) -> int:
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH64.restype = ctypes.c_uint64
    lib.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    return lib.XXH64(data, len(data), 0)


def dyn(key: str, port: int, ip: str = "127.0.0.1") -> str:
    """HAProxy's dynamic cookie: XXH64 of the key, the address and the port on 4 bytes."""
    return f"{_xxh64(key.encode() + socket.inet_aton(ip) + struct.pack('!I', port)):016x}"


def get(port, path="/", cookie=None, method="GET", timeout=5.0):
    """One request on its own connection (Connection: close): (status, [(name, value)...]) of
    the response head, names in lower case."""
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    if cookie is not None:
        head += f"Cookie: {cookie}\r\n"
    if method == "POST":
        head += "Content-Length: 0\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall((head + "\r\n").encode())
        data = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    lines = data.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = [(n.strip().lower(), v.strip()) for n, v in (l.split(":", 1) for l in lines[1:])]
    return status, headers
