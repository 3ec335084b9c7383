"""Helpers for sluice's integration tests: the real binary, real sockets, loopback only.

Plain module (stdlib only); tests/integration/conftest.py wraps the pieces in fixtures.

Rules this module enforces for every test (DESIGN.md, "Testing"):
  * ports are chosen here (free_port), never hard-coded;
  * every wait polls a condition with a deadline (wait_until), nothing sleeps blindly;
  * everything started here can be stopped, and the fixtures stop it even when a test fails.
"""

from __future__ import annotations

import csv
import contextlib
import errno
import hashlib
import os
import random
import re
import shutil
import signal
import signal as _signal_mod
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

REPO_ROOT = Path(__file__).resolve().parents[2]

# A config fragment with every timeout set, so tests don't get the "missing timeouts" warning.
DEFAULTS = """defaults
    mode tcp
    timeout connect 2s
    timeout client 10s
    timeout server 10s
"""
HTTP_DEFAULTS = DEFAULTS.replace("mode tcp", "mode http")


def listen_config(port: int, server_port: int, global_extra: str = "",
                  extra_bind_port: int | None = None) -> str:
    """Two threads, one TCP `listen app` on `port` (and `extra_bind_port`) forwarding to
    `server_port`: the configuration of the stop and reload tests."""
    extra = f"    bind 127.0.0.1:{extra_bind_port}\n" if extra_bind_port else ""
    return f"""
global
    nbthread 2
{global_extra}
{DEFAULTS}
listen app
    bind 127.0.0.1:{port}
{extra}    server s1 127.0.0.1:{server_port}
"""


# ----------------------------------------------------------------------------------------------
# Binary and generic waiting
# ----------------------------------------------------------------------------------------------

def sluice_bin() -> str:
    """The binary under test: $SLUICE_BIN (set by ctest), else the release build."""
    path = os.environ.get("SLUICE_BIN") or str(REPO_ROOT / "build/release/src/app/sluice")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"sluice binary not found or not executable: {path} (set SLUICE_BIN)")
    # Absolute: sluice runs with its own working directory (its per-test run folder).
    return os.path.abspath(path)


def slow_factor() -> float:
    """Sanitizer builds start and run slower; deadlines (never assertions on speed) scale up."""
    try:
        return float(os.environ.get("SLUICE_TEST_SLOW", "1"))
    except ValueError:
        return 1.0


class ProcessExited(AssertionError):
    """Raised from a wait predicate when waiting any longer is pointless; wait_until passes it
    on at once instead of polling until its deadline."""


def wait_until(predicate: Callable[[], object], timeout: float = 5.0, interval: float = 0.01,
               message: str | Callable[[], str] = "condition") -> object:
    """Polls predicate until it returns a truthy value (which is returned) or timeout expires
    (AssertionError). Exceptions from predicate count as "not yet" and are reported at the end."""
    deadline = time.monotonic() + timeout * slow_factor()
    last_exc: BaseException | None = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except ProcessExited:
            raise
        except Exception as exc:  # noqa: BLE001 - reported below
            last_exc = exc
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            extra = f" (last error: {last_exc!r})" if last_exc else ""
            raise AssertionError(f"timed out after {timeout}s waiting for {text}{extra}")
        time.sleep(interval)
        interval = min(interval * 1.5, 0.1)


# ----------------------------------------------------------------------------------------------
# Ports
# ----------------------------------------------------------------------------------------------

_handed_out: set[int] = set()
_port_lock = threading.Lock()
# One bound (never listening) socket per port handed out, kept for the life of the process: a
# port found free stays ours until the test's own program binds it. Without it another test
# process (ctest runs two at once) could find the port free in the meantime, and since sluice
# and HAProxy bind with SO_REUSEPORT, both programs would share its connections. This
# socket's SO_REUSEPORT lets the test's sluice or HAProxy bind beside it, and its SO_REUSEADDR
# the servers that bind with that option (every fake server, nginx), since it never listens; a
# plain bind, as _can_bind() makes in another process, still fails. A socket that must hold
# the port alone (a test's "port in use") binds with SO_REUSEADDR and listens.
_reserved: list[socket.socket] = []
# The oldest reservations go first: by then their test has long bound the port (or ended).
_MAX_RESERVED = 256


def _reserve(port: int) -> None:
    if len(_reserved) >= _MAX_RESERVED:
        _reserved.pop(0).close()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        s.close()
        return
    _reserved.append(s)


