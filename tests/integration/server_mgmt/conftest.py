"""A running sluice with an admin and an operator stats socket, in front of backend `be`
(roundrobin, s1 and s2 on two echo servers) and a spare echo server for `set server addr`."""
from dataclasses import dataclass

import pytest

from sluice_harness import DEFAULTS, free_port


@dataclass
class MgmtSetup:
    proc: object
    port: int          # frontend fe
    admin: str         # unix socket, level admin
    operator: str      # unix socket, level operator
    e1: object         # s1
    e2: object         # s2
    e3: object         # not in the configuration


@pytest.fixture
def mgmt(cfg, sluice, servers, short_tmp):
    e1, e2, e3 = servers.echo(), servers.echo(), servers.echo()
    port = free_port()
    admin = str(short_tmp / "admin.sock")
    operator = str(short_tmp / "oper.sock")
    text = f"""
global
    nbthread 2
    maxconn 200
    stats socket {admin} level admin mode 600
    stats socket {operator} level operator mode 600
    stats timeout 10s
{DEFAULTS}
frontend fe
    bind 127.0.0.1:{port}
    maxconn 100
    default_backend be

backend be
    balance roundrobin
    server s1 127.0.0.1:{e1.port}
    server s2 127.0.0.1:{e2.port}
"""
    proc = sluice(cfg(text), wait_ports=[port], wait_unix=[admin, operator])
    return MgmtSetup(proc, port, admin, operator, e1, e2, e3)
