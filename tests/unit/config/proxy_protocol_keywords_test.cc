// The PROXY protocol's keywords: bind accept-proxy, server send-proxy / send-proxy-v2 /
// proxy-v2-options / set-proxy-v2-tlv-fmt / check-send-proxy (and their default-server and no-
// forms), with HAProxy 3.5's messages.
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
}

// The TLS options: each implies `ssl`; send-proxy-v2-ssl(-cn) are send-proxy-v2 with them,
// added to what the line already asked.
TEST(ProxyProtocolKeywords, TlsOptions) {
  namespace pp = net::pp;
  auto r = parse("backend b\n"
                 "  server s1 1.1.1.1:1 send-proxy-v2 proxy-v2-options cert-cn,ssl-cipher\n"
                 "  server s2 1.1.1.1:1 send-proxy-v2-ssl proxy-v2-options unique-id\n"
                 "  server s3 1.1.1.1:1 send-proxy-v2-ssl-cn\n"
                 "  server s4 1.1.1.1:1 send-proxy-v2 proxy-v2-options cert-sig,cert-key\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& s = proxy(r, "b").servers;
  EXPECT_EQ(s[0].pp2_options, pp::kOptSsl | pp::kOptCertCn | pp::kOptSslCipher);
  EXPECT_EQ(s[1].send_proxy, 2);
  EXPECT_EQ(s[1].pp2_options, pp::kOptSsl | pp::kOptUniqueId);
  EXPECT_EQ(s[2].send_proxy, 2);
  EXPECT_EQ(s[2].pp2_options, pp::kOptSsl | pp::kOptCertCn);
  EXPECT_EQ(s[3].pp2_options, pp::kOptSsl | pp::kOptCertSig | pp::kOptCertKey);
}

// set-proxy-v2-tlv-fmt(<type>) <fmt>: types as strtoul reads them, in the order written (a type
// may repeat), a missing format empty, default-server's copied; HAProxy 3.5's messages.
TEST(ProxyProtocolKeywords, TlvFormats) {
  auto r = parse(
      "backend b\n"
      "  mode http\n"
      "  default-server send-proxy-v2 set-proxy-v2-tlv-fmt(0xE0) %[srv_name]\n"
      "  server s1 127.0.0.1:80 set-proxy-v2-tlv-fmt(225) %[req.hdr(host)] "
      "set-proxy-v2-tlv-fmt(0xe1) lit set-proxy-v2-tlv-fmt(010)\n"
      "  server s2 127.0.0.1:81 check-send-proxy\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& s = proxy(r, "b").servers;
  ASSERT_EQ(s[0].pp2_tlvs.size(), 4u);
  EXPECT_EQ(s[0].pp2_tlvs[0].type, 0xE0);
  EXPECT_EQ(s[0].pp2_tlvs[1].type, 0xE1);
  EXPECT_EQ(s[0].pp2_tlvs[1].text, "%[req.hdr(host)]");
  EXPECT_EQ(s[0].pp2_tlvs[2].type, 0xE1);
  EXPECT_EQ(s[0].pp2_tlvs[3].type, 8);   // octal, as strtoul reads it
  EXPECT_EQ(s[0].pp2_tlvs[3].text, "");
  for (const auto& t : s[0].pp2_tlvs) EXPECT_TRUE(t.fmt) << t.text;
  EXPECT_FALSE(s[0].check_send_proxy);
  ASSERT_EQ(s[1].pp2_tlvs.size(), 1u);
  EXPECT_TRUE(s[1].check_send_proxy);

  auto err = [](const std::string& opt) {
    return parse("backend b\n  server s 1.1.1.1:1 send-proxy-v2 " + opt + "\n").all();
  };
  EXPECT_NE(err("set-proxy-v2-tlv-fmt(256) x").find(
                "[f.cfg:2] : 'server b/s' : 'set-proxy-v2-tlv-fmt(256)' : the maximum allowed TLV "
                "ID is 255."),
            std::string::npos);
  EXPECT_NE(err("set-proxy-v2-tlv-fmt(abc) x").find("'set-proxy-v2-tlv-fmt(abc)' : could not "
                                                    "convert TLV ID."),
            std::string::npos);
  EXPECT_NE(err("set-proxy-v2-tlv-fmt() x").find("could not convert TLV ID."), std::string::npos);
  EXPECT_NE(err("set-proxy-v2-tlv-fmt(0xE1 x").find("'set-proxy-v2-tlv-fmt(0xE1' : expects "
                                                    "set-proxy-v2-tlv(<TLV ID>)."),
            std::string::npos);
  const std::string res = err("set-proxy-v2-tlv-fmt(1) %[res.hdr(x)]");
  EXPECT_NE(res.find("[f.cfg:2] : 'server b/s' : "), std::string::npos) << res;
  EXPECT_NE(res.find("sample fetch <res.hdr> may not be reliably used here because it needs "
                     "'HTTP response headers' which is not available here"),
            std::string::npos)
      << res;
  EXPECT_NE(err("set-proxy-v2-tlv-fmt(1) %[nosuch]").find("unknown fetch method 'nosuch'"),
            std::string::npos);
  // Without send-proxy-v2 nothing is sent: said, as for proxy-v2-options.
  r = parse("backend b\n  server s 1.1.1.1:1 send-proxy set-proxy-v2-tlv-fmt(1) x\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.contains("'set-proxy-v2-tlv-fmt' has no effect without 'send-proxy-v2'."))
      << r.all();
}

}  // namespace
}  // namespace sluice::config
