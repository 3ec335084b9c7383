"""Checks are spread over time: ten servers with inter 1s do not all get their first check
in the same instant."""
from sluice_harness import free_port, wait_until

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
    wait_until(lambda: all(r.times for r in recs), timeout=3)


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
    assert min(gaps) > 0.08, gaps
    # Ten random draws over +/-100 ms: all within 40 ms of each other would be a 1-in-10^7 run.
    assert max(gaps) - min(gaps) > 0.04, gaps
