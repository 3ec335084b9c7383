"""The stats-socket commands of dynamic cookies: `set dynamic-cookie-key backend`,
`enable dynamic-cookie backend`, `disable dynamic-cookie backend`, and `set server addr`
recomputing a dynamic cookie. Their answers, `show stat`'s cookie column, the Set-Cookie value
clients get and which server a request carrying a cookie reaches were all taken from HAProxy
3.5 with the same configuration; the tests pass against it too (SLUICE_BIN pointing at a
wrapper that runs `haproxy -db "$@"`)."""
from __future__ import annotations


import pytest

from http_origin import HttpOrigin
from cookie_util import dyn, get
from sluice_harness import HTTP_DEFAULTS, cli, free_port, show_stat, stat_row

EXPIRED = "SRV=; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/"


def test_known_value():
    # Taken from HAProxy 3.5: key "mykey", server 127.0.0.1:19001.
    assert dyn("mykey", 19001) == "29c725a0ee26ef26"
    assert dyn("newkey", 19001) == "c2acb4ef7362887a"


@pytest.fixture
def origins():
    os_ = [HttpOrigin(), HttpOrigin(), HttpOrigin()]
    yield os_
    for o in os_:
        o.stop()


class Setup:
    def __init__(self, sluice, cfg, short_tmp, origins):
        self.o = origins
        self.admin = str(short_tmp / "admin.sock")
        self.oper = str(short_tmp / "oper.sock")
        self.port, self.nodyn, self.fe_only = free_port(), free_port(), free_port()
        a, b = origins[0].port, origins[1].port
        text = f"""
global
    nbthread 1
    stats socket {self.admin} level admin
    stats socket {self.oper} level operator
{HTTP_DEFAULTS}
listen fe
    bind 127.0.0.1:{self.port}
    balance roundrobin
    cookie SRV insert dynamic
    dynamic-cookie-key mykey
    server a 127.0.0.1:{a}
    server b 127.0.0.1:{b} cookie B
listen nodyn
    bind 127.0.0.1:{self.nodyn}
    cookie SRV insert
    server a 127.0.0.1:{a}
frontend onlyfe
    bind 127.0.0.1:{self.fe_only}
    default_backend nodyn
backend off
    disabled
    server a 127.0.0.1:{a}
"""
        self.proc = sluice(cfg(text), wait_ports=[self.port, self.nodyn], wait_unix=[self.admin])
        self.n = 0

    def cmd(self, line: str, sock: str | None = None) -> str:
        return cli(sock or self.admin, line)

    def stat_cookie(self, proxy: str, server: str) -> str:
        return stat_row(show_stat(self.admin), proxy, server)["cookie"]

    def get(self, port: int | None = None, cookie: str | None = None):
        """One request: (the origin index that got it, its Set-Cookie fields)."""
        self.n += 1
        path = f"/r{self.n}"
        status, headers = get(port or self.port, path, cookie)
        assert status == 200, status
        sc = [v for n, v in headers if n == "set-cookie"]
        who = [i for i, o in enumerate(self.o) if any(r.target == path for r in o.requests())]
        assert len(who) == 1, who
        return who[0], sc

    def cookie_of_a(self, port: int | None = None) -> str:
        """The Set-Cookie a client gets when load balancing sends it to server a."""
        for _ in range(8):
            who, sc = self.get(port)
            if who != 1:
                assert len(sc) == 1, sc
                return sc[0]
        raise AssertionError("server a never chosen")

    def persists(self, value: str, port: int | None = None) -> int | None:
        """Where two requests carrying SRV=<value> go: the server index when both reached it
        without a new cookie (the cookie was valid), None when they were load balanced."""
        r1, r2 = self.get(port, f"SRV={value}"), self.get(port, f"SRV={value}")
        if r1 == r2 and r1[1] == []:
            return r1[0]
        assert r1[1] and r2[1], (r1, r2)
        return None


@pytest.fixture
def st(sluice, cfg, short_tmp, origins):
    return Setup(sluice, cfg, short_tmp, origins)


