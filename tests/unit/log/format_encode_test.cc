// Named nodes and the +json / +cbor encodings of a log-format. The expected lines are HAProxy
// 3.5's, written for a request with the same values (GET /a%20b?x=1&y="2" HTTP/1.1 from
// 127.0.0.1, a captured X-Cap of a"b\c#d{e|f}<DEL>z, a second request slot and a response slot
// left empty, served by fe/be/s at 127.0.0.1:18998, status 200).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "log/format.h"

namespace sluice::log {
namespace {

std::string parse_error(std::string_view fmt) {
  auto f = Format::parse(fmt);
  return f.ok() ? std::string("<ok>") : f.error().message;
}

struct EncodeFixture {
  net::SocketAddress client = net::SocketAddress::ipv4(0x7f000001, 40000);
  net::SocketAddress local = net::SocketAddress::ipv4(0x7f000001, 18999);
  net::SocketAddress srv = net::SocketAddress::ipv4(0x7f000001, 18998);
  std::vector<std::string> req_caps{"a\"b\\c#d{e|f}\x7fz", ""};
  std::vector<std::string> res_caps;
  Record r;
  EncodeFixture() {
    r.client = &client;
    r.local = &local;
    r.server_addr = &srv;
    r.backend_src = &client;
    r.date_wall_us = 1764547200123456ULL;
    r.frontend = "fe";
    r.backend = "be";
    r.server = "s";
    r.http = true;
    r.ti = 0;
    r.tr = 1;
    r.tw = 0;
    r.tc = 0;
    r.tresp = 3;
    r.total = 10;
    r.status = 200;
    r.bytes_out = 151;
    r.bytes_in = 49;
    r.req_capture_slots = 2;
    r.req_captures = req_caps;
    r.res_capture_slots = 1;
    r.res_captures = res_caps;
    r.request_line = "GET /a%20b?x=1&y=\"2\" HTTP/1.1";
  }
  std::string render(std::string_view fmt, const sample::Ctx* ctx = nullptr) const {
    auto f = Format::parse(fmt);
    EXPECT_TRUE(f.ok()) << fmt << ": " << (f.ok() ? "" : f.error().message);
    std::string out;
    if (f.ok()) f.value().render(r, ctx, out);
    return out;
  }
};

TEST(LogEncode, JsonObjectOfTheNamedNodes) {
  EncodeFixture fx;
  EXPECT_EQ(fx.render("%{+json}o %(ip)ci %(st)ST %(ft)ft %(f)f %(b)b %(s)s %(ts)ts %(tsc)tsc "
                      "%(rc)rc %(sq)sq %(bq)bq %(sp)sp %(si){+X}si"),
            "{\"ip\": \"127.0.0.1\", \"st\": 200, \"ft\": \"fe\", \"f\": \"fe\", \"b\": \"be\", "
            "\"s\": \"s\", \"ts\": \"--\", \"tsc\": \"----\", \"rc\": 0, \"sq\": 0, \"bq\": 0, "
            "\"sp\": 18998, \"si\": \"7F000001\"}");
  EXPECT_EQ(fx.render("%{+json}o %(r)r %(hm)HM %(hu)HU %(hp)HP %(hpo)HPO %(hq)HQ %(hv)HV"),
            "{\"r\": \"GET /a%20b?x=1&y=#222#22 HTTP/1.1\", \"hm\": \"GET\", \"hu\": "
            "\"/a%20b?x=1&y=#222#22\", \"hp\": \"/a%20b\", \"hpo\": \"/a%20b\", \"hq\": "
            "\"?x=1&y=#222#22\", \"hv\": \"HTTP/1.1\"}");
  // Captures: '#XX' escapes, then JSON's backslashes; a list is an array; absent texts "".
  EXPECT_EQ(fx.render("%{+json}o %(hr)hr %(hrl)hrl %(hs)hs %(hsl)hsl %(cc)CC %(sslv)sslv %(id)ID"),
            "{\"hr\": \"{a#22b\\\\c#23d#7Be#7Cf#7D#7Fz|}\", \"hrl\": "
            "[\"a#22b\\\\c#23d#7Be#7Cf#7D#7Fz\", \"-\"], \"hs\": \"{}\", \"hsl\": [\"-\"], "
            "\"cc\": \"\", \"sslv\": \"\", \"id\": \"\"}");
  // Text, separators and unnamed nodes are left out; %o anywhere encodes the whole line.
  EXPECT_EQ(fx.render("%{+json}o hello %(a)ci world %ci %[src] %()fi"),
            "{\"a\": \"127.0.0.1\"}");
  EXPECT_EQ(fx.render("%(a)ci %{+json}o %(b)fp"), "{\"a\": \"127.0.0.1\", \"b\": 18999}");
  EXPECT_EQ(fx.render("%{+json}o"), "");   // no node: an empty format, as HAProxy's
  EXPECT_EQ(fx.render("%{+json}o x"), "{}");
}

TEST(LogEncode, TypesAndFlags) {
  EncodeFixture fx;
  sample::Ctx ctx;
  ctx.avail = kLogAvail;
  ctx.src = &fx.client;
  ctx.req.method = "GET";
  EXPECT_EQ(fx.render("%{+json}o %(a)[int(-5)] %(b)[str(x),ipmask(8)] %(c)[ipv6(::1)] "
                      "%(d)[var(txn.u)] %(e){+Q}[int(3)] %(f)[bin(00)] %(g)[bin(41ff)] "
                      "%(h)[bool(1)] %(m)[method] %(n)[src]",
                      &ctx),
            "{\"a\": -5, \"b\": \"\", \"c\": \"::1\", \"d\": \"\", \"e\": 3, \"f\": \"\", "
            "\"g\": \"A\xff\", \"h\": true, \"m\": \"GET\", \"n\": \"127.0.0.1\"}");
  // :raw writes the sample's bytes as they are (an integer: 8 bytes, big-endian).
  static constexpr char kTyped[] =
      "{\"a\": \"200\", \"b\": \"127.0.0.1\", \"c\": true, \"d\": \"\", \"e\": \"4\", "
      "\"f\": \0\0\0\0\0\0\0\3, \"g\": x}";
  EXPECT_EQ(fx.render("%{+json}o %(a:str)ST %(b:sint)ci %(c:bool)ST %(d:bool)[str()] "
                      "%(e:str)[int(4)] %(f:raw)[int(3)] %(g:raw)[str(x)]",
                      &ctx),
            std::string(kTyped, sizeof kTyped - 1));
  EXPECT_EQ(fx.render("%{+json}o %(a){+X}ci %(c){+Q}ST %(d){+Q}ci %(e){+E}r %(f){+X}fp"),
            "{\"a\": \"7F000001\", \"c\": 200, \"d\": \"127.0.0.1\", \"e\": \"GET "
            "/a%20b?x=1&y=#222#22 HTTP/1.1\", \"f\": \"4A37\"}");
  // The first encoding stays; the line's prevails over a node's; +bin is the line's only.
  EXPECT_EQ(fx.render("%{+cbor}o %{+json}o %(a)ci"), "BF6161693132372E302E302E31FF");
  EXPECT_EQ(fx.render("%{+json,+cbor}o %(a)ci"), "{\"a\": \"127.0.0.1\"}");
  EXPECT_EQ(fx.render("%{+json}o %(a){-json}ci %(b){+cbor}fp"),
            "{\"a\": \"127.0.0.1\", \"b\": 18999}");
  EXPECT_EQ(fx.render("%{+Q}o %{+json}o %(a)ci %(b)r"),
            "\"127.0.0.1\" \"GET /a%20b?x=1&y=#222#22 HTTP/1.1\"");
  EXPECT_EQ(fx.render("%{+json}o %{+Q}o %(a)ci"), "{\"a\": \"127.0.0.1\"}");
  EXPECT_EQ(fx.render("%{+json,+bin}o %(a)[bin(41ff)] %(b:str)[bin(4142)]", &ctx),
            "{\"a\": A\xff, \"b\": \"AB\"}");
  // Nodes encoded on their own in a plain line: their value alone.
  EXPECT_EQ(fx.render("%{+json}ci %{+json}ST %{+cbor}ST %{+json}hr %{+json}hs end"),
            "\"127.0.0.1\" 200 18C8 \"{a#22b\\\\c#23d#7Be#7Cf#7D#7Fz|}\" \"{}\" end");
  EXPECT_EQ(fx.render("%{+json}ci %{+json}[int(4)] %{+json,+Q}[str(a)] %{+cbor}[int(4)] "
                      "%{+cbor,+bin}[int(4)] %{+json}CC end",
                      &ctx),
            "\"127.0.0.1\" 4 \"a\" 04 04 \"\" end");
}

TEST(LogEncode, Cbor) {
  EncodeFixture fx;
  sample::Ctx ctx;
  ctx.avail = kLogAvail;
  ctx.src = &fx.client;
  ctx.req.method = "GET";
  EXPECT_EQ(fx.render("%{+cbor}o %(ip)ci %(st)ST %(ft)ft %(b)b %(s)s %(ts)ts %(tsc)tsc %(rc)rc "
                      "%(sp)sp %(si){+X}si %(q){+Q}ci"),
            "BF626970693132372E302E302E3162737418C86266747F626665FF616262626561736173627473622D2"
            "D63747363642D2D2D2D62726300627370194A366273696837463030303030316171\"693132372E302E30"
            "2E31\"FF");
  EXPECT_EQ(fx.render("%{+cbor}o %(r)r %(hm)HM %(hq)HQ %(hv)HV"),
            "BF61727F71474554202F61253230623F783D3126793D632332326132632332326920485454502F312E31F"
            "F62686D7F63474554FF6268717F673F783D3126793D63233232613263233232FF6268767F68485454502"
            "F312E31FFFF");
  // Each '#XX' escape a chunk of its own (an empty chunk between two escapes), absent texts
  // null.
  EXPECT_EQ(fx.render("%{+cbor}o %(hr)hr %(hrl)hrl %(hs)hs %(hsl)hsl %(cc)CC %(sslv)sslv "
                      "%(id)ID"),
            "BF6268727F617B61616323323263625C63632332336164632337426165632337436166632337446063"
            "233746617A617C617DFF6368726C9F7F61616323323263625C636323323361646323374261656323374"
            "36166632337446063233746617AFF7F612DFFFF6268737F617B617DFF6368736C9F7F612DFFFF626363"
            "F66473736C76F6626964F6FF");
  EXPECT_EQ(fx.render("%{+cbor}o %(a)[int(-5)] %(b)[str(x),ipmask(8)] %(c)[ipv6(::1)] "
                      "%(f)[bin(00)] %(g)[bin(41ff)] %(h)[bool(1)] %(i)[int(-1000000)] "
                      "%(j)[int(24)] %(k)[int(70000)] %(l)[int(5000000000)] %(m)[method]",
                      &ctx),
            "BF6161246162F66163633A3A3161665F4100FF61675F4241FFFF6168F561693A000F423F616A1818616B"
            "1A00011170616C1B000000012A05F200616D63474554FF");
  EXPECT_EQ(fx.render("%{+cbor,+bin}o %(a)ci %(b)ST %(d)r"),
            "\xbf" "aai127.0.0.1ab\x18\xc8" "ad\x7fqGET /a%20b?x=1&y=c#22a2c#22i HTTP/1.1\xff\xff");
}

TEST(LogEncode, NamesParseAsHaproxys) {
  EncodeFixture fx;
  // Without an encoding, a name changes nothing; a name after which no node starts is dropped
  // with its '%', what follows is text.
  EXPECT_EQ(fx.render("%(a)ci %(a)fp %()ci"), "127.0.0.1 18999 127.0.0.1");
  EXPECT_EQ(fx.render("%(a)-x %(b)(c)ci %(c)%ci"), "-x (c)ci %ci");
  EXPECT_EQ(fx.render("%{+json}o %(aZ_09)ci %(a-b)fp"), "{\"aZ_09\": \"127.0.0.1\", \"a-b\": 18999}");
  EXPECT_EQ(parse_error("%(abc"), "invalid character in custom name near '");
  EXPECT_EQ(parse_error("%(a b)ci"),
            "invalid character in custom name near ' ' at position 3 line : '%(a b)ci'");
  EXPECT_EQ(parse_error("%(a.b-c)ci"),
            "invalid character in custom name near '.' at position 3 line : '%(a.b-c)ci'");
  EXPECT_EQ(parse_error("%(a:b:c)ci"),
            "invalid character in custom name near ':' at position 5 line : '%(a:b:c)ci'");
  EXPECT_EQ(parse_error("%(a)"), "truncated line after '%'");
  EXPECT_EQ(parse_error("%(a)%%"), "truncated line after '%'");
  EXPECT_EQ(parse_error("%(a){"), "truncated line after ''");
  EXPECT_EQ(parse_error("%(a){+Q}"), "parse argument modifier without alias name near '%{+Q}'");
  EXPECT_EQ(parse_error("%(a) ci"),
            "unexpected alias name near ' ' at position 4 line : '%(a) ci'. Maybe you want to "
            "write a single '%', use the syntax '%%'");
  EXPECT_EQ(parse_error("%(a)zz"),
            "no such format alias 'zz'. If you wanted to emit the '%' character verbatim, you "
            "need to use '%%'");
  EXPECT_EQ(parse_error("%(a)[src"), "missing ']' after 'src'");
  EXPECT_EQ(parse_error("%(a:ipv4)ci"),
            "unexpected output type 'ipv4' at position 4 line : '%(a:ipv4)ci'. Supported types "
            "are: str, sint, bool, raw");
  EXPECT_EQ(parse_error("%(a:)ci"),
            "unexpected output type '' at position 4 line : '%(a:)ci'. Supported types are: "
            "str, sint, bool, raw");
  for (auto ok : {"%(a:str)ci", "%(a:sint)[src]", "%(a:bool)ST", "%(a:raw)ST", "%(a)o",
                  "%(a){+json}o %(b)ci", "%{+json}ci", "%{+cbor,+bin}o %(a)ci"})
    EXPECT_EQ(parse_error(ok), "<ok>") << ok;
}

TEST(LogEncode, OnlyEncodedFormatsSayTheyAre) {
  auto plain = Format::parse("%ci %{+Q}r");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->line_opts(), 0);
  auto json = Format::parse("%{+json}o %(a)ci");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->line_opts() & kOptEncode, kOptJson);
}

}  // namespace
}  // namespace sluice::log
