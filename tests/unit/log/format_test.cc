#include "log/format.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ctime>

#include <string>
#include <vector>

#include "base/strings.h"

namespace sluice::log {
namespace {

std::string err(std::string_view fmt) {
  auto f = Format::parse(fmt);
  return f.ok() ? std::string("<ok>") : f.error().message;
}

std::string render(std::string_view fmt, const Record& r, const sample::Ctx* ctx = nullptr) {
  auto f = Format::parse(fmt);
  EXPECT_TRUE(f.ok()) << fmt << ": " << (f.ok() ? "" : f.error().message);
  std::string out;
  if (f.ok()) f.value().render(r, ctx, out);
  return out;
}

struct Fixture {
  net::SocketAddress client = net::SocketAddress::ipv4(0x7f000001, 40000);
  net::SocketAddress local = net::SocketAddress::ipv4(0x7f000001, 8080);
  net::SocketAddress srv = net::SocketAddress::ipv4(0x0a000002, 80);
  net::SocketAddress bsrc = net::SocketAddress::ipv4(0x0a000001, 50000);
  std::vector<std::string> req_caps{"Moz\"x{y|", ""};
  std::vector<std::string> res_caps{"r\"v"};
  Record r;
  Fixture() {
    r.client = &client;
    r.local = &local;
    r.server_addr = &srv;
    r.backend_src = &bsrc;
    r.date_wall_us = 1764547200123456ULL;
    r.accept_wall_us = 1764547199000000ULL + 7000;
    r.frontend = "fe";
    r.backend = "be";
    r.server = "s1";
    r.http = true;
    r.ti = 4;
    r.tr = 1;
    r.tw = 0;
    r.tc = 2;
    r.tresp = 3;
    r.total = 10;
    r.status = 200;
    r.bytes_out = 127;
    r.bytes_in = 97;
    r.actconn = 3;
    r.feconn = 2;
    r.beconn = 1;
    r.srvconn = 0;
    r.retries = 1;
    r.request_counter = 2;
    r.log_counter = 5;
    r.pid = 16012;
    r.hostname = "vm";
    r.unique_id = "abc";
    r.req_capture_slots = 2;
    r.req_captures = req_caps;
    r.res_capture_slots = 1;
    r.res_captures = res_caps;
    r.request_line = "GET /p%20a/th?q=1&x=\"y HTTP/1.1";
    r.term = {Cause::kNone, FinalState::kNone};
  }
};

TEST(LogFormat, ParseErrorsAreHaproxys) {
  EXPECT_EQ(err("%"), "truncated line after '%'");
  EXPECT_EQ(err("a%"), "truncated line after '%'");
  EXPECT_EQ(err("%ci %zz"),
            "no such format alias 'zz'. If you wanted to emit the '%' character verbatim, you "
            "need to use '%%'");
  EXPECT_EQ(err("%{+Q}zz"),
            "no such format alias 'zz'. If you wanted to emit the '%' character verbatim, you "
            "need to use '%%'");
  EXPECT_EQ(err("%{+Q"), "truncated line after '+Q'");
  EXPECT_EQ(err("%{+Q}"), "parse argument modifier without alias name near '%{+Q}'");
  EXPECT_EQ(err("%{}"), "parse argument modifier without alias name near '%{}'");
  EXPECT_EQ(err("%1"),
            "unexpected alias name near '1' at position 1 line : '%1'. Maybe you want to write "
            "a single '%', use the syntax '%%'");
  EXPECT_EQ(err("%[src"), "missing ']' after 'src'");
  EXPECT_EQ(err("%[src]%[dst"), "missing ']' after 'dst'");
  EXPECT_EQ(err("%[foo]"), "failed to parse sample expression <foo]> : unknown fetch method 'foo'");
  EXPECT_EQ(err("%[src,lowerx]"),
            "failed to parse sample expression <src,lowerx]> : unknown converter 'lowerx'");
  EXPECT_EQ(err("%[req.len]"),
            "sample fetch <req.len> may not be reliably used here because it needs 'request "
            "buffer' which is not available here");
  EXPECT_EQ(err("%[src x]"), "expected ']' after 'src', but found ' '");
  EXPECT_EQ(err("%{+Z}o %{ +Q}r %ci%% %{+Q,+X}r %{+Q}o %{-Q}r"), "<ok>");
  EXPECT_EQ(err("%{+json}o %ci %(a)ci"), "<ok>");   // format_encode_test.cc
}

TEST(LogFormat, EveryAliasPlain) {
  Fixture fx;
  auto d = [](uint64_t us, bool local, bool ms) {
    time_t s = static_cast<time_t>(us / 1000000);
    tm tm{};
    if (local) localtime_r(&s, &tm);
    else gmtime_r(&s, &tm);
    char b[64];
    strftime(b, sizeof b, ms ? "%d/%b/%Y:%H:%M:%S" : "%d/%b/%Y:%H:%M:%S %z", &tm);
    return ms ? fmt::format("{}.{:03}", b, (us / 1000) % 1000) : std::string(b);
  };
  const Record& r = fx.r;
  EXPECT_EQ(render("%ci %cp %fi %fp %bi %bp %si %sp", r),
            "127.0.0.1 40000 127.0.0.1 8080 10.0.0.1 50000 10.0.0.2 80");
  EXPECT_EQ(render("%fc %bc %sc %rc %ac %bq %sq", r), "2 1 0 1 3 0 0");
  EXPECT_EQ(render("%t|%tr|%trg|%trl|%T|%Tl", r),
            d(r.accept_wall_us, true, true) + "|" + base::log_date(r.date_wall_us) + "|" +
                d(r.date_wall_us, false, false) + "|" + d(r.date_wall_us, true, false) + "|" +
                d(r.accept_wall_us, false, false) + "|" + d(r.accept_wall_us, true, false));
  EXPECT_EQ(render("%Ts %ms", r), "1764547199 007");
  // Th 0, Ti 4, TR 1 -> Tq 5; Ta 10 -> Tt 14, Tu 10; Td = 14 - (5+0+2+3) = 4.
  EXPECT_EQ(render("%Th %Ti %Tq %TR %Tw %Tc %Tr %Tt %Tu %Ta %Td", r), "0 4 5 1 0 2 3 14 10 10 4");
  EXPECT_EQ(render("%ST %B %U %ts %tsc", r), "200 127 97 -- ----");
  EXPECT_EQ(render("%b %f %ft %s %H %ID %pid %rt %lc", r), "be fe fe s1 vm abc 16012 2 5");
  EXPECT_EQ(render("%r", r), "GET /p%20a/th?q=1&x=#22y HTTP/1.1");
  EXPECT_EQ(render("%HM %HP %HPO %HQ %HU %HV", r),
            "GET /p%20a/th /p%20a/th ?q=1&x=#22y /p%20a/th?q=1&x=#22y HTTP/1.1");
  EXPECT_EQ(render("%CC %CS %sslc %sslv", r), "- - - -");
  EXPECT_EQ(render("%hr %hs|%hrl|%hsl", r), "{Moz#22x#7By#7C|} {r#22v}|Moz#22x#7By#7C -|r#22v");
  EXPECT_EQ(render("%o", r), "");
  auto f = Format::parse("%ci %{+Q}bp");
  EXPECT_TRUE(f.value().uses(Alias::kbp));
  EXPECT_FALSE(f.value().uses(Alias::kbi));
}

TEST(LogFormat, QuoteHexEscapeFlags) {
  Fixture fx;
  const Record& r = fx.r;
  EXPECT_EQ(render("%{+Q}o %ci %cp %b %ST %ts %CC %r %ID", r),
            "\"127.0.0.1\" 40000 \"be\" 200 -- \"\" \"GET /p%20a/th?q=1&x=#22y HTTP/1.1\" \"abc\"");
  EXPECT_EQ(render("%{+Q}o %{-Q}ci %b", r), "127.0.0.1 \"be\"");
  EXPECT_EQ(render("%{+X}o %ci:%cp %fp %Ts %ms %pid %rt %lc %Tt %ST", r),
            "7F000001:9C40 1F90 692CDA7F 07 3E8C 0002 0005 14 200");
  Record r2 = r;
  r2.backend = "a\"b]c\\";
  EXPECT_EQ(render("%{+E}b %{+Q,+E}b", r2), "a\\\"b\\]c\\\\ \"a\\\"b\\]c\\\\\"");
  EXPECT_EQ(render("%{+Q}HQ", r), "\"?q=1&x=#22y\"");
}

TEST(LogFormat, SeparatorsMergeAndAbsentValues) {
  Fixture fx;
  Record r = fx.r;
  EXPECT_EQ(render("a  b   c", r), "a b c");
  EXPECT_EQ(render("  %ci  ", r), "127.0.0.1 ");
  r.req_capture_slots = 0;
  r.res_capture_slots = 0;
  EXPECT_EQ(render("%ST %hr %hs %B", r), "200 127");
  r.request_line = {};
  EXPECT_EQ(render("%r %HM %{+Q}HU", r), "<BADREQ> - \"\"");
  r.server_addr = nullptr;
  EXPECT_EQ(render("%si:%sp %{+Q}si", r), "-:- \"\"");
  auto f = Format::parse("a  b", kLogAvail, false);
  std::string out;
  f.value().render(r, nullptr, out);
  EXPECT_EQ(out, "a  b");
}

TEST(LogFormat, SampleExpressions) {
  Fixture fx;
  sample::Ctx ctx;
  ctx.avail = kLogAvail;
  ctx.src = &fx.client;
  ctx.req.method = "GET";
  EXPECT_EQ(render("%[src] %[method,lower] %[method] %{+Q}[method]", fx.r, &ctx),
            "127.0.0.1 get GET \"GET\"");
  EXPECT_EQ(render("%{+Q}[str()] %[str()] %{+Q}[int(5)] %{+X}[int(255)] %{+Q}[bool(1)]", fx.r, &ctx),
            "\"\" - \"5\" 255 \"1\"");
  EXPECT_EQ(render("%[str(a]b)] %{+E}[str(a]b)]", fx.r, &ctx), "a]b a\\]b");
  // +M: a sample that yields nothing ends the line there.
  EXPECT_EQ(render("a %{+M}[var(txn.nope)] b", fx.r, &ctx), "a ");
  EXPECT_EQ(render("%[src]", fx.r, nullptr), "-");
}

// The predefined formats write what the fixed lines of line.h write, byte for byte.
TEST(LogFormat, PredefinedMatchFixedLines) {
  Fixture fx;
  for (int variant = 0; variant < 4; ++variant) {
    Record r = fx.r;
    if (variant & 1) {
      r.req_capture_slots = r.res_capture_slots = 0;
      r.request_line = {};
      r.redispatched = true;
      r.term = {Cause::kServerTimeout, FinalState::kHeaders};
    }
    if (variant & 2) {
      r.tw = r.tc = r.tresp = -1;
      r.server = "<NOSRV>";
    }
    std::string out;
    predefined(Predefined::kHttpLog)->render(r, nullptr, out);
    Record h = r;
    h.total = r.total;
    EXPECT_EQ(out, httplog_line(h));
    out.clear();
    Record t = r;
    t.http = false;
    predefined(Predefined::kTcpLog)->render(t, nullptr, out);
    Record tt = t;
    tt.date_wall_us = t.accept_wall_us;
    EXPECT_EQ(out, tcplog_line(tt));
  }
}

TEST(LogFormat, ClfFormats) {
  Fixture fx;
  Record r = fx.r;
  r.req_capture_slots = 1;
  std::string out;
  predefined(Predefined::kClfHttpLog)->render(r, nullptr, out);
  std::string trg;
  {
    std::string tmp;
    auto f = Format::parse("%trg");
    f.value().render(r, nullptr, tmp);
    trg = tmp;
  }
  EXPECT_EQ(out, "127.0.0.1 - - [" + trg +
                     "] \"GET /p%20a/th?q=1&x=#22y HTTP/1.1\" 200 127 \"\" \"\" 40000 007 \"fe\" "
                     "\"be\" \"s1\" 1 0 2 3 10 ---- 3 2 1 0 1 0 0 \"\" \"\" \"Moz#22x#7By#7C\" "
                     "\"r#22v\"");
  out.clear();
  r.http = false;
  r.total = 25;
  predefined(Predefined::kClfTcpLog)->render(r, nullptr, out);
  EXPECT_NE(out.find("\"TCP \" 000 127 \"\" \"\" 40000 007 \"fe\" \"be\" \"s1\" 0 0 2 25 97 ---- 3 2 1 0 1 0 0 \"\" \"\" "),
            std::string::npos) << out;
}

TEST(LogFormat, RenderReusesTheBuffer) {
  Fixture fx;
  auto f = predefined(Predefined::kHttpLog);
  std::string out;
  out.reserve(1024);
  const char* data = out.data();
  for (int i = 0; i < 100; ++i) {
    out.clear();
    f->render(fx.r, nullptr, out);
  }
  EXPECT_EQ(out.data(), data);
}

// option logasap: %B, %Ta, %Tt and %Tu "+"-prefixed, whatever their flags (HAProxy 3.5:
// "+127 0 +16 +35 16 0 +16" for "%B %U %Ta %Tt %Tr %Td %Tu").
TEST(LogFormat, LogasapPrefixesBytesAndTotals) {
  Fixture fx;
  fx.r.logasap = true;
  EXPECT_EQ(render("%B %U %Ta %Tt %Tr %Tu %TR %{+X}B %{+Q}Tt", fx.r),
            "+127 97 +10 +14 3 +10 1 +127 +14");
  fx.r.logasap = false;
  EXPECT_EQ(render("%B %Ta", fx.r), "127 10");
}

TEST(LogLine, ErrorsAsHaproxyCountsThem) {
  Fixture fx;
  fx.r.retries = 0;
  EXPECT_FALSE(is_error(fx.r));
  fx.r.term = {Cause::kLocal, FinalState::kRequest};   // a local answer: not an error
  EXPECT_FALSE(is_error(fx.r));
  fx.r.term = {Cause::kClientClose, FinalState::kData};
  EXPECT_TRUE(is_error(fx.r));
  fx.r.term = {};
  fx.r.retries = 1;   // retries that ended well
  EXPECT_TRUE(is_error(fx.r));
  fx.r.retries = 0;
  fx.r.status = 503;
  EXPECT_TRUE(is_error(fx.r));
  fx.r.http = false;   // a status means nothing in TCP mode
  EXPECT_FALSE(is_error(fx.r));
  fx.r.redispatched = true;
  EXPECT_TRUE(is_error(fx.r));
}

}  // namespace
}  // namespace sluice::log
