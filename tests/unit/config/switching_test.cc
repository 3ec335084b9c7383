// use_backend with a format, and use-server: parsing, resolution and HAProxy 3.5's messages.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::proxy;

// Frontend f (http) on :1, `fe_body` in it; backend b with servers s1 and s2, `be_body` in it.
std::string sw_config(const std::string& fe_body, const std::string& be_body = "") {
  return "defaults\n  mode http\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
         "frontend f\n  bind :1\n  default_backend b\n" + fe_body +
         "backend b\n" + be_body + "  server s1 127.0.0.1:80\n  server s2 127.0.0.1:81\n";
}

TEST(UseBackendFormat, ParsedAsAFormatAndNotResolved) {
  auto r = parse(sw_config("  use_backend be_%[req.hdr(host),lower,field(1,:)] if { path_beg /x }\n"
                           "  use_backend %[var(txn.be)]\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& f = proxy(r, "f");
  ASSERT_EQ(f.use_backends.size(), 2u);
  EXPECT_TRUE(f.use_backends[0].dynamic);
  EXPECT_EQ(f.use_backends[0].backend_index, -1);
  EXPECT_FALSE(f.use_backends[0].cond.empty());
  EXPECT_TRUE(f.use_backends[1].dynamic);
}

TEST(UseBackendFormat, AFormatWithoutSamplesIsAStaticName) {
  // HAProxy resolves such a name at start-up, like any static one.
  auto r = parse(sw_config("  use_backend %%b\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("Proxy 'f': unable to find required use_backend: '%%b'.")) << r.all();
}

TEST(UseBackendFormat, Errors) {
  auto r = parse(sw_config("  use_backend %[nosuchfetch]\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:9] : failed to parse use_backend rule '%[nosuchfetch]' : failed "
                    "to parse sample expression <nosuchfetch]> : unknown fetch method 'nosuchfetch'."))
      << r.all();
  r = parse(sw_config("  use_backend be_%[path\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("failed to parse use_backend rule 'be_%[path'")) << r.all();
}

TEST(UseServer, StaticNamesResolvedInOrder) {
  auto r = parse(sw_config("", "  use-server s2 if { path_beg /two }\n  use-server s1 unless TRUE\n"
                               "  use-server srv_%[req.hdr(x-srv)] if { req.hdr(x-srv) -m found }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& b = proxy(r, "b");
  ASSERT_EQ(b.use_servers.size(), 3u);
  EXPECT_EQ(b.use_servers[0].server_index, 1);
  EXPECT_EQ(b.use_servers[1].server_index, 0);
  EXPECT_TRUE(b.use_servers[1].cond.unless_);
  EXPECT_TRUE(b.use_servers[2].dynamic);
  EXPECT_EQ(b.use_servers[2].server_index, -1);
}

TEST(UseServer, Errors) {
  EXPECT_TRUE(parse(sw_config("", "  use-server\n")).has("parsing [f.cfg:10] : 'use-server' expects a server name."));
  EXPECT_TRUE(parse(sw_config("", "  use-server s1\n"))
                  .has("parsing [f.cfg:10] : 'use-server' requires either 'if' or 'unless' followed by a condition."));
  EXPECT_TRUE(parse(sw_config("", "  use-server s1 when TRUE\n"))
                  .has("parsing [f.cfg:10] : 'use-server' requires either 'if' or 'unless' followed by a condition."));
  auto r = parse(sw_config("", "  use-server nosuch if TRUE\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("backend 'b' : unable to find server 'nosuch' referenced in a 'use-server' rule.")) << r.all();
  r = parse(sw_config("", "  use-server s1 if { nosuch }\n"));
  EXPECT_TRUE(r.has("parsing [f.cfg:10] : error detected while parsing switching rule : unknown fetch method "
                    "'nosuch' in ACL expression 'nosuch'.")) << r.all();
  r = parse(sw_config("", "  use-server %[nosuch] if TRUE\n"));
  EXPECT_TRUE(r.has("Parsing [f.cfg:10]; use-server rule failed to parse log-format '%[nosuch]' : failed to parse "
                    "sample expression <nosuch]> : unknown fetch method 'nosuch'.")) << r.all();
  EXPECT_TRUE(parse("defaults\n  use-server s1 if TRUE\n")
                  .has("parsing [f.cfg:2] : 'use-server' not allowed in 'defaults' section."));
  r = parse(sw_config("", "  use-server s1 if { res.hdr(x) -m found }\n"));
  EXPECT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:10] : anonymous acl will never match because it uses keyword 'res.hdr' which "
                    "is incompatible with 'backend use-server, balance or stick-match rule'")) << r.all();
}

}  // namespace
}  // namespace sluice::config
