"""Userlists and HTTP authentication as HAProxy 3.5 does them: `userlist` sections (users with
crypt(3) hashes of every kind libcrypt knows, insecure passwords, groups named from either
side), `http-request auth [realm]` and its 401 (keep-alive kept), `http_auth`, `http_auth_group`
in ACLs and as a fetch, `http_auth_user|pass|type|bearer`, and the configuration errors. The
expected bytes and texts are HAProxy 3.5-dev5's (this file passes with SLUICE_BIN pointing at a
wrapper that runs it with -db)."""
from __future__ import annotations

import base64
import warnings

import pytest

from clients import exchange
from sluice_harness import HTTP_DEFAULTS, config_refused, free_port, line_of, run_sluice

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt  # Debian 12's python3.11 still has it; it calls libcrypt's crypt()

# One setting per hash method of libxcrypt (Debian 12): yescrypt, gost-yescrypt, scrypt,
# bcrypt, sha512crypt, sha256crypt, sha1crypt, SunMD5, md5crypt, NT, BSDi and DES.
SETTINGS = {
    "yescrypt": "$y$j9T$abcdefghijklmnop$",
    "gostyescrypt": "$gy$j9T$abcdefghijklmnop$",
    "scrypt": "$7$CU..../....abcdefghijklmnop$",
    "bcrypt": "$2b$05$abcdefghijklmnopqrstuu",
    "sha512": "$6$saltsalt$",
    "sha256": "$5$saltsalt$",
    "sha1": "$sha1$1000$saltsalt$",
    "sunmd5": "$md5$saltsalt$",
    "md5": "$1$saltsalt$",
    "nt": "$3$",
    "bsdi": "_J9..salt",
    "des": "ab",
}

UNAUTHORIZED = (b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 112\r\ncache-control: no-cache\r\n"
                b"content-type: text/html\r\nwww-authenticate: Basic realm=\"%s\"\r\n\r\n"
                b"<html><body><h1>401 Unauthorized</h1>\nYou need a valid user and password to "
                b"access this content.\n</body></html>\n")


