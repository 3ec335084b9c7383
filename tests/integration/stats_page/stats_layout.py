"""The proxy layout both test files use: a frontend, a backend whose four servers sit in four
different states, and a listen serving the stats page; plus its `show stat` accessors."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sluice_harness as h

# The states the layout's servers settle in, as `show stat` writes them.
SERVER_STATES = {"web1": "UP", "web2": "DOWN", "web3": "MAINT", "web4": "no check"}
PROXIES = ("web_fe", "app_be", "stats_px")


def layout_config(sock: str, port: int, sport: int, origin_port: int, refused: int,
                  fe_lines: str = "", stats_lines: str = "") -> str:
    """web_fe -> app_be, whose four servers end up in the four states of SERVER_STATES (UP and
    no check on the origin, DOWN through a refused check, MAINT by `disabled`), and a listen
    stats_px serving the page at /stats."""
    return f"""
global
    stats socket {sock} level admin
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend web_fe
    bind 127.0.0.1:{port}
{fe_lines}
    default_backend app_be
backend app_be
    server web1 127.0.0.1:{origin_port} check inter 200ms
    server web2 127.0.0.1:{refused} check inter 100ms fall 1
    server web3 127.0.0.1:{origin_port} disabled
    server web4 127.0.0.1:{origin_port}
listen stats_px
    bind 127.0.0.1:{sport}
    stats enable
    stats uri /stats
{stats_lines}
"""


@dataclass
class Layout:
    proc: h.Sluice
    port: int        # web_fe
    sport: int       # stats_px
    sock: str        # the admin stats socket

    @property
    def stats_url(self) -> str:
        return f"http://127.0.0.1:{self.sport}/stats"

    def rows(self) -> list[dict[str, str]]:
        return h.show_stat(self.sock)

    def status(self, server: str) -> str:
        return h.stat_row(self.rows(), "app_be", server)["status"]

    def iid(self, proxy: str) -> str:
        return h.stat_row(self.rows(), proxy, "BACKEND")["iid"]

    def wait_status(self, server: str, status: str, timeout: float = 10.0) -> None:
        def current() -> str:
            try:
                return repr(self.status(server))
            except Exception as exc:  # noqa: BLE001 - only for the message
                return repr(exc)
        h.wait_until(lambda: self.status(server) == status, timeout,
                     message=lambda: f"app_be/{server} to be {status!r} (it is {current()})"
                                     f"\n{self.proc.describe()}")


def start_layout(workdir: Path, sock_dir: Path, origin, fe_lines: str = "",
                 stats_lines: str = "") -> Layout:
    """Starts the layout (the caller kills layout.proc), waits until every server is in its
    state, and sends 4 requests through web_fe (they go to web1 and web4)."""
    sock = str(Path(sock_dir) / "admin.sock")
    port, sport = h.free_port(), h.free_port()
    cfg = h.write_config(workdir, layout_config(sock, port, sport, origin.port,
                                                h.refused_port(), fe_lines, stats_lines))
    proc = h.Sluice(Path(workdir) / "run")
    layout = Layout(proc, port, sport, sock)
    proc.start(cfg)
    try:
        proc.wait_listening(port)
        proc.wait_listening(sport)
        proc.wait_listening_unix(sock)
        for server, status in SERVER_STATES.items():
            layout.wait_status(server, status)
        for i in range(4):
            raw = h.http_get(port, f"/req{i}")
            assert raw.split(b" ", 2)[1:2] == [b"200"], raw[:300]
    except BaseException:
        proc.kill()
        raise
    return layout
