"""Maps and ACL pattern files, and their changes through the stats CLI, as HAProxy 3.5 answers
them: the map_* converters (lookups, defaults, output types, back-references), `use_backend`
through `map_dom`, ACLs with `-f` (several), `-M` and `-u`, HAProxy's file format, `show map`,
`show acl`, `get map`, `add`/`set`/`del`/`clear`, versions with `prepare`/`commit` and a
payload, and a client hammering a map while the CLI changes it. The expected texts are HAProxy
3.5-dev5's for the same files and commands (this file passes with SLUICE_BIN pointing at a
wrapper that runs it with -db); lines about HAProxy's internal httpclient ACLs are left out of
the listings."""
from __future__ import annotations

import re
import socket
import threading
import time

from sluice_harness import HTTP_DEFAULTS, cli, config_refused, free_port, line_of


def get(port: int, path: str = "/", headers: dict | None = None) -> tuple[int, str]:
    hdrs = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n{hdrs}Connection: close\r\n\r\n".encode())
        got = b""
        while True:
            d = c.recv(65536)
            if not d:
                break
            got += d
    head, _, body = got.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body.decode()


def listing(text: str) -> list[str]:
    """`show map`/`show acl` lines without HAProxy's own httpclient ACLs."""
    return [l for l in text.splitlines() if l and "httpclient" not in l]


def entries(text: str) -> list[str]:
    """`show map <map>` lines without their addresses."""
    return [l.split(" ", 1)[1] for l in text.splitlines() if l]


def write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def start(cfg, sluice, short_tmp, body: str, port: int):
    sock = str(short_tmp / "stats.sock")
    text = f"""
global
    stats socket {sock} level admin
{HTTP_DEFAULTS}
{body}
"""
    path = cfg(text)
    proc = sluice(path, wait_ports=[port], wait_unix=[sock])
    return path, sock


def at(path, needle: str) -> str:
    """`file 'F' line N` of the configuration line holding `needle`."""
    return f"file '{path}' line {line_of(path, needle)}"


HOSTS = """# hosts
example.com be_a
example.com be_dup
/api be_api
/api/v2 be_api2
foo\\ bar spaced
only
"""
IPS = "10.0.0.0/8 net8\n10.1.0.0/16 net16\n10.1.2.3 host\n2001:db8::/32 v6\n"
NUMS = "1 10\n2 20\n"
REGS = "^/u/([0-9]+)$ user-\\1\n^/g/(.*) grp-\\1\n"


def test_map_converters(cfg, sluice, short_tmp, tmp_path):
    hosts, ips = write(tmp_path, "hosts.map", HOSTS), write(tmp_path, "ip.map", IPS)
    nums, regs = write(tmp_path, "num.map", NUMS), write(tmp_path, "r.map", REGS)
    port = free_port()
    fmt = (f"s=%[req.hdr(x-h),map_str({hosts},none)] b=%[path,map_beg({hosts},none)] "
           f"i=%[req.hdr(x-ip),map_ip({ips},none)] n=%[req.hdr(x-n),map_int({nums},none)] "
           f"ni=%[req.hdr(x-h),map_str_int({nums},-1)] r=%[path,map_regm({regs},none)] "
           f"rg=%[path,map_reg({regs},none)] d=%[req.hdr(x-h),map_dom({hosts})] "
           f"e=%[req.hdr(x-h),map({hosts})] k=%[path,map_beg_key({hosts})]")
    start(cfg, sluice, short_tmp, f"""
frontend f
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain lf-string "{fmt}"
""", port)
    _, body = get(port, "/api/v2/z", {"x-h": "example.com", "x-ip": "10.1.2.3", "x-n": "2"})
    # The first of duplicate keys; the longest prefix; the most specific network.
    assert body == ("s=be_a b=be_api2 i=host n=20 ni=-1 r=none rg=none d=be_a e=be_a k=/api/v2"), body
    _, body = get(port, "/u/12", {"x-h": "a.example.com", "x-ip": "10.2.0.1", "x-n": "1"})
    assert body == "s=none b=none i=net8 n=10 ni=-1 r=user-12 rg=user-\\1 d=be_a e= k=", body
    _, body = get(port, "/g/x/y", {"x-h": "only", "x-ip": "2001:db8::5"})
    # `only` has an empty value; without x-n there is no sample to look up.
    assert body.startswith("s= b=none i=v6 n= ni=-1 r=grp-x/y "), body
    _, body = get(port, "/api", {"x-h": "foo\\", "x-ip": "192.0.2.1"})
    # A backslash is not an escape in map files: the key is `foo\`, the value `bar spaced`.
    assert body.startswith("s=bar spaced b=be_api i=none "), body


