"""log-format encodings on real requests: `%{+json}o` and `%{+cbor}o` with named nodes, and nodes
encoded on their own, the lines received on a UDP syslog port. The expected lines are HAProxy
3.5's for the same configuration and request (`log stdout format raw`)."""
import subprocess
import urllib.request

from http_origin import HttpOrigin
from sluice_harness import free_port, line_of


def _config(ports, origin_port, log_port):
    json_port, cbor_port, node_port = ports
    return f"""
global
    log 127.0.0.1:{log_port} format raw local0
defaults
    mode http
    log global
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe_enc
    bind 127.0.0.1:{json_port}
    capture request header User-Agent len 20
    capture response header X-Conn len 5
    log-format "%{{+json}}o %(client_ip)ci %(status)ST %[src] %(r)r %(hr)hr %(hsl)hsl %(ts)ts %(be)b %(srv)s %(n)[int(-5)] %(t)[bool(1)] %(m:str)[method] %(cc)CC %(st:str)ST"
    default_backend be_enc
frontend fe_cbor
    bind 127.0.0.1:{cbor_port}
    capture request header User-Agent len 20
    log-format "%{{+cbor}}o %(ip)ci %(st)ST %(r)r %(hr)hr %(id)ID %(n)[int(-5)] %(t)[bool(0)]"
    default_backend be_enc
frontend fe_node
    bind 127.0.0.1:{node_port}
    log-format "%ci %{{+json}}ST %{{+json}}r %{{+cbor}}[int(300)] end"
    default_backend be_enc
backend be_enc
    server s1 127.0.0.1:{origin_port}
"""


def _get(port):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/a%20b?x=1",
                                 headers={"User-Agent": 'say "hi"'})
    with urllib.request.urlopen(req, timeout=5) as r:
        r.read()
        return r.status


def test_json_cbor_and_encoded_nodes_as_haproxy_writes_them(cfg, sluice, udp_log):
    origin = HttpOrigin()
    try:
        ports = (free_port(), free_port(), free_port())
        sluice(cfg(_config(ports, origin.port, udp_log.port)), wait_ports=list(ports))
        assert _get(ports[0]) == 200
        line = udp_log.wait_for(lambda m: m.startswith("{")).rstrip("\n")
        assert line == ('{"client_ip": "127.0.0.1", "status": 200, "r": "GET /a%20b?x=1 HTTP/1.1", '
                        '"hr": "{say #22hi#22}", "hsl": ["1"], "ts": "--", "be": "be_enc", '
                        '"srv": "s1", "n": -5, "t": true, "m": "GET", "cc": "", "st": "200"}'), line
        assert _get(ports[1]) == 200
        line = udp_log.wait_for(lambda m: m.startswith("BF")).rstrip("\n")
        assert line == ("BF626970693132372E302E302E3162737418C861727F77474554202F61253230623F783D31"
                        "20485454502F312E31FF6268727F617B64736179206323323262686963233232617DFF6269"
                        "64F6616E246174F4FF"), line
        assert _get(ports[2]) == 200
        line = udp_log.wait_for(lambda m: m.endswith("end\n") or m.endswith("end")).rstrip("\n")
        assert line == '127.0.0.1 200 "GET /a%20b?x=1 HTTP/1.1" 19012C end', line
    finally:
        origin.stop()


def test_named_node_errors_name_the_line(cfg, sluice_bin):
    cases = [
        ('"%(a b)ci"', "failed to parse log-format : invalid character in custom name near ' ' "
                       "at position 3 line : '%(a b)ci'."),
        ('"%(a:ipv4)ci"', "failed to parse log-format : unexpected output type 'ipv4' at "
                          "position 4 line : '%(a:ipv4)ci'. Supported types are: str, sint, "
                          "bool, raw."),
        ('"%(a)"', "failed to parse log-format : truncated line after '%'."),
    ]
    for fmt, want in cases:
        path = cfg(f"""
global
    log 127.0.0.1:514 local0
defaults
    mode http
    log global
    timeout connect 1s
    timeout client 1s
    timeout server 1s
frontend fe
    bind 127.0.0.1:{free_port()}
    log-format {fmt}
    default_backend be
backend be
    server s1 127.0.0.1:1
""")
        r = subprocess.run([sluice_bin, "-c", "-f", str(path)], capture_output=True, text=True,
                           timeout=20)
        assert r.returncode != 0, (fmt, r.stderr)
        assert f"[{path}:{line_of(path, 'log-format')}]: {want}" in r.stderr, (fmt, r.stderr)