def test_answers(st):
    assert st.cmd("set dynamic-cookie-key backend") == "A backend name is expected.\n\n"
    assert st.cmd("set dynamic-cookie-key backend fe") == "String value expected.\n\n"
    assert st.cmd("set dynamic-cookie-key backend nosuch k") == "No such backend.\n\n"
    assert st.cmd("set dynamic-cookie-key backend nosuch") == "No such backend.\n\n"
    assert st.cmd("set dynamic-cookie-key backend onlyfe k") == "No such backend.\n\n"
    # HAProxy 3.5 takes a `disabled` backend (unlike `set server`'s "Proxy is disabled.").
    assert st.cmd("set dynamic-cookie-key backend off k") == "\n"
    assert st.cmd("enable dynamic-cookie backend") == "A backend name is expected.\n\n"
    assert st.cmd("enable dynamic-cookie backend nosuch") == "No such backend.\n\n"
    assert st.cmd("enable dynamic-cookie backend #99") == "No such backend.\n\n"
    assert st.cmd("disable dynamic-cookie backend") == "A backend name is expected.\n\n"
    assert st.cmd("disable dynamic-cookie backend onlyfe") == "No such backend.\n\n"
    assert st.cmd("disable dynamic-cookie backend off") == "\n"
    for line in ("set dynamic-cookie-key backend fe k", "enable dynamic-cookie backend fe",
                 "disable dynamic-cookie backend fe"):
        assert st.cmd(line, st.oper) == "Permission denied\n\n"
    # Only `... backend <bk>` is a command; the suggestions list it with HAProxy's help text.
    out = st.cmd("set dynamic-cookie-key fe k")
    assert out.startswith("Unknown command: 'set', but maybe one of the following ones is a "
                          "better match:\n"), out
    assert ("  set dynamic-cookie-key backend <bk> <k> : change a backend secret key for "
            "dynamic cookies\n") in out
    out = st.cmd("enable dynamic-cookie")
    assert "  enable dynamic-cookie backend <bk>      : enable dynamic cookies on a specific " \
           "backend\n" in out, out
    # Nothing was changed by the refused commands; success answers nothing.
    assert st.stat_cookie("fe", "a") == dyn("mykey", st.o[0].port)
    assert st.cmd("set dynamic-cookie-key backend fe newkey extra words") == "\n"
    assert st.cmd("enable dynamic-cookie backend #2") == "\n"   # by id
    assert st.stat_cookie("fe", "a") == dyn("newkey", st.o[0].port)


def test_set_key(st):
    a = st.o[0].port
    old, new = dyn("mykey", a), dyn("newkey", a)
    assert st.stat_cookie("fe", "a") == old
    assert st.cookie_of_a() == f"SRV={old}; path=/"
    assert st.persists(old) == 0
    assert st.cmd("set dynamic-cookie-key backend fe newkey") == "\n"
    assert st.stat_cookie("fe", "a") == new
    assert st.stat_cookie("fe", "b") == "B"
    assert st.cookie_of_a() == f"SRV={new}; path=/"
    assert st.persists(old) is None
    assert st.persists(new) == 0
    assert st.persists("B") == 1


def test_disable_enable(st):
    a = st.o[0].port
    old = dyn("mykey", a)
    assert st.cmd("disable dynamic-cookie backend fe") == "\n"
    assert st.stat_cookie("fe", "a") == ""
    assert st.stat_cookie("fe", "b") == "B"
    # A server without a cookie: insert mode asks the client to drop its cookie.
    assert st.cookie_of_a() == EXPIRED
    assert st.persists(old) is None
    assert st.persists("B") == 1
    assert st.cmd("disable dynamic-cookie backend fe") == "\n"
    # The key changes nothing while disabled; enable computes the values with it.
    assert st.cmd("set dynamic-cookie-key backend fe k2") == "\n"
    assert st.stat_cookie("fe", "a") == ""
    assert st.cmd("enable dynamic-cookie backend fe") == "\n"
    assert st.stat_cookie("fe", "a") == dyn("k2", a)
    assert st.cookie_of_a() == f"SRV={dyn('k2', a)}; path=/"
    assert st.persists(dyn("k2", a)) == 0
    assert st.persists(old) is None


def test_set_server_addr(st):
    a, c = st.o[0].port, st.o[2].port
    assert st.cmd(f"set server fe/a addr 127.0.0.1 port {c}") == \
        f"port changed from '{a}' to '{c}' by 'stats socket command'\n\n"
    assert st.stat_cookie("fe", "a") == dyn("mykey", c)
    assert st.persists(dyn("mykey", c)) == 2
    assert st.persists(dyn("mykey", a)) is None
    # A server with its own cookie keeps it.
    assert st.cmd(f"set server fe/b addr 127.0.0.1 port {a}") != ""
    assert st.stat_cookie("fe", "b") == "B"
    # Disabled: no value to recompute.
    assert st.cmd("disable dynamic-cookie backend fe") == "\n"
    assert st.cmd(f"set server fe/a addr 127.0.0.1 port {a}") == \
        f"port changed from '{c}' to '{a}' by 'stats socket command'\n\n"
    assert st.stat_cookie("fe", "a") == ""


def test_backend_without_dynamic(st):
    a = st.o[0].port
    assert st.stat_cookie("nodyn", "a") == ""
    assert st.cookie_of_a(st.nodyn) == EXPIRED
    # The key alone changes nothing; enable makes the backend dynamic.
    assert st.cmd("set dynamic-cookie-key backend nodyn k") == "\n"
    assert st.stat_cookie("nodyn", "a") == ""
    assert st.cmd("enable dynamic-cookie backend nodyn") == "\n"
    assert st.stat_cookie("nodyn", "a") == dyn("k", a)
    assert st.cookie_of_a(st.nodyn) == f"SRV={dyn('k', a)}; path=/"
    assert st.persists(dyn("k", a), st.nodyn) == 0
