"""A running sluice with three stats sockets: unix (admin), TCP (user) and an inherited fd
(admin), in front of two echo servers."""
import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sluice_harness import DEFAULTS, free_port

# Makes cli_util importable from this folder's tests.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@dataclass
class CliSetup:
    proc: object
    port: int                 # frontend fe
    admin: str                # unix socket path, level admin
    user: tuple               # ("127.0.0.1", port), level user
    fd_admin: str             # unix path of the socket handed over as fd@N, level admin
    echo1: object
    echo2: object
    sockets: dict = field(default_factory=dict)


@pytest.fixture
def cli_setup(cfg, sluice, servers, short_tmp):
    e1, e2, e3 = servers.echo(), servers.echo(), servers.echo()
    port, other_port, cli_port = free_port(), free_port(), free_port()
    admin = str(short_tmp / "admin.sock")
    inherited_path = str(short_tmp / "inherited.sock")
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(inherited_path)
    lsock.listen(16)
    fd = lsock.fileno()
    os.set_inheritable(fd, True)
    text = f"""
global
    nbthread 2
    stats socket {admin} level admin mode 600
    stats socket ipv4@127.0.0.1:{cli_port} level user
    stats socket fd@{fd} level admin
    stats timeout 10s
{DEFAULTS}
frontend fe
    bind 127.0.0.1:{port}
    default_backend be

backend be
    balance roundrobin
    server s1 127.0.0.1:{e1.port}
    server s2 127.0.0.1:{e2.port}

listen other
    bind 127.0.0.1:{other_port}
    server o1 127.0.0.1:{e3.port}
"""
    try:
        proc = sluice(cfg(text), wait_ports=[port, other_port, cli_port], wait_unix=[admin],
                      pass_fds=[fd])
    finally:
        lsock.close()   # sluice has its own copy
    setup = CliSetup(proc, port, admin, ("127.0.0.1", cli_port), inherited_path, e1, e2)
    setup.sockets = {"unix-admin": admin, "tcp-user": setup.user, "fd-admin": inherited_path}
    return setup
