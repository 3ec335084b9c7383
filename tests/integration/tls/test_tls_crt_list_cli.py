"""crt-list files edited at run time through the stats socket, as HAProxy does it: `add ssl
crt-list <list> <cert>` (or a one-line payload with the entry's own options and SNI filters)
and `del ssl crt-list <list> <cert[:line]>`. The certificate must be known to the process (a
bind line loaded it, or `new`/`set`/`commit ssl cert` made it). New handshakes see the change
at once; established connections and resumable sessions are not touched. Passes with
SLUICE_BIN pointing at HAProxy 3.5 -db (whose `show ssl crt-list` writes the alpn value with
its terminating NUL: left out here)."""
from __future__ import annotations

import socket
import ssl

import pytest

from sluice_harness import HTTP_DEFAULTS, cli, free_port
from clients import request_ok as request
from tls_certs import Pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    p = Pki(tmp_path_factory.mktemp("pki"))
    p.a = p.issue("a", "a.test")
    p.b = p.issue("b", "b.test")
    p.c = p.issue("c", "c.test", key="ecdsa")
    return p


def context(pki, alpn=None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    ctx.check_hostname = False
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


def handshake(port: int, name: str, pki, session=None, alpn=None, ctx=None) -> ssl.SSLSocket:
    ctx = ctx or context(pki, alpn)
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return ctx.wrap_socket(raw, server_hostname=name, session=session)


def served(port: int, name: str, pki) -> str:
    with handshake(port, name, pki) as c:
        return dict(x[0] for x in c.getpeercert()["subject"])["commonName"]


def show(sock, path) -> str:
    return cli(sock, f"show ssl crt-list -n {path}").replace("\x00", "")


def test_add_and_del(cfg, sluice, pki, short_tmp, tmp_path):
    certs = tmp_path / "certs"
    certs.mkdir()
    one = certs / "one.pem"
    one.write_text(pki.a.read_text())
    lst = tmp_path / "list.txt"
    lst.write_text(f"{pki.a}\n{pki.b} b.test\n")
    port, port2 = free_port(), free_port()
    sock, opsock = short_tmp / "a.sock", short_tmp / "o.sock"
    text = f"""
global
    stats socket {sock} level admin
    stats socket {opsock} level operator
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt-list {lst}
    bind 127.0.0.1:{port2} ssl crt {certs}
    http-request return status 200 content-type text/plain string ok
"""
    conf = cfg(text)
    lines = conf.read_text().split("\n")
    bind_line = {p: 1 + next(i for i, x in enumerate(lines) if f":{p} ssl" in x) for p in (port, port2)}
    sluice(conf, wait_ports=[port, port2], wait_unix=[sock, opsock])
    a, b, c = str(pki.a), str(pki.b), str(pki.c)

    # A connection and a session from before the changes.
    keep = context(pki)
    old = handshake(port, "a.test", pki, ctx=keep)
    assert b" 200 " in request(old)
    session = old.session

    # What can be added: a certificate the process knows, which has a certificate in it.
    assert cli(sock, f"add ssl crt-list {lst} {c}") == (
        f"Can't edit the crt-list: certificate '{c}' does not exist!\n\n")
    assert cli(sock, f"add ssl crt-list /nolist {a}") == (
        "Can't edit the crt-list: crt-list '/nolist' does not exist!\n\n")
    assert cli(sock, f"add ssl crt-list {lst}") == (
        "'add ssl crtlist' expects a filename and a certificate name\n\n")
    assert cli(opsock, f"add ssl crt-list {lst} {a}") == "Permission denied\n\n"
    assert cli(sock, f"new ssl cert {c}") == f"New empty certificate store '{c}'!\n\n"
    assert cli(sock, f"add ssl crt-list {lst} {c}") == (
        f"Can't edit the crt-list: certificate '{c}' is empty!\n\n")
    assert cli(sock, f"set ssl cert {c} <<\n{pki.c.read_text()}\n") == (
        f"Transaction created for certificate {c}!\n\n")
    assert cli(sock, f"commit ssl cert {c}") == f"Committing {c}\nSuccess!\n\n"
    assert served(port, "x.test", pki) == "a.test"

    # A payload line with its own options and SNI filters.
    assert cli(sock, f"add ssl crt-list {lst} <<\n{c} [alpn http/1.1 ssl-min-ver TLSv1.3] "
                     f"x.test !y.test\n\n") == (
        f"Inserting certificate '{c}' in crt-list '{lst}'.\nSuccess!\n\n")
    assert show(sock, lst) == (f"# {lst}\n{a}:1\n{b}:2 b.test\n"
                               f"{c}:3 [alpn http/1.1 ssl-min-ver TLSv1.3] x.test !y.test\n\n")
    with handshake(port, "x.test", pki, alpn=["http/1.1"]) as t:
        assert dict(x[0] for x in t.getpeercert()["subject"])["commonName"] == "c.test"
        assert t.version() == "TLSv1.3" and t.selected_alpn_protocol() == "http/1.1"
        assert b" 200 " in request(t)
    # The filters replace the certificate's own names.
    assert served(port, "c.test", pki) == "a.test"
    assert served(port, "b.test", pki) == "b.test"
    # The connection made before goes on, and the session made before still resumes.
    assert b" 200 " in request(old)
    old.close()
    with handshake(port, "a.test", pki, session=session, ctx=keep) as t:
        assert t.session_reused
    # A line without filters answers for the certificate's own names.
    assert cli(sock, f"add ssl crt-list {lst} {c}") == (
        f"Inserting certificate '{c}' in crt-list '{lst}'.\nSuccess!\n\n")
    assert served(port, "c.test", pki) == "c.test"

    # Refused payloads: an unknown option, an option that does not load, two lines.
    assert cli(sock, f"add ssl crt-list {lst} <<\n{c} [bogus 1] z.test\n\n") == (
        "Can't edit the crt-list: parsing [CLI:1]: unknown ssl keyword bogus\n\n")
    assert cli(sock, f"add ssl crt-list {lst} <<\n{c} z.test\n{b} w.test\n\n") == (
        "Can't edit the crt-list: only one line of payload is supported!\n\n")
    assert cli(sock, f"add ssl crt-list {lst} <<\n{c} [verify required] z.test\n\n") == (
        f"Inserting certificate '{c}' in crt-list '{lst}'.\n"
        f"Proxy 'f': verify is enabled but no CA file specified for bind '127.0.0.1:{port}' "
        f"at [{conf}:{bind_line[port]}].\nFailed!\n\n")
    assert served(port, "z.test", pki) == "a.test"

    # A `crt` directory is a list too.
    assert cli(sock, f"add ssl crt-list {certs} {b}") == (
        f"Inserting certificate '{b}' in crt-list '{certs}'.\nSuccess!\n\n")
    assert show(sock, certs) == f"# {certs}\n{one}:0\n{b}:1\n\n"
    assert served(port2, "b.test", pki) == "b.test"

    # Deleting: by name when the certificate has one entry, else by name and line.
    assert cli(sock, f"del ssl crt-list {lst} {c}") == (
        f"Can't delete the entry: found the certificate '{c}' in several entries, please "
        "specify a line number preceded by colons (3, 4)!\n\n")
    assert cli(sock, f"del ssl crt-list {lst} {c}:2") == (
        f"Can't delete the entry: found a certificate '{c}' but the line number is incorrect, "
        "please specify a correct line number preceded by colons (3, 4)!\n\n")
    assert cli(sock, f"del ssl crt-list {lst} {c}:x") == (
        f"Can't delete the entry: wrong line number after colons in '{c}:x'!\n\n")
    assert cli(sock, f"del ssl crt-list {lst} /nope.pem") == (
        "Can't delete the entry: certificate '/nope.pem' does not exist!\n\n")
    assert cli(sock, f"del ssl crt-list /nolist {c}") == (
        "Can't delete the entry: crt-list '/nolist' does not exist!\n\n")
    assert cli(sock, f"del ssl crt-list {lst} {one}") == (
        f"Can't delete the entry: certificate '{one}' can't be found in crt-list '{lst}'!\n\n")
    assert cli(sock, f"del ssl crt-list {lst}") == (
        "'del ssl crtlist' expects a filename and a certificate name\n\n")
    assert cli(sock, f"del ssl crt-list {lst} {a}") == (
        f"Can't delete the entry: certificate '{a}' cannot be deleted, it is used as default "
        f"certificate by the following frontends:\n\t- {conf}:{bind_line[port]}\n\n")
    assert cli(sock, f"del ssl cert {c}") == (
        f"Can't remove the certificate: certificate '{c}' in use, can't be deleted!\n\n")
    assert cli(sock, f"del ssl crt-list {lst} {c}:3") == (
        f"Entry '{c}' deleted in crtlist '{lst}'!\n\n")
    assert served(port, "x.test", pki) == "a.test"
    assert served(port, "c.test", pki) == "c.test"
    assert cli(sock, f"del ssl crt-list {lst} {c}") == f"Entry '{c}' deleted in crtlist '{lst}'!\n\n"
    assert served(port, "c.test", pki) == "a.test"
    assert cli(sock, f"del ssl crt-list {certs} {b}") == (
        f"Entry '{b}' deleted in crtlist '{certs}'!\n\n")
    assert served(port2, "b.test", pki) == "a.test"
    assert show(sock, lst) == f"# {lst}\n{a}:1\n{b}:2 b.test\n\n"
    # Line numbers go on from the last one given.
    assert cli(sock, f"add ssl crt-list {lst} {b}").endswith("Success!\n\n")
    assert show(sock, lst) == f"# {lst}\n{a}:1\n{b}:2 b.test\n{b}:5\n\n"
    # Out of every list, the certificate can go.
    assert cli(sock, f"del ssl cert {c}") == f"Certificate '{c}' deleted!\n\n"
