"""Checks are spread over time: ten servers with inter 1s do not all get their first check
in the same instant."""
import socket
import threading
import time

from sluice_harness import TcpServer, free_port, slow_factor, wait_until

from checks_util import AcceptRecorder, config


def test_first_checks_are_spread(cfg, sluice, servers, short_tmp):
    port, sock = free_port(), short_tmp / "stats.sock"
    recs = [servers.add(AcceptRecorder()) for _ in range(10)]
    srv = "\n".join(f"    server s{i} 127.0.0.1:{r.port} check inter 1s" for i, r in enumerate(recs))
    sluice(cfg(config(port, sock, srv, nbthread=4)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: all(r.times for r in recs), timeout=5)
    firsts = sorted(r.times[0] for r in recs)
    # Planned: the i-th first check at i/10 of the 1 s interval, so about 900 ms from first to
    # last. A loaded machine (sanitizers, parallel tests) delays timers and can bunch a few,
    # but a burst would put them all within milliseconds: require a quarter of the interval.
    span = firsts[-1] - firsts[0]
    assert span > 0.25, f"first checks within {span * 1000:.1f} ms: " + str(
        [round((t - firsts[0]) * 1000) for t in firsts])


def test_max_spread_checks_bounds_the_first_delay(cfg, sluice, servers, short_tmp):
    """max-spread-checks 200ms: ten servers with inter 10s are all checked within it (plus
    start-up and timer slack), not over 10 s."""
    port, sock = free_port(), short_tmp / "stats.sock"
    recs = [servers.add(AcceptRecorder()) for _ in range(10)]
    srv = "\n".join(f"    server s{i} 127.0.0.1:{r.port} check inter 10s" for i, r in enumerate(recs))
    text = config(port, sock, srv).replace("global\n", "global\n    max-spread-checks 200ms\n", 1)
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
    started = time.monotonic()
    wait_until(lambda: all(r.times for r in recs), timeout=3)
    # Spread over inter, the last first check would come about 9 s after the start.
    latest = max(r.times[0] for r in recs) - started
    assert latest < 1.0 * slow_factor(), f"last first check {latest:.2f} s after the start"


def test_spread_checks_varies_the_interval(cfg, sluice, servers, short_tmp):
    """spread-checks 50: a server's intervals vary between 50% and 150% of inter 200ms
    (without it they repeat within timer slack)."""
    port, sock = free_port(), short_tmp / "stats.sock"
    rec = servers.add(AcceptRecorder())
    text = config(port, sock, f"    server s 127.0.0.1:{rec.port} check inter 200ms")
    text = text.replace("global\n", "global\n    spread-checks 50\n", 1)
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: len(rec.times) >= 12, timeout=6)
    gaps = [b - a for a, b in zip(rec.times, rec.times[1:])]
    assert min(gaps) > 0.05, gaps
    # Ten random draws over +/-100 ms: all within 40 ms of each other would be a 1-in-10^7 run.
    assert max(gaps) - min(gaps) > 0.04, gaps


class Gate:
    """Opens every `period` seconds for every connection waiting at it."""

    def __init__(self, period: float):
        self.cond = threading.Condition()
        self.gen = 0
        self.stopped = threading.Event()
        threading.Thread(target=self._run, args=(period,), daemon=True).start()

    def _run(self, period: float) -> None:
        while not self.stopped.wait(period):
            with self.cond:
                self.gen += 1
                self.cond.notify_all()

    def wait(self) -> None:
        with self.cond:
            g = self.gen
            self.cond.wait_for(lambda: self.gen != g, timeout=5)


def test_checks_ending_together_keep_their_spread(cfg, sluice, servers, short_tmp):
    """Two checks that end in the same instant (their server answers both at once) are not
    merged: each next check is due an interval after the last one was due, so they stay as far
    apart as they started, instead of forming a burst that would grow with every merge."""
    gate = Gate(0.4)

    def held(c: socket.socket, srv) -> None:
        srv.add_result(time.monotonic())
        gate.wait()
        c.sendall(b"OK\n")

    a, b = servers.add(TcpServer(held)), servers.add(TcpServer(held))
    port, sock = free_port(), short_tmp / "stats.sock"
    srv = (f"    server a 127.0.0.1:{a.port} check inter 1s\n"
           f"    server b 127.0.0.1:{b.port} check inter 1s\n")
    text = config(port, sock, srv, "    option tcp-check\n    tcp-check expect string OK\n"
                  "    timeout check 3s\n", nbthread=1).replace(
        "global\n", "global\n    max-spread-checks 100ms\n", 1)
    try:
        sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
        # Planned: a's first check at 0-25 ms, b's at 50-75 ms; both wait for the gate.
        wait_until(lambda: len(a.results) >= 4 and len(b.results) >= 4, timeout=8)
    finally:
        gate.stopped.set()
    gaps = [abs(x - y) * 1000 for x, y in zip(a.results[1:4], b.results[1:4])]
    # A loaded machine may run both due checks in one late loop turn now and then (they are
    # then seen together once); merged for good, as before the fix, every gap is near 0.
    assert sum(g > 8 for g in gaps) >= 2, f"checks {gaps} ms apart"