def test_use_backend_through_map_dom(cfg, sluice, short_tmp, tmp_path):
    hosts = write(tmp_path, "hosts.map", "example.com be_a\nexample.org be_b\n")
    port = free_port()
    _, sock = start(cfg, sluice, short_tmp, f"""
frontend f
    bind 127.0.0.1:{port}
    use_backend %[req.hdr(host),lower,map_dom({hosts},be_default)]
backend be_a
    http-request return status 200 content-type text/plain string a
backend be_b
    http-request return status 200 content-type text/plain string b
backend be_default
    http-request return status 200 content-type text/plain string default
""", port)

    def route(host):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            got = b""
            while d := c.recv(65536):
                got += d
        return got.partition(b"\r\n\r\n")[2].decode()

    assert route("WWW.Example.COM") == "a"
    assert route("static.example.org") == "b"
    assert route("example.net") == "default"
    assert cli(sock, f"add map {hosts} example.net be_b") == "\n"
    assert route("example.net") == "b"
    assert cli(sock, f"del map {hosts} example.com") == "\n"
    assert route("www.example.com") == "default"


def test_acl_files(cfg, sluice, short_tmp, tmp_path):
    hosts = write(tmp_path, "hosts.map", HOSTS)
    ips = write(tmp_path, "ips.acl", "127.0.0.1\n192.168.0.0/16\n")
    words = write(tmp_path, "w.acl", " a b c \n#x\nd\\ e\nbaz\n")
    port = free_port()
    path, sock = start(cfg, sluice, short_tmp, f"""
frontend f
    bind 127.0.0.1:{port}
    acl ma hdr(x-a) -M -f {hosts}
    acl uu hdr(x-b) -u 42 foo bar
    acl ff hdr(x-c) -f {ips} -f {words} qux
    http-request return status 200 content-type text/plain lf-string "ma=%[acl(ma)] uu=%[acl(uu)] ff=%[acl(ff)]"
""", port)
    # hdr() is a string: the addresses of ips.acl are strings here.
    assert get(port, "/", {"x-a": "example.com", "x-b": "bar", "x-c": "127.0.0.1"})[1] == "ma=1 uu=1 ff=1"
    assert get(port, "/", {"x-c": "192.168.1.1"})[1] == "ma=0 uu=0 ff=0"
    assert get(port, "/", {"x-a": "be_a", "x-b": "baz", "x-c": "baz"})[1] == "ma=0 uu=0 ff=1"
    assert get(port, "/", {"x-c": "d\\ e"})[1] == "ma=0 uu=0 ff=1"
    assert get(port, "/", {"x-c": "qux"})[1] == "ma=0 uu=0 ff=1"
    assert get(port, "/", {"x-c": "d e"})[1] == "ma=0 uu=0 ff=0"
    ma, uu, ff = at(path, "acl ma"), at(path, "acl uu"), at(path, "acl ff")
    acls = listing(cli(sock, "show acl"))
    assert acls[0] == "# id (file) description"
    assert acls[1:] == [
        f"0 ({hosts}) pattern loaded from file '{hosts}' used by map at {ma}. curr_ver=0 next_ver=0 entry_cnt=6",
        f"1 () acl 'hdr' {ma}. curr_ver=0 next_ver=0 entry_cnt=0",
        f"2 ({ips}) pattern loaded from file '{ips}' used by acl at {ff}. curr_ver=0 next_ver=0 entry_cnt=2",
        f"3 ({words}) pattern loaded from file '{words}' used by acl at {ff}. curr_ver=0 next_ver=0 entry_cnt=3",
        f"4 () acl 'hdr' {ff}. curr_ver=0 next_ver=0 entry_cnt=1",
        f"42 () acl 'hdr' {uu}. curr_ver=0 next_ver=0 entry_cnt=2",
    ], acls
    # An ACL file's line is the whole line after leading blanks.
    assert entries(cli(sock, f"show acl {words}")) == ["a b c ", "d\\ e", "baz"]
    assert cli(sock, "get acl #42 bar") == 'type=str, case=sensitive, match=yes, idx=tree, pattern="bar"\n\n'
    assert cli(sock, "get acl #42 foox") == "type=str, case=sensitive, match=no\n\n"
    assert cli(sock, "get acl #2 127.0.0.1") == (
        'type=str, case=sensitive, match=yes, idx=tree, pattern="127.0.0.1"\n\n')
    assert cli(sock, "del acl #42 bar") == "\n"
    assert get(port, "/", {"x-b": "bar"})[1] == "ma=0 uu=0 ff=0"
    assert cli(sock, "add acl #42 zed") == "\n"
    assert get(port, "/", {"x-b": "zed"})[1] == "ma=0 uu=1 ff=0"
    assert cli(sock, "add acl #2 /z") == "\n"
    assert get(port, "/", {"x-c": "/z"})[1] == "ma=0 uu=0 ff=1"
    assert cli(sock, "clear acl #42") == "\n"
    assert entries(cli(sock, "show acl #42")) == []
    assert cli(sock, "add acl @3 #42 zz") == (
        "Version number in the future, please use 'prepare acl' before.\n\n")
    assert entries(cli(sock, "show acl #42")) == []
    # An ACL's list named where a map is wanted: HAProxy 3.5 finds no entry there.
    assert cli(sock, "set map #42 zed v") == "entry not found.\n\n"


