// log-format, option httplog/tcplog [clf], option httpslog, unique-id-format/-header and
// log-tag: HAProxy 3.5's messages and what lands in the model.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::proxy;
using K = ProxyConfig::LogFormatKind;

std::string lf_fe(const std::string& body, const std::string& mode = "http") {
  return "defaults\n  mode " + mode + "\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
         "frontend f\n  bind :1\n  log stdout local0\n" + body +
         "  default_backend b\nbackend b\n  server s 127.0.0.1:80\n";
}

TEST(LogFormatKeywords, CustomFormatCompiled) {
  auto r = parse(lf_fe("  log-format \"%ci %{+Q}r %[method]\"\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  const auto& p = proxy(r, "f");
  EXPECT_EQ(p.log_format_kind, K::kCustom);
  ASSERT_TRUE(p.log_fmt);
  EXPECT_EQ(p.log_fmt->text(), "%ci %{+Q}r %[method]");
  EXPECT_FALSE(p.option_httplog);
  EXPECT_FALSE(p.option_tcplog);
}

// A format of options alone has no node: no traffic line, the "Connect from" lines of a proxy
// without a format instead (HAProxy 3.5 does the same).
TEST(LogFormatKeywords, OptionsAloneAreNoFormat) {
  auto r = parse(lf_fe("  log-format \"%{+json}o\"\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_FALSE(proxy(r, "f").log_fmt);
}

TEST(LogFormatKeywords, ParseErrorsWithFileAndLine) {
  auto r = parse(lf_fe("  log-format \"%ci %zz\"\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("Parsing [f.cfg:9]: failed to parse log-format : no such format alias 'zz'. If "
                    "you wanted to emit the '%' character verbatim, you need to use '%%'."))
      << r.all();
  r = parse(lf_fe("  log-format \"%[req.len]\"\n"));
  EXPECT_TRUE(r.has("Parsing [f.cfg:9]: failed to parse log-format : sample fetch <req.len> may not "
                    "be reliably used here because it needs 'request buffer' which is not "
                    "available here."))
      << r.all();
  r = parse(lf_fe("  unique-id-format %zz\n"));
  EXPECT_TRUE(r.has("Parsing [f.cfg:9]: failed to parse unique-id : no such format alias 'zz'. If "
                    "you wanted to emit the '%' character verbatim, you need to use '%%'."))
      << r.all();
  EXPECT_TRUE(parse(lf_fe("  log-format\n")).has("parsing [f.cfg:9] : log-format expects an argument."));
  EXPECT_TRUE(parse(lf_fe("  log-format %ci %cp\n"))
                  .has("parsing [f.cfg:9] : log-format expects only one argument, don't forget to "
                       "escape spaces!"));
  EXPECT_TRUE(parse(lf_fe("  unique-id-header\n")).has("parsing [f.cfg:9] : unique-id-header expects an argument."));
}

TEST(LogFormatKeywords, OptionsChooseThePredefinedFormats) {
  for (auto [line, kind, text] :
       {std::tuple{"option httplog", K::kHttpLog, log::kHttpLogFormat},
        std::tuple{"option httplog clf", K::kClfHttpLog, log::kClfHttpLogFormat},
        std::tuple{"option tcplog", K::kTcpLog, log::kTcpLogFormat},
        std::tuple{"option tcplog clf", K::kClfTcpLog, log::kClfTcpLogFormat},
        std::tuple{"option httpslog", K::kHttpsLog, log::kHttpsLogFormat}}) {
    auto r = parse(lf_fe(std::string("  ") + line + "\n"));
    ASSERT_TRUE(r.r.model) << r.all();
    EXPECT_EQ(proxy(r, "f").log_format_kind, kind) << line;
    ASSERT_TRUE(proxy(r, "f").log_fmt) << line;
    EXPECT_EQ(proxy(r, "f").log_fmt->text(), text) << line;
  }
  // The last one written wins.
  auto r = parse(lf_fe("  option httplog\n  log-format %ci\n"));
  EXPECT_EQ(proxy(r, "f").log_fmt->text(), "%ci");
  r = parse(lf_fe("  log-format %ci\n  option tcplog\n"));
  EXPECT_EQ(proxy(r, "f").log_fmt->text(), log::kTcpLogFormat);
  EXPECT_TRUE(parse(lf_fe("  option tcplog x\n")).has("parsing [f.cfg:9] : keyword 'tcplog' only supports option 'clf'."));
  EXPECT_TRUE(parse(lf_fe("  option httpslog x\n")).has(
      "parsing [f.cfg:9] : 'option httpslog' cannot handle unexpected argument 'x'."));
}

TEST(LogFormatKeywords, WarningsAsHaproxy) {
  auto r = parse("defaults\n  log-format %ci\n  option httplog\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:3]: 'option httplog' overrides previous 'log-format' in "
                    "'defaults' section."))
      << r.all();
  r = parse("backend b\n  log-format %ci\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : backend 'b' : 'log-format' directive is ignored in backends."))
      << r.all();
  r = parse("defaults\n  mode http\n  timeout client 1s\nfrontend f\n  bind :1\n  log-format %ci\n");
  EXPECT_TRUE(r.has("log format ignored for frontend 'f' since it has no log address.")) << r.all();
  // TCP mode: httplog falls back to tcplog.
  r = parse(lf_fe("  option httplog clf\n", "tcp"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").log_fmt->text(), log::kTcpLogFormat);
}

TEST(LogFormatKeywords, UniqueIdAndLogTag) {
  auto r = parse("global\n  log-tag gtag\n" +
                 lf_fe("  unique-id-format %{+X}o%ci:%cp_%Ts_%rt\n  unique-id-header X-Unique-ID\n"
                    "  log-tag ptag\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->global.log_tag, "gtag");
  const auto& p = proxy(r, "f");
  ASSERT_TRUE(p.unique_id_fmt);
  EXPECT_EQ(p.unique_id_fmt->text(), "%{+X}o%ci:%cp_%Ts_%rt");
  EXPECT_EQ(p.unique_id_header, "X-Unique-ID");
  EXPECT_EQ(p.log_tag, "ptag");
  EXPECT_TRUE(parse("global\n  log-tag\n").has("parsing [f.cfg:2] : 'log-tag' expects a tag for use in syslog."));
}

}  // namespace
}  // namespace sluice::config
