"""Certificates replaced at run time through the stats socket, as HAProxy does it: `show ssl
cert`, `set ssl cert` (a transaction), `commit ssl cert`, `abort ssl cert`, `new`/`del ssl
cert`. A commit takes effect for new handshakes at once on every bind line that uses the
file; an established connection keeps its certificate and goes on; a session made before is
not resumed. Passes with SLUICE_BIN pointing at HAProxy 3.5 -db."""
from __future__ import annotations

import socket
import ssl

import pytest

from sluice_harness import HTTP_DEFAULTS, cli, free_port, wait_until
from clients import request_ok as request
from tls_certs import Pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    p = Pki(d)
    p.a = p.issue("a", "a.test", ["a.test", "b.test"], key="ecdsa")
    p.b = p.issue("b", "b.test", ["a.test", "b.test"])
    return p


def peer_cn(c: ssl.SSLSocket) -> str:
    return dict(x[0] for x in c.getpeercert()["subject"])["commonName"]


def test_set_commit_abort_show(cfg, sluice, pki, short_tmp):
    port, port2, sock, opsock = free_port(), free_port(), short_tmp / "a.sock", short_tmp / "o.sock"
    sluice(cfg(f"""
global
    nbthread 1
    stats socket {sock} level admin
    stats socket {opsock} level operator
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {pki.a}
    bind 127.0.0.1:{port2} ssl crt {pki.a}
    http-request return status 200 content-type text/plain string ok
"""), wait_ports=[port, port2], wait_unix=[sock, opsock])
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    path = str(pki.a)

    def connect(p: int = port, session=None) -> ssl.SSLSocket:
        raw = socket.create_connection(("127.0.0.1", p), timeout=10)
        return ctx.wrap_socket(raw, server_hostname="a.test", session=session)

    assert cli(sock, "show ssl cert") == f"# filename\n{path}\n\n"
    details = cli(opsock, f"show ssl cert {path}")
    assert f"Filename: {path}\n" in details and "Status: Used\n" in details, details
    assert "Subject: /CN=a.test\n" in details and "Issuer: /CN=Test CA\n" in details, details
    assert "Subject Alternative Name: DNS:a.test, DNS:b.test\n" in details, details
    assert "Algorithm: EC256\n" in details, details
    # An established connection, and a session to resume later.
    old = connect()
    assert peer_cn(old) == "a.test" and b" 200 " in request(old)
    session = old.session
    # Errors first: a file no bind line uses, a payload that is no certificate, no transaction.
    nope = path + ".nope"
    assert cli(sock, f"set ssl cert {nope} <<\n{pki.b.read_text()}\n") == (
        "Can't replace a certificate which is not referenced by the configuration!\n"
        f"Can't update {nope}!\n\n")
    bad = cli(sock, f"set ssl cert {path} <<\ngarbage\n\n")
    assert bad.endswith(f"Can't load the payload\nCan't update {path}!\n\n"), bad
    assert cli(sock, f"commit ssl cert {path}") == f"No ongoing transaction! !\nCan't commit {path}!\n\n"
    assert cli(sock, f"abort ssl cert {path}") == "No ongoing transaction!\n\n"
    assert cli(opsock, f"set ssl cert {path} <<\n{pki.b.read_text()}\n") == "Permission denied\n\n"
    # A transaction: shown, not used before its commit, then dropped by abort.
    payload = pki.b.read_text()
    assert cli(sock, f"set ssl cert {path} <<\n{payload}\n") == (
        f"Transaction created for certificate {path}!\n\n")
    assert cli(sock, f"set ssl cert {path} <<\n{payload}\n") == (
        f"Transaction updated for certificate {path}!\n\n")
    assert cli(sock, "show ssl cert") == f"# transaction\n*{path}\n# filename\n{path}\n\n"
    assert "Subject: /CN=b.test\n" in cli(sock, f"show ssl cert *{path}")
    with connect() as c:
        assert peer_cn(c) == "a.test"
    assert cli(sock, f"abort ssl cert {path}") == f"Transaction aborted for certificate '{path}'!\n\n"
    assert cli(sock, "show ssl cert") == f"# filename\n{path}\n\n"
    # Committed: both bind lines serve the new certificate to new handshakes.
    cli(sock, f"set ssl cert {path} <<\n{payload}\n")
    assert cli(sock, f"commit ssl cert {path}") == f"Committing {path}..\nSuccess!\n\n"
    for p in (port, port2):
        with connect(p) as c:
            assert peer_cn(c) == "b.test" and b" 200 " in request(c)
    assert "Subject: /CN=b.test\n" in cli(sock, f"show ssl cert {path}")
    # The connection made before goes on with its own certificate; its session is not
    # resumed: the client meets the new certificate in a full handshake (HAProxy's behaviour).
    assert b" 200 " in request(old) and peer_cn(old) == "a.test"
    old.close()
    with connect(session=session) as c:
        assert not c.session_reused and peer_cn(c) == "b.test"
        assert b" 200 " in request(c)