def test_map_cli(cfg, sluice, short_tmp, tmp_path):
    hosts, nums = write(tmp_path, "hosts.map", HOSTS), write(tmp_path, "num.map", NUMS)
    port = free_port()
    path, sock = start(cfg, sluice, short_tmp, f"""
frontend f
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain lf-string "s=%[req.hdr(x-h),map_str({hosts},none)] b=%[path,map_beg({hosts},none)] n=%[req.hdr(x-h),map_str_int({nums},-1)]"
""", port)
    line = at(path, "http-request return")
    maps = listing(cli(sock, "show map"))
    assert maps == [
        "# id (file) description",
        f"0 ({hosts}) pattern loaded from file '{hosts}' used by map at {line}, by map at {line}. curr_ver=0 next_ver=0 entry_cnt=12",
        f"1 ({nums}) pattern loaded from file '{nums}' used by map at {line}. curr_ver=0 next_ver=0 entry_cnt=2",
    ], maps
    assert entries(cli(sock, f"show map {hosts}")) == [
        "example.com be_a", "example.com be_dup", "/api be_api", "/api/v2 be_api2",
        "foo\\ bar spaced", "only "]
    assert re.fullmatch(r"(0x[0-9a-f]+ \S+ \S*\n)+\n", cli(sock, "show map #1"))
    assert cli(sock, f"get map {hosts} /api/v2/x") == (
        'type=str, case=sensitive, found=no\n'
        'type=beg, case=sensitive, found=yes, idx=tree, key="/api/v2", value="be_api2", type="str"\n\n')
    # Changes, and HAProxy's answers to mistakes.
    assert cli(sock, f"add map {nums} 3 x") == "unable to parse 'x'.\n\n"
    assert cli(sock, f"add map {nums} 3") == (
        "'add map' expects three parameters (map identifier, key and value) or one parameter "
        "(map identifier) and a payload\n\n")
    assert cli(sock, "add map nope a b") == "Unknown map identifier. Please use #<id> or <file>.\n\n"
    assert cli(sock, "show acl #99") == "Unknown ACL identifier. Please use #<id> or <file>.\n\n"
    assert cli(sock, "get map") == "Missing map identifier and/or key.\n\n"
    assert cli(sock, f"del map {hosts}") == "This command expects two parameters: map identifier and key.\n\n"
    assert cli(sock, f"del map {hosts} nope") == "Key not found.\n\n"
    assert cli(sock, f"set map {hosts} zz v") == "entry not found.\n\n"
    assert cli(sock, "commit map") == "Missing version number.\n\n"
    assert cli(sock, "commit map @1") == "Missing map identifier.\n\n"
    assert cli(sock, "clear map") == "Missing map identifier.\n\n"
    assert cli(sock, f"add map {hosts} k v") == "\n"
    assert cli(sock, f"add map {hosts} k v1") == "\n"
    assert cli(sock, f"set map {hosts} k v2") == "\n"
    assert entries(cli(sock, f"show map {hosts}"))[-2:] == ["k v2", "k v2"]
    assert get(port, "/", {"x-h": "k"})[1] == "s=v2 b=none n=-1"
    ref = cli(sock, f"show map {hosts}").splitlines()[0].split()[0]
    assert cli(sock, f"del map {hosts} #{ref}") == "\n"
    assert get(port, "/", {"x-h": "example.com"})[1] == "s=be_dup b=none n=-1"
    assert cli(sock, f"set map {nums} 1 100") == "\n"
    assert get(port, "/", {"x-h": "1"})[1] == "s=none b=none n=100"
    # A version built aside and committed at once; a payload adds many entries.
    # A version nobody prepared is refused, entries and all (HAProxy 3.5's answer).
    assert cli(sock, f"add map @1 {hosts} a b") == (
        "Version number in the future, please use 'prepare map' before.\n\n")
    assert cli(sock, f"add map @1 {hosts} <<\na b\n\n") == (
        "Version number in the future, please use 'prepare map' before.\n\n")
    assert cli(sock, f"prepare map {hosts}") == "New version created: 1\n\n"
    assert entries(cli(sock, f"show map @1 {hosts}")) == []
    assert cli(sock, f"add map @1 {hosts} <<\nnew.com be_new\n/new be_newpath\n\n") == "\n"
    assert entries(cli(sock, f"show map @1 {hosts}")) == ["new.com be_new", "/new be_newpath"]
    assert get(port, "/new", {"x-h": "new.com"})[1] == "s=none b=none n=-1"
    assert cli(sock, f"commit map @2 {hosts}") == "Version number out of range.\n\n"
    assert cli(sock, f"commit map @1 {hosts}") == "\n"
    assert get(port, "/new", {"x-h": "new.com"})[1] == "s=be_new b=be_newpath n=-1"
    assert get(port, "/", {"x-h": "k"})[1] == "s=none b=none n=-1"
    assert f"curr_ver=1 next_ver=1" in cli(sock, "show map")
    assert cli(sock, f"clear map {hosts}") == "\n"
    assert get(port, "/new", {"x-h": "new.com"})[1] == "s=none b=none n=-1"
    # `help map`: the five shortest commands about maps, as HAProxy 3.5 lists them.
    helped = [l.split(":")[0].strip() for l in cli(sock, "help map").splitlines()[1:6]]
    assert helped == ["add map [@<ver>] <map> <key> <val>", "del map <map> [<key>|#<ref>]",
                      "get map <map> <value>", "set map <map> [<key>|#<ref>] <value>",
                      "show map [@<ver>] [map]"], helped


