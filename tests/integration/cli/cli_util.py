"""What the CLI tests share."""
from sluice_harness import DEFAULTS


def start_with_admin_socket(cfg, sluice, short_tmp, extra_global="", body="", env=None):
    """Starts sluice with an admin stats socket (and the proxies in `body`); returns the
    process and the socket's path."""
    sock = str(short_tmp / "stats.sock")
    text = f"""
global
    stats socket {sock} level admin
{extra_global}
{DEFAULTS}
{body}
"""
    proc = sluice(cfg(text), wait_unix=[sock], env=env)
    return proc, sock
