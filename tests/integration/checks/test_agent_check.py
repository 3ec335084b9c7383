"""`agent-check`: an agent beside the server answers one line per check, and its words change
the server as HAProxy 3.5's agent protocol says (state, admin state, weight share, maxconn),
with its log lines and show stat / show servers state fields (this file passes against
HAProxy 3.5 as well)."""
from __future__ import annotations

import socket
import threading

from sluice_harness import TcpServer, cli, free_port, show_stat, slow_factor, wait_until

from checks_util import lines, logged_head


class Agent(TcpServer):
    """Answers each connection with the next of `answers` (the last one repeats), after
    reading what the check sends within a few milliseconds (agent-send)."""

    def __init__(self, *answers: str):
        self.answers = list(answers)
        self.given = 0
        self.received: list[bytes] = []
        self._alock = threading.Lock()
        super().__init__(self._answer)

    def _answer(self, c: socket.socket, _srv) -> None:
        # What the check sends first (agent-send) comes with its connection, or not at all.
        c.settimeout(0.03 * slow_factor())
        try:
            d = c.recv(100)
            if d:
                self.received.append(d)
        except OSError:
            pass
        with self._alock:
            a = self.answers[min(self.given, len(self.answers) - 1)]
            self.given += 1
        try:
            c.sendall(a.encode())
        except OSError:
            pass


def start(cfg, sluice, servers, udp_log, short_tmp, agent: Agent, extra: str = ""):
    sock = short_tmp / "stats.sock"
    port = free_port()
    backend = servers.echo()
    text = logged_head(sock, udp_log.port, port, "b") + f"""backend b
    server s1 127.0.0.1:{backend.port} weight 10 check inter 200 agent-check agent-port {agent.port} agent-inter 200 {extra}
    server s2 127.0.0.1:{backend.port} check inter 5s
"""
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])

    def row() -> dict[str, str]:
        return next(r for r in show_stat(str(sock)) if r["pxname"] == "b" and r["svname"] == "s1")
    return sock, row


def test_agent_down_and_up(cfg, sluice, servers, udp_log, short_tmp):
    agent = servers.add(Agent("up\n", "down\n", "fail # broken disk\n", "up\n"))
    _, row = start(cfg, sluice, servers, udp_log, short_tmp, agent)
    wait_until(lambda: len(lines(udp_log, "via agent : up")) >= 1, 5)
    down = lines(udp_log, "via agent : down")
    assert down[0] == ('Server b/s1 is DOWN, reason: Layer7 wrong status, code: 0, info: "via agent '
                       ': down", check duration: ' + down[0].split("check duration: ")[1]), down
    assert down[0].endswith("ms. 1 active and 0 backup servers left. 0 sessions active, 0 "
                            "requeued, 0 remaining in queue."), down
    up = lines(udp_log, "via agent : up")[0]
    assert up.startswith('Server b/s1 is UP, reason: Layer7 check passed, code: 0, info: "via agent : up"')
    assert up.endswith("ms. 2 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.")
    # "fail" came while the server was already DOWN: no second line.
    assert not lines(udp_log, "via agent : fail")
    r = row()
    assert r["status"] == "UP" and r["agent_status"] == "L7OK", r
    assert r["last_agt"] == "via agent : up" and r["agent_desc"] == "Layer7 check passed", r


def test_agent_fail_shows_down_agent(cfg, sluice, servers, udp_log, short_tmp):
    agent = servers.add(Agent("fail # broken disk\n"))
    sock, row = start(cfg, sluice, servers, udp_log, short_tmp, agent, "agent-send hello\\n")
    wait_until(lambda: row()["status"] == "DOWN (agent)", 5)
    r = row()
    assert r["agent_status"] == "L7STS" and r["last_agt"] == "via agent : fail (broken disk)", r
    assert r["agent_rise"] == "1" and r["agent_fall"] == "1", r
    wait_until(lambda: agent.received, 3)
    assert agent.received[0] == b"hello\n"
    state = [l.split() for l in cli(str(sock), "show servers state b").splitlines()
             if len(l.split()) > 20 and l.split()[3] == "s1"][0]
    assert state[14] == "22" and state[-1] == str(agent.port), state   # agent configured, enabled
    # The CLI overrides the agent until its next answer, and `disable agent` stops it.
    assert cli(str(sock), "disable agent b/s1").strip() == ""
    wait_until(lambda: row()["status"] == "UP", 3)


def test_agent_admin_weight_and_maxconn(cfg, sluice, servers, udp_log, short_tmp):
    agent = servers.add(Agent("maxconn:7 75%\n", "drain\n", "ready\n", "garbage\n"))
    _, row = start(cfg, sluice, servers, udp_log, short_tmp, agent)
    wait_until(lambda: lines(udp_log, "leaving forced drain"), 5)
    assert lines(udp_log, "enters drain state")[0] == (
        "Server b/s1 enters drain state. 1 active and 0 backup servers online. 0 sessions "
        "requeued, 0 total in queue.")
    assert lines(udp_log, "leaving forced drain")[0] == "Server b/s1 is UP (leaving forced drain)."
    r = row()
    assert r["weight"] == "7", r          # 75% of 10
    assert r["slim"] == "7", r            # maxconn:7
    assert r["agent_status"] == "CHECKED" and r["agent_desc"] == "No status change", r


def test_agent_maint(cfg, sluice, servers, udp_log, short_tmp):
    agent = servers.add(Agent("maint\n", "maint\n", "maint\n", "ready\n"))
    _, row = start(cfg, sluice, servers, udp_log, short_tmp, agent)
    wait_until(lambda: lines(udp_log, "going DOWN for maintenance"), 5)
    assert lines(udp_log, "going DOWN for maintenance")[0] == (
        "Server b/s1 is going DOWN for maintenance. 1 active and 0 backup servers left. 0 "
        "sessions active, 0 requeued, 0 remaining in queue.")
    # The agent is still asked in maintenance: "ready" brings the server back.
    wait_until(lambda: row()["status"] == "UP", 5)