def _port_window() -> tuple[int, int]:
    # Ports below the kernel's ephemeral range: outgoing connections (the proxy's, the tests')
    # never take them, so a port found free stays free until the test binds it. Each process
    # starts at a random point, so two pytest processes run by ctest -j2 rarely pick the same.
    # bench/ picks its ports from 23000 up, checking them with SO_REUSEADDR (which our
    # reservations let through): the tests stay below, so that bench_smoke never shares one.
    lo = 20000
    try:
        eph_lo = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        eph_lo = 32768
    hi = min(eph_lo - 1, 23000) if eph_lo > lo + 2000 else 65000
    return lo, hi


def _can_bind(port: int, family: int = socket.AF_INET, host: str = "127.0.0.1",
              kind: int = socket.SOCK_STREAM) -> bool:
    try:
        with socket.socket(family, kind) as s:
            s.bind((host, port))
        return True
    except OSError:
        return False


def _port_is_free(port: int) -> bool:
    if not _can_bind(port):
        return False
    if has_ipv6_loopback() and not _can_bind(port, socket.AF_INET6, "::1"):
        return False
    return True


def free_port_range(count: int = 1) -> int:
    """Returns the first of `count` consecutive free TCP ports on 127.0.0.1 (and ::1)."""
    lo, hi = _port_window()
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    with _port_lock:
        for _ in range(2000):
            first = rng.randrange(lo, hi - count)
            ports = range(first, first + count)
            if any(p in _handed_out for p in ports):
                continue
            if all(_port_is_free(p) for p in ports):
                _handed_out.update(ports)
                for p in ports:
                    _reserve(p)
                return first
    raise RuntimeError("no free port found")


def free_port() -> int:
    """A free TCP port on 127.0.0.1 that no other caller in this process has been given.

    Chosen outside the ephemeral range, checked with a bind, then kept bound (see _reserved):
    another test process cannot pick it too."""
    return free_port_range(1)


def ephemeral_port() -> int:
    """The classic way: bind :0 and close. Only for places that need a kernel-picked port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_ipv6: bool | None = None


def has_ipv6_loopback() -> bool:
    global _ipv6
    if _ipv6 is None:
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
                s.bind(("::1", 0))
            _ipv6 = True
        except OSError:
            _ipv6 = False
    return _ipv6


def refused_port() -> int:
    """A port where nothing listens: connecting to it is refused at once."""
    return free_port()


def short_tmpdir(prefix: str = "sl") -> str:
    """A short directory under /tmp for unix socket paths (108-byte limit; pytest's tmp_path
    can be longer). The caller removes it (the conftest fixture does)."""
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")


# ----------------------------------------------------------------------------------------------
# /proc based socket inspection (no connection is made, so no counter moves)
# ----------------------------------------------------------------------------------------------

def local_listener(backlog: int = 16) -> socket.socket:
    """A listening socket on 127.0.0.1 with a kernel-picked port, 5 s accept timeout: a stand-in
    server whose accepted connections the test drives by hand."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(backlog)
    ls.settimeout(5)
    return ls


def read_end(sock: socket.socket, timeout: float = 5.0) -> str:
    """Reads until the connection ends: 'eof' for a FIN, 'reset' for a RST."""
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
        return "eof"
    except ConnectionResetError:
        return "reset"


def tcp_sockets() -> list[list[str]]:
    """The rows of /proc/net/tcp and tcp6, split in fields: [1] local and [2] remote address
    (hex addr:port), [3] state (0A listen, 06 time-wait, ...), [9] inode."""
    rows = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        rows.extend(f for f in (line.split() for line in lines) if len(f) > 9)
    return rows


def _port_of(addr: str) -> int:
    return int(addr.rsplit(":", 1)[1], 16)


def _listening_inodes(port: int) -> set[str]:
    return {f[9] for f in tcp_sockets() if f[3] == "0A" and _port_of(f[1]) == port}


def time_wait_towards(port: int) -> int:
    """TIME_WAIT sockets on this host whose remote end is port `port`."""
    return sum(1 for f in tcp_sockets() if f[3] == "06" and _port_of(f[2]) == port)


def _unix_listening_inodes(path: str) -> set[str]:
    inodes = set()
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return inodes
    for line in lines:
        f = line.split()
        # Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 = listening
        # haproxy-style binding (bind "<path>.<pid>.tmp", then rename) leaves the tmp name here.
        if (len(f) >= 8 and (f[7] == path or f[7].startswith(path + "."))
                and int(f[3], 16) & 0x10000):
            inodes.add(f[6])
    return inodes


