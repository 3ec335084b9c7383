// Cookie persistence keywords: cookie, the server's cookie, dynamic-cookie-key, option persist,
// force-persist / ignore-persist and capture cookie, with HAProxy 3.5's messages (checked with
// `haproxy -c`).
#include <gtest/gtest.h>

#include <string>

#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::proxy;

std::string be(const std::string& body, const std::string& srv = "  server s 127.0.0.1:80 cookie A\n") {
  return "defaults\n  mode http\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
         "backend b\n" + body + srv;
}

void refused(const std::string& line, const std::string& msg) {
  auto r = parse(be("  " + line + "\n"));
  EXPECT_FALSE(r.r.model) << line;
  EXPECT_TRUE(r.contains(msg)) << line << "\n" << r.all();
}

TEST(Cookie, Options) {
  auto r = parse(be("  cookie SRV insert indirect nocache postonly preserve httponly secure "
                    "domain .a.com domain .b.org maxidle 30m maxlife 2h dynamic attr SameSite=Lax "
                    "attr Partitioned\n  dynamic-cookie-key k\n  option persist\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& c = proxy(r, "b").cookie;
  EXPECT_EQ(c.name, "SRV");
  EXPECT_EQ(c.mode, CookieConfig::Mode::kInsert);
  EXPECT_TRUE(c.indirect && c.nocache && c.postonly && c.preserve && c.httponly && c.secure && c.dynamic);
  EXPECT_EQ(c.domain, ".a.com; domain=.b.org");
  EXPECT_EQ(c.attrs, "SameSite=Lax; Partitioned");
  EXPECT_EQ(c.maxidle_s, 1800u);
  EXPECT_EQ(c.maxlife_s, 7200u);
  EXPECT_EQ(proxy(r, "b").dynamic_cookie_key, "k");
  EXPECT_TRUE(proxy(r, "b").option_persist);
  EXPECT_EQ(proxy(r, "b").servers.at(0).cookie, "A");
  // A later line replaces the whole setting.
  r = parse(be("  cookie SRV insert nocache\n  cookie X rewrite\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "b").cookie.name, "X");
  EXPECT_FALSE(proxy(r, "b").cookie.nocache);
  // Inherited from defaults, like default-server's cookie.
  r = parse("defaults\n  mode http\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
            "  cookie D prefix\n  default-server cookie Z\nbackend b\n  server s 127.0.0.1:80\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "b").cookie.mode, CookieConfig::Mode::kPrefix);
  EXPECT_EQ(proxy(r, "b").servers.at(0).cookie, "Z");
}

TEST(Cookie, Messages) {
  refused("cookie", "[f.cfg:7] : 'cookie' expects <cookie_name> as argument.");
  refused("cookie SRV bogus", "[f.cfg:7] : 'cookie' supports 'rewrite', 'insert', 'prefix', 'indirect', "
                          "'nocache', 'postonly', 'domain', 'maxidle', 'dynamic', 'maxlife' and "
                          "'attr' options.");
  refused("cookie SRV insert rewrite", "[f.cfg:7] : cookie 'rewrite', 'insert' and 'prefix' modes are incompatible.");
  refused("cookie SRV preserve", "[f.cfg:7] : cookie 'preserve' requires at least 'insert' or 'indirect'.");
  refused("cookie SRV domain", "parsing [f.cfg:7]: 'domain' expects <domain> as argument.");
  refused("cookie SRV insert maxidle", "parsing [f.cfg:7]: 'maxidle' expects <idletime> in seconds as argument.");
  refused("cookie SRV insert maxlife", "parsing [f.cfg:7]: 'maxlife' expects <lifetime> in seconds as argument.");
  refused("cookie SRV insert maxidle 1x", "parsing [f.cfg:7]: unexpected character 'x' in argument to <maxidle>.");
  refused("cookie SRV insert maxidle 100000d",
      "parsing [f.cfg:7]: timer overflow in argument <100000d> to <maxidle>, maximum value is "
      "2147483647 s (~68 years).");
  refused("cookie SRV insert attr", "parsing [f.cfg:7]: 'attr' expects <value> as argument.");
  refused("cookie SRV insert attr a;b", "parsing [f.cfg:7]: character '%x3B' is not permitted in attribute value.");
  refused("dynamic-cookie-key", "[f.cfg:7] : 'dynamic-cookie-key' expects <secret_key> as argument.");
  refused("force-persist", "[f.cfg:7] : 'force-persist' requires either 'if' or 'unless' followed by a condition.");
  refused("ignore-persist foo", "[f.cfg:7] : 'ignore-persist' requires either 'if' or 'unless' followed by a condition.");
  auto r = parse(be("", "  server s 127.0.0.1:80 cookie\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("[f.cfg:7] : 'server b/s' : 'cookie' expects <value> as argument..")) << r.all();
  r = parse(be("  cookie SRV insert domain localhost\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.contains("parsing [f.cfg:7]: domain 'localhost' contains no embedded dot, this "
                    "configuration may not work properly (see RFC6265#5.2.3).")) << r.all();
}

TEST(Cookie, WarningsOfPlaceAndMode) {
  auto r = parse("defaults\n  mode http\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
                 "frontend f\n  bind :1\n  cookie SRV insert\n  force-persist if TRUE\n"
                 "  dynamic-cookie-key k\n  default_backend b\nbackend b\n  server s 127.0.0.1:80\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.contains("parsing [f.cfg:8] : 'cookie' ignored because frontend 'f' has no backend capability."))
      << r.all();
  EXPECT_TRUE(r.contains("parsing [f.cfg:9] : 'force-persist' ignored because frontend 'f' has no backend "
                    "capability.")) << r.all();
  r = parse("defaults\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
            "backend b\n  cookie S insert\n  server a 127.0.0.1:80 cookie A\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.contains("cookie will be ignored for backend 'b' (needs 'mode http').")) << r.all();
  EXPECT_TRUE(r.contains("backend 'b' : ignoring cookie for server 'a' as HTTP mode is disabled.")) << r.all();
  EXPECT_EQ(proxy(r, "b").cookie.name, "");
  EXPECT_EQ(proxy(r, "b").servers.at(0).cookie, "");
}

TEST(Cookie, PersistRules) {
  auto r = parse(be("  force-persist if { path /a }\n  ignore-persist unless { path /b }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& rules = proxy(r, "b").persist_rules;
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(rules[0].force);
  EXPECT_FALSE(rules[1].force);
}

TEST(CaptureCookie, KeywordAndMessages) {
  const std::string head = "defaults\n  mode http\n  timeout client 1s\n  timeout connect 1s\n"
                           "  timeout server 1s\nfrontend f\n  bind :1\n";
  auto r = parse(head + "  capture cookie X len 10\n  capture cookie SRV len 100\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").capture_cookie, "SRV");
  EXPECT_EQ(proxy(r, "f").capture_cookie_len, 63);
  EXPECT_TRUE(r.contains("truncating capture length to 63 bytes for frontend 'f'.")) << r.all();
  for (const char* l : {"capture cookie", "capture cookie X len"}) {
    r = parse(head + "  " + l + "\n");
    EXPECT_FALSE(r.r.model);
    EXPECT_TRUE(r.contains("[f.cfg:8] : 'capture' expects 'cookie' <cookie_name> 'len' <len>.")) << r.all();
  }
  r = parse("defaults\n  mode http\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
            "backend b\n  capture cookie X len 10\n  server a 127.0.0.1:80\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.contains("parsing [f.cfg:7] : 'capture' ignored because backend 'b' has no frontend capability."))
      << r.all();
  r = parse("listen l\n  bind :1\n  timeout client 1s\n  capture cookie X len 5\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.contains("'capture' statement ignored for proxy 'l' as it requires HTTP mode.")) << r.all();
}

}  // namespace
}  // namespace sluice::config