def test_new_and_del(cfg, sluice, pki, short_tmp):
    port, sock = free_port(), short_tmp / "a.sock"
    sluice(cfg(f"""
global
    stats socket {sock} level admin
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {pki.a}
    http-request return status 200 content-type text/plain string ok
"""), wait_ports=[port], wait_unix=[sock])
    new = str(pki.dir / "new.pem")
    assert cli(sock, f"new ssl cert {new}") == f"New empty certificate store '{new}'!\n\n"
    assert cli(sock, f"new ssl cert {new}") == f"Certificate '{new}' already exists!\n\n"
    assert sorted(cli(sock, "show ssl cert").split("\n")[1:3]) == sorted([new, str(pki.a)])
    assert cli(sock, f"del ssl cert {pki.a}") == (
        f"Can't remove the certificate: certificate '{pki.a}' in use, can't be deleted!\n\n")
    assert cli(sock, f"del ssl cert {new}") == f"Certificate '{new}' deleted!\n\n"
    assert cli(sock, "show ssl cert") == f"# filename\n{pki.a}\n\n"


def _key(n: int = 80) -> str:
    import base64
    import os
    return base64.b64encode(os.urandom(n)).decode()


def test_tls_ticket_keys_shared_and_rotated(cfg, sluice, pki, short_tmp, tmp_path):
    keys = [_key() for _ in range(3)]
    kfile = tmp_path / "tickets.keys"
    kfile.write_text("\n".join(keys) + "\n")
    p1, p2, p3, sock = free_port(), free_port(), free_port(), short_tmp / "a.sock"
    conf = f"""
global
    stats socket {sock} level admin
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{p1} ssl crt {pki.a} tls-ticket-keys {kfile}
    bind 127.0.0.1:{p2} ssl crt {pki.a} tls-ticket-keys {kfile}
    http-request return status 200 content-type text/plain string ok
"""
    sluice(cfg(conf), wait_ports=[p1, p2], wait_unix=[sock])
    # A second process with the same file (another instance, or the one after a reload).
    other = tmp_path / "other.cfg"
    other.write_text(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{p3} ssl crt {pki.a} tls-ticket-keys {kfile}
    http-request return status 200 content-type text/plain string ok
""")
    sluice(other, wait_ports=[p3])
    ctx = ssl.create_default_context(cafile=str(pki.ca))

    def handshake(port: int, session=None):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="a.test", session=session) as c:
                assert b" 200 " in request(c)   # the tickets come with the answer
                return c.session, c.session_reused
    session, _ = handshake(p1)
    assert handshake(p2, session)[1] and handshake(p3, session)[1]
    assert cli(sock, "show tls-keys") == f"# id (file)\n0 ({kfile})\n\n"
    listed = f"# id secret\n# 0 ({kfile})\n0.0 {keys[0]}\n0.1 {keys[1]}\n0.2 {keys[2]}\n\n"
    assert cli(sock, f"show tls-keys {kfile}") == listed
    assert cli(sock, "show tls-keys #0") == listed
    assert cli(sock, "show tls-keys #7") == "'show tls-keys' unable to locate referenced filename\n\n"
    # Rotation: the new key is the newest, the one before it seals; the session sealed with the
    # old sealing key still opens while that key is in the ring, then no more.
    new = _key()
    assert cli(sock, f"set ssl tls-key {kfile} {new}") == "TLS ticket key updated!\n\n"
    assert cli(sock, f"show tls-keys #0") == (
        f"# id secret\n# 0 ({kfile})\n0.0 {keys[1]}\n0.1 {keys[2]}\n0.2 {new}\n\n")
    assert handshake(p1, session)[1]
    cli(sock, f"set ssl tls-key #0 {_key()}")
    cli(sock, f"set ssl tls-key #0 {_key()}")
    assert not handshake(p1, session)[1]
    assert cli(sock, f"set ssl tls-key #0 {_key(48)}") == (
        "'set ssl tls-key' received a key of wrong size.\n\n")
    assert cli(sock, f"set ssl tls-key /nope {new}") == (
        "'set ssl tls-key' unable to locate referenced filename\n\n")


@pytest.mark.parametrize("content,message", [
    ("{k}\n{k}\n", "please supply at least 3 keys in the tls-tickets-file"),
    ("x\n{k}\n{k}\n{k}\n", "unable to decode base64 key on line 1"),
    ("{k}\n{k}\n{k}\n{s}\n", "wrong sized key on line 4"),
])
def test_tls_ticket_keys_file_errors(tmp_path, pki, content, message):
    import subprocess
    from sluice_harness import sluice_bin
    kfile = tmp_path / "k"
    kfile.write_text(content.format(k=_key(), s=_key(48)))
    conf = tmp_path / "t.cfg"
    conf.write_text(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{free_port()} ssl crt {pki.a} tls-ticket-keys {kfile}
""")
    r = subprocess.run([sluice_bin(), "-c", "-f", str(conf)], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 0 and f"'{kfile}' : {message}" in r.stderr, r.stderr


def test_show_crt_list(cfg, sluice, pki, short_tmp, tmp_path):
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "one.pem").write_text(pki.a.read_text())
    listfile = tmp_path / "list.txt"
    listfile.write_text(f"{pki.a} [alpn h2,http/1.1 ssl-min-ver TLSv1.2] a.test !x.a.test\n"
                        f"# a comment\n{pki.b} *.b.test\n")
    port, port2, sock = free_port(), free_port(), short_tmp / "a.sock"
    sluice(cfg(f"""
global
    stats socket {sock} level admin
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt-list {listfile}
    bind 127.0.0.1:{port2} ssl crt {certs}
    http-request return status 200 content-type text/plain string ok
"""), wait_ports=[port, port2], wait_unix=[sock])
    assert cli(sock, "show ssl crt-list") == f"{certs}\n{listfile}\n\n"   # by name
    # (HAProxy 3.5 writes the alpn value with its terminating NUL: left out here.)
    assert cli(sock, f"show ssl crt-list {listfile}").replace("\x00", "") == (
        f"# {listfile}\n{pki.a} [alpn h2,http/1.1 ssl-min-ver TLSv1.2] a.test !x.a.test\n"
        f"{pki.b} *.b.test\n\n")
    assert cli(sock, f"show ssl crt-list -n {listfile}").replace("\x00", "") == (
        f"# {listfile}\n{pki.a}:1 [alpn h2,http/1.1 ssl-min-ver TLSv1.2] a.test !x.a.test\n"
        f"{pki.b}:3 *.b.test\n\n")
    assert cli(sock, f"show ssl crt-list {certs}") == f"# {certs}\n{certs}/one.pem\n\n"
    assert cli(sock, "show ssl crt-list /nope") == "didn't find the specified filename\n\n"