def test_cli_levels(cfg, sluice, short_tmp, tmp_path):
    hosts = write(tmp_path, "hosts.map", HOSTS)
    port = free_port()
    oper, user = str(short_tmp / "oper.sock"), str(short_tmp / "user.sock")
    sluice(cfg(f"""
global
    stats socket {oper} level operator
    stats socket {user} level user
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    http-request set-var(txn.x) req.hdr(x),map({hosts})
    http-request return status 200
"""), wait_ports=[port], wait_unix=[oper, user])
    # Every map and ACL command needs the admin level (HAProxy 3.5).
    for sock in (user, oper):
        for command in ("show map", f"get map {hosts} only", f"add map {hosts} a b", "show acl"):
            assert cli(sock, command) == "Permission denied\n\n", (sock, command)


def test_start_up_errors(cfg, tmp_path):
    bad_ip = write(tmp_path, "bad.map", "10.0.0.0/8 a\nexample.com b\n")
    two = write(tmp_path, "two.map", "a b\n")
    cases = [
        (f"acl x hdr(a) -f {tmp_path}/nofile.acl\n    http-request deny if x",
         f"failed to open pattern file <{tmp_path}/nofile.acl>"),
        (f"http-request set-var(txn.b) req.hdr(x),map_str({tmp_path}/nofile.map)",
         f"invalid args in converter 'map_str' : failed to open pattern file <{tmp_path}/nofile.map>"),
        (f"http-request set-var(txn.b) src,map_ip({bad_ip})",
         f"invalid args in converter 'map_ip' : 'example.com' is not a valid IPv4 or IPv6 address at line 2 of file '{bad_ip}'"),
        (f"http-request set-var(txn.b) req.hdr(x),map_str_ip({two})",
         f"invalid args in converter 'map_str_ip' : unable to parse 'b' at line 1 of file '{two}'"),
        (f"http-request set-var(txn.a) req.hdr(x),map_str_int({two},abc)",
         "invalid arg 2 in converter 'map_str_int' : failed to parse 'abc' as type 'integer'"),
        (f"acl x hdr(a) -f {two}\n    http-request set-var(txn.b) req.hdr(x),map({two})",
         f"The file \"{two}\" is already used as one column file and cannot be used by as two column file."),
    ]
    for rule, message in cases:
        path = cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{free_port()}
    {rule}
