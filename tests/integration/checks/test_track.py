"""`track [<backend>/]<server>`: servers that follow another server's checks, chains included,
with HAProxy 3.5's lines ("Server c/s3 is DOWN via b/s2. ...", "Running on backup."), and a
state forced on the CLI ("changed from CLI")."""
from __future__ import annotations


from sluice_harness import cli, free_port, show_stat, wait_until

from checks_util import logged_head


def test_tracking_chain_follows_the_check(cfg, sluice, servers, udp_log, short_tmp):
    sock = short_tmp / "stats.sock"
    port = free_port()
    target = servers.echo()
    text = logged_head(sock, udp_log.port, port, "b") + f"""backend b
    server s1 127.0.0.1:{target.port} check inter 200 rise 1 fall 1 init-state up
    server s2 127.0.0.1:9 track s1
backend c
    server s3 127.0.0.1:9 track b/s2
    server s4 127.0.0.1:9 track b/s1 backup
"""
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])

    def stat(be: str, sv: str) -> dict[str, str]:
        return next(r for r in show_stat(str(sock)) if r["pxname"] == be and r["svname"] == sv)

    assert stat("b", "s2")["status"] == "UP"
    assert stat("b", "s2")["tracked"] == "b/s1"
    assert stat("c", "s3")["tracked"] == "b/s2"
    target.stop()
    wait_until(lambda: stat("c", "s3")["status"] == "DOWN", 5)
    assert stat("c", "s4")["status"] == "DOWN"
    wait_until(lambda: any("backend c has no server available!" in m for m in udp_log.texts()), 3)
    # The trackers newest first, each one's own trackers after it, as HAProxy 3.5 orders them.
    lines = [m.strip() for m in udp_log.texts() if " via " in m or "no server" in m]
    assert lines == [
        "Backup Server c/s4 is DOWN via b/s1. 1 active and 0 backup servers left. 0 sessions "
        "active, 0 requeued, 0 remaining in queue.",
        "Server b/s2 is DOWN via b/s1. 0 active and 0 backup servers left. 0 sessions active, "
        "0 requeued, 0 remaining in queue.",
        "backend b has no server available!",
        "Server c/s3 is DOWN via b/s2. 0 active and 0 backup servers left. 0 sessions active, "
        "0 requeued, 0 remaining in queue.",
        "backend c has no server available!",
    ], lines
    # Forced UP from the CLI: the whole chain follows, and the line names the CLI.
    assert cli(str(sock), "set server b/s1 health up").strip() == ""
    wait_until(lambda: stat("c", "s3")["status"] == "UP", 3)
    wait_until(lambda: any("Backup Server c/s4 is UP via b/s1" in m for m in udp_log.texts()), 3)
    forced = [m.strip() for m in udp_log.texts() if "changed from CLI" in m or " UP via " in m]
    assert forced[0] == ("Server b/s1 is UP, changed from CLI. 1 active and 0 backup servers "
                         "online. 0 sessions requeued, 0 total in queue."), forced
    assert ("Backup Server c/s4 is UP via b/s1. 0 active and 1 backup servers online. Running on "
            "backup. 0 sessions requeued, 0 total in queue.") in forced, forced
