// The PROXY protocol's keywords: bind accept-proxy, server send-proxy / send-proxy-v2 /
// proxy-v2-options (and their default-server and no- forms), with HAProxy 3.5's messages.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "net/proxy_protocol.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::proxy;

TEST(ProxyProtocolKeywords, BindAndServerOptions) {
  auto r = parse(
      "frontend f\n"
      "  bind :1 accept-proxy name edge\n"
      "  bind :2\n"
      "  default_backend b\n"
      "backend b\n"
      "  default-server send-proxy-v2\n"
      "  server s1 127.0.0.1:80\n"
      "  server s2 127.0.0.1:81 send-proxy\n"
      "  server s3 127.0.0.1:82 no-send-proxy-v2\n"
      "  server s4 127.0.0.1:83 proxy-v2-options unique-id,crc32c,authority\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& f = proxy(r, "f");
  EXPECT_TRUE(f.binds[0].accept_proxy);
  EXPECT_EQ(f.binds[0].name, "edge");
  EXPECT_FALSE(f.binds[1].accept_proxy);
  const auto& s = proxy(r, "b").servers;
  EXPECT_EQ(s[0].send_proxy, 2);
  EXPECT_EQ(s[1].send_proxy, 1);
  EXPECT_EQ(s[2].send_proxy, 0);
  EXPECT_EQ(s[3].pp2_options,
            net::pp::kOptUniqueId | net::pp::kOptCrc32c | net::pp::kOptAuthority);
}

// HAProxy 3.5 takes proxy-v2-options without send-proxy-v2 and sends no header: a warning
// with the line says it does nothing.
TEST(ProxyProtocolKeywords, OptionsWithoutSendProxyV2Warn) {
  auto r = parse("backend b\n  server s 1.1.1.1:1 send-proxy proxy-v2-options crc32c\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.contains("[f.cfg:2] : 'server b/s' : 'proxy-v2-options' has no effect without "
                         "'send-proxy-v2'."))
      << r.all();
  r = parse("backend b\n  default-server proxy-v2-options crc32c\n"
            "  server s 1.1.1.1:1 send-proxy-v2\n");
  EXPECT_FALSE(r.contains("has no effect")) << r.all();
}

TEST(ProxyProtocolKeywords, Errors) {
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 send-proxy-v2 proxy-v2-options foo\n")
                  .contains("'server b/s' : 'foo' : proxy v2 option not implemented."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 proxy-v2-options crc32c,cert-cn\n")
                  .contains("'proxy-v2-options cert-cn' is not supported by sluice yet (it needs "
                            "TLS)."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 set-proxy-v2-tlv-fmt(0xe0) x\n")
                  .contains("is not supported by sluice yet"));
}

}  // namespace
}  // namespace sluice::config
