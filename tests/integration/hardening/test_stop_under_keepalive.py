"""Soft stop (SIGUSR1) and `-sf` reloads under steady keep-alive traffic: no request that a
client put on the wire may go unanswered. A keep-alive connection caught between two requests
at the stop gets a grace to deliver its next one, answered with `connection: close`; one that
stays idle is closed with a FIN and its input drained, so that a client can retry safely."""
import signal

from sluice_harness import KeepAliveClients, free_port, slow_factor, wait_until



def _config(port: int, nbthread: int = 2) -> str:
    return f"""
global
    nbthread {nbthread}
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout http-keep-alive 10s
frontend fe
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain string "ok"
"""



def test_soft_stop_answers_every_keepalive_request_on_the_wire(cfg, sluice):
    port = free_port()
    s = sluice(cfg(_config(port)), wait_ports=[port])
    clients = KeepAliveClients(port, 20, reconnect=False)
    try:
        wait_until(lambda: clients.connected == 20 and clients.answered > 400,
                   10 * slow_factor(), message="traffic on every connection")
        s.signal(signal.SIGUSR1)
        assert s.wait_exit(timeout=10) == 0, s.describe()
    finally:
        clients.finish()
    assert clients.failures == [], (clients.failures, clients.answered)
    # Every client was between two requests at the stop: each got its last one answered with
    # connection: close.
    assert clients.closes == 20, (clients.closes, clients.answered)


def test_reloads_answer_every_keepalive_request_on_the_wire(cfg, sluice):
    port = free_port()
    path = cfg(_config(port))
    old = sluice(path, wait_ports=[port])
    clients = KeepAliveClients(port, 20, reconnect=True)
    try:
        for _ in range(2):
            seen = clients.answered
            wait_until(lambda: clients.answered > seen + 400, 10 * slow_factor(), message="traffic")
            new = sluice(path, wait_ports=[port], extra_args=["-sf", str(old.pid)])
            assert old.wait_exit(timeout=10) == 0, old.describe()
            old = new
        seen = clients.answered
        wait_until(lambda: clients.answered > seen + 400, 10 * slow_factor(),
                   message="traffic on the last process")
    finally:
        clients.finish()
    assert clients.failures == [], (clients.failures[:5], len(clients.failures), clients.answered)
    assert clients.closes >= 20, clients.closes