""")
        config_refused(path, message)


def test_map_changes_under_load(cfg, sluice, short_tmp, tmp_path):
    """Clients route through a map while the CLI changes it: a key that never changes always
    gets its backend, a key whose value flips gets one of its two values, and a key added and
    deleted gets its backend or the default; never anything else."""
    pad = "".join(f"pad{i}.example be_pad\n" for i in range(2000))
    hosts = write(tmp_path, "hosts.map", pad + "stable.example be_a\nflip.example be_b\n")
    port = free_port()
    backends = "".join(f"""
backend {b}
    http-request return status 200 content-type text/plain string {b}
""" for b in ("be_a", "be_b", "be_c", "be_d", "be_default", "be_pad"))
    _, sock = start(cfg, sluice, short_tmp, f"""
frontend f
    bind 127.0.0.1:{port}
    use_backend %[req.hdr(host),map_str({hosts},be_default)]
{backends}
""", port)
    allowed = {"stable.example": {"be_a"}, "flip.example": {"be_b", "be_c"},
               "coming.example": {"be_d", "be_default"}}
    wrong: list[str] = []
    counts = {"n": 0}
    stop = threading.Event()

    def client(seed: int):
        hosts_cycle = list(allowed)
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        i = seed
        buf = b""
        try:
            while not stop.is_set():
                host = hosts_cycle[i % len(hosts_cycle)]
                i += 1
                c.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                while True:
                    head, sep, rest = buf.partition(b"\r\n\r\n")
                    if sep:
                        m = re.search(rb"content-length: *(\d+)", head, re.I)
                        n = int(m.group(1)) if m else 0
                        if len(rest) >= n:
                            body, buf = rest[:n].decode(), rest[n:]
                            break
                    d = c.recv(65536)
                    if not d:
                        raise AssertionError("connection closed")
                    buf += d
                counts["n"] += 1
                if body not in allowed[host]:
                    wrong.append(f"{host} -> {body}")
        finally:
            c.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 3
    changes = 0
    while time.monotonic() < deadline:
        cli(sock, f"set map {hosts} flip.example {'be_c' if changes % 2 == 0 else 'be_b'}")
        cli(sock, f"add map {hosts} coming.example be_d")
        cli(sock, f"del map {hosts} coming.example")
        changes += 1
    stop.set()
    for t in threads:
        t.join(10)
    assert not wrong, wrong[:10]
    assert changes > 10 and counts["n"] > 100, (changes, counts)


def test_map_dir_sub_and_end(cfg, sluice, short_tmp, tmp_path):
    # First match in file order, as HAProxy 3.5 answers (values measured on it).
    words = write(tmp_path, "words.map", "img assets\nv2 version2\n.png picture\napi/v public\n")
    port = free_port()
    fmt = (f"dir=%[path,map_dir({words},none)] sub=%[path,map_sub({words},none)] "
           f"end=%[path,map_end({words},none)]")
    start(cfg, sluice, short_tmp, f"""
frontend f
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain lf-string "{fmt}"
""", port)
    got = {p: get(port, p)[1] for p in ("/api/v2/logo.png", "/img", "/imgs/v22", "/x/api/v")}
    assert got == MAP_DIR_EXPECTED, got


MAP_DIR_EXPECTED = {
    "/api/v2/logo.png": "dir=version2 sub=version2 end=picture",
    "/img": "dir=assets sub=assets end=assets",
    "/imgs/v22": "dir=none sub=assets end=none",
    "/x/api/v": "dir=public sub=public end=public",
}