def process_socket_inodes(pid: int) -> set[str]:
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return inodes
    for name in names:
        try:
            target = os.readlink(f"{fd_dir}/{name}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def is_listening(port: int, pid: int | None = None) -> bool:
    """True if a TCP socket listens on `port` (owned by `pid` when given)."""
    inodes = _listening_inodes(port)
    if pid is None:
        return bool(inodes)
    return bool(inodes & process_socket_inodes(pid))


def is_listening_unix(path: str, pid: int | None = None) -> bool:
    inodes = _unix_listening_inodes(path)
    if pid is None:
        return bool(inodes)
    return bool(inodes & process_socket_inodes(pid))


def _exe_of(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def descendants(pid: int) -> list[int]:
    """Every process below pid (its children, theirs...), from /proc."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        kids = []
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                kids += [int(x) for x in (task / "children").read_text().split()]
        out += kids
        todo += kids
    return out


def pid_alive(pid: int) -> bool:
    """True if pid exists and is not a zombie (a daemon's zombie may linger unreaped in a
    container whose init does not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def connect_refused(port: int, host: str = "127.0.0.1") -> bool:
    """True if a TCP connect to host:port is refused right now."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


# ----------------------------------------------------------------------------------------------
# Configuration files
# ----------------------------------------------------------------------------------------------

def write_config(tmp_path, text: str, name: str = "sluice.cfg") -> Path:
    """Writes a configuration file (dedented, ending with LF) and returns its path."""
    import textwrap
    body = textwrap.dedent(text).lstrip("\n")
    if not body.endswith("\n"):
        body += "\n"
    path = Path(tmp_path) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def line_of(path: Path | str, needle: str) -> int:
    """1-based number of the first line of `path` containing `needle`."""
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if needle in line:
            return i
    raise ValueError(f"{needle!r} not in {path}")


# ----------------------------------------------------------------------------------------------
# Running sluice
# ----------------------------------------------------------------------------------------------

def run_sluice(args: Sequence[str], timeout: float = 20.0, env: dict | None = None,
               cwd: str | None = None) -> tuple[int, str, str]:
    """Runs sluice to completion (-c, -cc, -v, -D ...) and returns (rc, stdout, stderr).

    Output goes through temporary files, not pipes, so a daemon child that keeps them open
    cannot make this hang."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sluice_bin(), *args], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err, env=full_env, cwd=cwd)
        try:
            rc = proc.wait(timeout=timeout * slow_factor())
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError(f"sluice {' '.join(args)} did not finish within {timeout}s")
        out.seek(0)
        err.seek(0)
        return rc, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def config_refused(path, message: str) -> None:
    """`sluice -c -f path` fails and its stderr says `message`."""
    rc, _, err = run_sluice(["-c", "-f", str(path)])
    assert rc != 0, f"{path} was accepted"
    assert message in err, (message, err)


class Sluice:
    """One sluice process in the foreground. Output is captured to files in `workdir`.

        with Sluice(tmp_path) as s:
            s.start(cfg)
            s.wait_listening(port)
            ...
            assert s.stop() == 0
    """

    def __init__(self, workdir, binary: str | None = None):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.binary = binary or sluice_bin()
        self.proc: subprocess.Popen | None = None
        self.stdout_path = self.workdir / "sluice.stdout"
        self.stderr_path = self.workdir / "sluice.stderr"
        self.args: list[str] = []

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, cfg: Path | str | Sequence[Path | str], extra_args: Sequence[str] = (),
              env: dict | None = None, pass_fds: Iterable[int] = ()) -> subprocess.Popen:
        cfgs = [cfg] if isinstance(cfg, (str, Path)) else list(cfg)
        self.args = [self.binary]
        for c in cfgs:
            self.args += ["-f", str(c)]
        self.args += list(extra_args)
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        # Unique names per start, so a test that restarts keeps every log.
        n = 0
        while True:
            suffix = "" if n == 0 else f".{n}"
            out, err = (self.workdir / f"sluice.stdout{suffix}",
                        self.workdir / f"sluice.stderr{suffix}")
            if not out.exists():
                break
            n += 1
        self.stdout_path, self.stderr_path = out, err
        with open(out, "wb") as fo, open(err, "wb") as fe:
            self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=fo,
                                         stderr=fe, env=full_env, pass_fds=tuple(pass_fds),
                                         cwd=str(self.workdir))
        return self.proc

    @property
    def pid(self) -> int:
        assert self.proc is not None, "sluice not started"
        return self.proc.pid

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stdout(self) -> str:
        try:
            return self.stdout_path.read_text(errors="replace")
        except OSError:
            return ""

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    def describe(self) -> str:
        rc = None if self.proc is None else self.proc.poll()
        return (f"sluice {' '.join(self.args[1:])} (exit={rc})\n--- stdout:\n{self.stdout()[-3000:]}"
                f"\n--- stderr:\n{self.stderr()[-3000:]}")

    def _check_alive(self, what: str) -> None:
        if not self.running():
            raise ProcessExited(f"sluice exited while waiting for {what}\n{self.describe()}")

    def wait_listening(self, port: int, timeout: float = 10.0) -> None:
        """Waits until sluice itself has a TCP socket listening on port (read from /proc, so
        no connection is made and no counter moves)."""
        def ready():
            self._check_alive(f"port {port}")
            return is_listening(port, self.pid)
        wait_until(ready, timeout, message=lambda: f"port {port} to listen\n{self.describe()}")

    def wait_listening_unix(self, path: str, timeout: float = 10.0) -> None:
        def ready():
            self._check_alive(f"unix socket {path}")
            return os.path.exists(path) and is_listening_unix(str(path), self.pid)
        wait_until(ready, timeout, message=lambda: f"{path} to listen\n{self.describe()}")

    def wait_exit(self, timeout: float = 5.0) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=timeout * slow_factor())
        except subprocess.TimeoutExpired:
            raise AssertionError(f"sluice still running after {timeout}s\n{self.describe()}")

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self, sig: int = _signal_mod.SIGTERM, timeout: float = 5.0) -> int:
        """Sends sig and waits for the exit; returns the exit code (negative: killed by a
        signal). If it does not exit in time it is killed and AssertionError is raised."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout * slow_factor())
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"sluice did not exit within {timeout}s of signal {sig}\n"
                                 f"{self.describe()}")

    def kill(self) -> None:
        """Kills the process and checks that the sluice processes it started (master-worker
        mode's workers) leave with it: one still there 5 s later is killed too, and reported.
        Other descendants (external check commands) are killed without a report."""
        if self.proc is None:
            return
        left = descendants(self.proc.pid) if self.proc.poll() is None else []
        exe = _exe_of(self.proc.pid)
        own = [p for p in left if exe and _exe_of(p) == exe]
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        deadline = time.monotonic() + 5 * slow_factor()
        while any(pid_alive(p) for p in left) and time.monotonic() < deadline:
            time.sleep(0.02)
        stayed = [p for p in left if pid_alive(p)]
        # Judged by what each one runs now: an external check's child was still sluice between
        # its fork and its exec when `own` was taken, and is the check's command by now.
        stayed_own = [p for p in stayed if p in own and _exe_of(p) == exe]
        for p in stayed:
            with contextlib.suppress(OSError):
                os.kill(p, _signal_mod.SIGKILL)
        assert not stayed_own, f"sluice processes {stayed_own} outlived their master {self.proc.pid}"

    def __enter__(self) -> "Sluice":
        return self

    def __exit__(self, *exc) -> None:
        self.kill()


# ----------------------------------------------------------------------------------------------
# Stats socket (CLI) clients
# ----------------------------------------------------------------------------------------------

def _connect(addr, timeout: float) -> socket.socket:
    if isinstance(addr, (str, Path)):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(str(addr))
        return s
    s = socket.create_connection(addr, timeout=timeout)
    return s


def recv_all(sock: socket.socket, timeout: float = 5.0, limit: int = 1 << 30) -> bytes:
    """Reads until EOF (or reset, which then raises). Deadline-bounded."""
    deadline = time.monotonic() + timeout * slow_factor()
    chunks = []
    total = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no EOF within {timeout}s; got {total} bytes: "
                                 f"{b''.join(chunks)[-200:]!r}")
        sock.settimeout(left)
        try:
            data = sock.recv(1 << 16)
        except socket.timeout:
            continue
        if not data:
            return b"".join(chunks)
        chunks.append(data)
        total += len(data)
        if total > limit:
            raise AssertionError("too much data")


def cli(addr, command: str, timeout: float = 5.0) -> str:
    """Sends `command` plus LF to a stats socket (unix path or (host, port)), half-closes, and
    returns everything received up to EOF, the way `echo cmd | socat - ADDR` scripts do."""
    with _connect(addr, timeout) as s:
        if not command.endswith("\n"):
            command += "\n"
        s.sendall(command.encode())
        s.shutdown(socket.SHUT_WR)
        return recv_all(s, timeout).decode(errors="replace")


def socat_address(addr) -> str:
    if isinstance(addr, (str, Path)):
        return f"UNIX-CONNECT:{addr}"
    host, port = addr
    return f"TCP6:[{host}]:{port}" if ":" in host else f"TCP4:{host}:{port}"


def cli_socat(addr, command: str, timeout: float = 5.0) -> str:
    """Same as cli() but through the socat binary, as operators and tools do it."""
    if shutil.which("socat") is None:
        raise RuntimeError("socat not installed (scripts/setup.sh installs it)")
    if not command.endswith("\n"):
        command += "\n"
    # -t: how long socat waits for the answer after stdin's EOF; it exits as soon as the
    # server closes, so a long value costs nothing when sluice answers.
    proc = subprocess.run(["socat", f"-t{timeout}", "-", socat_address(addr)],
                          input=command.encode(), capture_output=True,
                          timeout=(timeout + 5) * slow_factor())
    if proc.returncode != 0:
        raise AssertionError(f"socat failed ({proc.returncode}): {proc.stderr.decode()}")
    return proc.stdout.decode(errors="replace")


class CliConn:
    """An open stats socket connection for prompt/interactive mode."""

    def __init__(self, addr, timeout: float = 5.0):
        self.timeout = timeout
        self.sock = _connect(addr, timeout)
        self.buf = b""

    def send(self, text: str) -> None:
        self.sock.sendall(text.encode())

    def read_until(self, suffix: bytes | str, timeout: float | None = None) -> str:
        """Reads until the received bytes end with suffix; returns them and clears the buffer."""
        if isinstance(suffix, str):
            suffix = suffix.encode()
        deadline = time.monotonic() + (timeout or self.timeout) * slow_factor()
        while not self.buf.endswith(suffix):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"expected data ending with {suffix!r}, got {self.buf!r}")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                raise AssertionError(f"EOF while waiting for {suffix!r}; got {self.buf!r}")
            self.buf += data
        out, self.buf = self.buf, b""
        return out.decode(errors="replace")

    def read_to_eof(self, timeout: float | None = None) -> str:
        rest = recv_all(self.sock, timeout or self.timeout)
        out, self.buf = self.buf + rest, b""
        return out.decode(errors="replace")

    def close(self) -> None:
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def parse_show_info(text: str) -> dict[str, str]:
    info = {}
    for line in text.splitlines():
        if ": " in line:
            k, v = line.split(": ", 1)
            info[k] = v
    return info


def parse_show_stat(text: str) -> tuple[list[str], list[dict[str, str]]]:
    """Returns (header names, rows as dicts) of a `show stat` CSV answer."""
    lines = [l for l in text.splitlines() if l]
    assert lines and lines[0].startswith("# "), f"bad show stat answer: {text[:300]!r}"
    header = lines[0][2:].rstrip(",").split(",")
    # Fields with a comma or a quote come quoted (CSV), as `last_chk` texts may.
    rows = [dict(zip(header, fields)) for fields in csv.reader(lines[1:])]
    return header, rows


def stat_row(rows: list[dict[str, str]], pxname: str, svname: str) -> dict[str, str]:
    for r in rows:
        if r.get("pxname") == pxname and r.get("svname") == svname:
            return r
    raise AssertionError(f"no show stat row {pxname}/{svname} in {[(r.get('pxname'), r.get('svname')) for r in rows]}")


def stat_int(row: dict[str, str], name: str) -> int:
    v = row.get(name, "")
    return int(v) if v else 0


# ----------------------------------------------------------------------------------------------
# Test data
# ----------------------------------------------------------------------------------------------

def pattern(n: int, seed: int = 0) -> bytes:
    """n bytes of a deterministic, non-repeating-looking pattern (blocks of sha256 output)."""
    out = bytearray()
    block = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{block}".encode()).digest() * 64  # 2 KiB per block
        block += 1
    return bytes(out[:n])


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# The fake servers (fake_servers.py) and the raw clients and log receivers (clients.py) use the
# helpers above; tests import them from here. Imported last, so that those names are defined.
from fake_servers import TcpServer, EchoServer, SinkServer, SourceServer, SilentServer, SynBlackhole  # noqa: E402,F401
from clients import connect, echo_roundtrip, queued_clients, recv_exact, recv_head, wait_closed, no_data_for, nginx_bin, Nginx, start_nginx, http_get, UdpLogReceiver, UnixDgramLogReceiver, show_stat, show_info, KeepAliveClients, EchoLoad, accepted_per_thread, roundtrip_from_cpu  # noqa: E402,F401