def basic(user: str, pw: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()


def get(port: int, path: str = "/", auth: str | None = None) -> tuple[int, bytes]:
    hdr = f"Authorization: {auth}\r\n" if auth is not None else ""
    got = exchange(port, f"GET {path} HTTP/1.1\r\nHost: t\r\n{hdr}Connection: close\r\n\r\n".encode())
    head, _, body = got.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def userlist_text() -> str:
    lines = ["userlist L1", "  group admins users root,alice", "  group ops"]
    for name, setting in SETTINGS.items():
        lines.append(f"  user {name} password {crypt.crypt('pw-' + name, setting)}")
    lines += ["  user alice insecure-password wonder groups ops",
              "  user root password " + crypt.crypt("toor", "$6$rootsalt$"),
              "  user nopass",
              "  user badhash password notahash",
              ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def proxy(cfg, sluice):
    port = free_port()
    text = f"""
{HTTP_DEFAULTS}
{userlist_text()}
frontend f
    bind 127.0.0.1:{port}
    acl ok http_auth(L1)
    acl admin http_auth_group(L1) admins
    acl ops http_auth_group(L1) ops nosuch_is_checked_below
    http-request auth if {{ path /plain }} !ok
    http-request auth realm "Admin area" if {{ path_beg /admin }} !admin
    http-request auth realm Ops if {{ path /ops }} !ops
    http-request return status 200 content-type text/plain lf-string "user=%[http_auth_user] pass=%[http_auth_pass] type=%[http_auth_type] grp=%[http_auth_group(L1)] ok=%[http_auth(L1)] bearer=%[http_auth_bearer] x=%[http_auth_bearer(x-token)]\\n"
"""
    return port, text


def start(cfg, sluice, text: str, port: int):
    return sluice(cfg(text), wait_ports=[port])


def test_every_hash_type(cfg, sluice, proxy):
    port, text = proxy
    # The ACL naming a group that does not exist is refused: keep only the real group here.
    start(cfg, sluice, text.replace(" nosuch_is_checked_below", ""), port)
    for name in SETTINGS:
        assert get(port, "/plain", basic(name, "pw-" + name))[0] == 200, name
        assert get(port, "/plain", basic(name, "wrong"))[0] == 401, name
    assert get(port, "/plain", basic("alice", "wonder"))[0] == 200
    assert get(port, "/plain", basic("alice", "wonderx"))[0] == 401
    # No password, a hash libcrypt does not know, an unknown user: never authenticated.
    assert get(port, "/plain", basic("nopass", ""))[0] == 401
    assert get(port, "/plain", basic("badhash", "notahash"))[0] == 401
    assert get(port, "/plain", basic("ghost", "x"))[0] == 401


def test_auth_reply_groups_and_fetches(cfg, sluice, proxy):
    port, text = proxy
    start(cfg, sluice, text.replace(" nosuch_is_checked_below", ""), port)
    # The 401 of `http-request auth`: the realm defaults to the proxy's name; keep-alive stays.
    got = exchange(port, b"GET /plain HTTP/1.1\r\nHost: t\r\n\r\nGET /x HTTP/1.1\r\nHost: t\r\n"
                         b"Connection: close\r\n\r\n")
    assert got.startswith(UNAUTHORIZED % b"f"), got
    assert got[len(UNAUTHORIZED % b"f"):].startswith(b"HTTP/1.1 200 OK\r\n"), got
    got = exchange(port, b"GET /admin HTTP/1.0\r\n\r\n")
    assert got == (UNAUTHORIZED % b"Admin area").replace(
        b"\r\n\r\n", b"\r\nconnection: close\r\n\r\n", 1), got
    # Groups: `group admins users root,alice` and `user alice ... groups ops`.
    assert get(port, "/admin", basic("root", "toor"))[0] == 200
    assert get(port, "/admin", basic("alice", "wonder"))[0] == 200
    assert get(port, "/admin", basic("md5", "pw-md5"))[0] == 401
    assert get(port, "/ops", basic("alice", "wonder"))[0] == 200
    assert get(port, "/ops", basic("root", "toor"))[0] == 401
    assert get(port, "/ops", basic("alice", "nope"))[0] == 401
    # The fetches.
    st, body = get(port, "/x", basic("alice", "wonder"))
    assert body == b"user=alice pass=wonder type=Basic grp=alice ok=1 bearer= x=\n"
    st, body = get(port, "/x", basic("alice", "bad"))
    assert body == b"user=alice pass=bad type=Basic grp= ok=0 bearer= x=\n"
    st, body = get(port, "/x", "basic  YTp4")   # case-insensitive scheme, blanks skipped
    assert body == b"user=a pass=x type=Basic grp= ok=0 bearer= x=\n"
    for bad in ("Basic !!!", "Basic YQ==", "Digest abc", "Basic"):
        st, body = get(port, "/x", bad)
        assert body == b"user= pass= type= grp= ok= bearer= x=\n", bad
    st, body = get(port, "/x", "Bearer tok123")
    assert body == b"user= pass= type=Bearer grp= ok= bearer=tok123 x=\n"
    raw = (b"GET /x HTTP/1.1\r\nHost: t\r\nX-Token: bearer  zz\r\nAuthorization: Basic YTp4\r\n"
           b"Authorization: Basic YjpC\r\nConnection: close\r\n\r\n")
    body = exchange(port, raw).partition(b"\r\n\r\n")[2]
    # The first Authorization field counts.
    assert body == b"user=a pass=x type=Basic grp= ok=0 bearer= x=zz\n"


def test_configuration_errors(cfg, proxy):
    port, text = proxy
    path = cfg(text)
    # HAProxy names the proxy and the ACL ("proxy f: acl ops http_auth_group(): invalid group
    # ..."); sluice the line.
    config_refused(path, "invalid group 'nosuch_is_checked_below'")

    def refused(body: str, where: str, message: str, head: str = "") -> None:
        p = cfg(f"{HTTP_DEFAULTS}\n{head}\nfrontend f\n    bind 127.0.0.1:{free_port()}\n{body}\n")
        config_refused(p, f"[{p}:{line_of(p, where)}]")
        config_refused(p, message)

    refused("    acl x http_auth(NOPE)\n    http-request deny if x", "acl x",
            "unable to find userlist 'NOPE'")
    refused("    http-request auth realm", "auth realm", "missing realm value.")
    refused("    http-request auth foo", "auth foo",
            "'http-request auth' expects either 'if' or 'unless' followed by a condition but found 'foo'.")
    refused("", "user a foo", "'user' only supports 'password', 'insecure-password' and 'groups' options.",
            "userlist L\n  user a foo x")
    refused("", "group G foo", "'group' only supports 'users' option.", "userlist L\n  group G foo x")
    refused("", "  foo", "unknown keyword 'foo' in 'userlist' section", "userlist L\n  foo")
    refused("", "userlist", "'userlist' expects <name> as arguments.", "userlist")
    p = cfg(f"{HTTP_DEFAULTS}\nuserlist L\n  group G users a,b\n  user a insecure-password x\n"
            f"frontend f\n    bind 127.0.0.1:{free_port()}\n")
    config_refused(p, "userlist 'L': no such user 'b' specified in group 'G'")
    p = cfg(f"{HTTP_DEFAULTS}\nuserlist L\n  user a insecure-password x groups Z\n"
            f"frontend f\n    bind 127.0.0.1:{free_port()}\n")
    config_refused(p, "userlist 'L': no such group 'Z' specified in user 'a'")
    # Duplicates are ignored with a warning; a group may be named before its line.
    p = cfg(f"{HTTP_DEFAULTS}\nuserlist L\n  user a insecure-password x groups G\n  group G\n"
            f"  user a insecure-password y\n  group G\nuserlist L\n"
            f"frontend f\n    bind 127.0.0.1:{free_port()}\n")
    rc, out, err = run_sluice(["-c", "-f", str(p)])
    assert rc == 0, err
    first = line_of(p, "userlist L")
    assert f"parsing [{p}:{first + 3}]: ignoring duplicated user 'a' in userlist 'L'." in err
    assert f"parsing [{p}:{first + 4}]: ignoring duplicated group 'G' in userlist 'L'." in err
    assert f"parsing [{p}:{first + 5}]: ignoring duplicated userlist 'L'." in err


def test_hash_warnings(cfg):
    """HAProxy times one check of every hash at start-up and warns from 10 ms on (scrypt with
    these parameters takes hundreds); sluice also warns about a hash libcrypt does not know."""
    slow = crypt.crypt("x", SETTINGS["scrypt"])
    p = cfg(f"{HTTP_DEFAULTS}\nuserlist L\n  user a password {slow}\n  user b password notahash\n"
            f"frontend f\n    bind 127.0.0.1:{free_port()}\n")
    rc, out, err = run_sluice(["-c", "-f", str(p)])
    assert rc == 0, err
    assert (f"parsing [{p}:{line_of(p, 'user a')}]: the hash algorithm used for this password takes "
            in err), err
    if "haproxy version" not in err:   # HAProxy 3.5 on libxcrypt says nothing of it
        assert (f"parsing [{p}:{line_of(p, 'user b')}]: the encrypted password used for user 'b' "
                "is not supported by crypt(3)") in err, err
    assert ("milliseconds to verify, which can have devastating performance and stability impacts. "
            "Please hash this password using a lighter algorithm (one that is compatible with web "
            "usage).") in err
