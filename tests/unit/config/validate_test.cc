// The check phase after parsing: default_backend resolution, duplicate servers and its
// warnings.
#include <gtest/gtest.h>

#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;

TEST(Validate, DefaultBackend) {
  auto r = parse("frontend fe\n  bind :1\n  default_backend nope\n");
  EXPECT_FALSE(r.r.model);
  ASSERT_TRUE(r.has("Proxy 'fe': unable to find required default_backend: 'nope'.")) << r.all();
  EXPECT_FALSE(r.diags.back().in_config_phase);
  EXPECT_TRUE(parse("frontend fe\n  bind :1\n  default_backend fe2\nfrontend fe2\n  bind :2\n").contains("unable to find required default_backend: 'fe2'."));
  EXPECT_TRUE(parse("listen x\n  bind :1\n  default_backend x\n").has("Proxy 'x': loop detected for default_backend: 'x'."));
  EXPECT_TRUE(parse("frontend fe\n  bind :1\n  disabled\n  default_backend nope\n").r.model);
  r = parse("listen l\n  bind :1\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n  server s 1.1.1.1:1\n  default_backend b\nbackend b\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.contains("servers will never be used")) << r.all();
}

TEST(Validate, DuplicateServers) {
  auto r = parse("backend b\n  server s1 1.1.1.1:1\n  server s1 1.1.1.1:2\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("[f.cfg:3] : 'server b/s1' : another server named 's1' was already defined at line 2, please use a distinct name."))
      << r.all();
}

TEST(Validate, Warnings) {
  auto r = parse("frontend f\n  timeout client 1s\n");
  EXPECT_TRUE(r.has("frontend 'f' has no 'bind' directive. Please declare it as a backend if this was intended."));
  r = parse("backend be\n  server s 1.1.1.1:1\n");
  EXPECT_TRUE(r.has("missing timeouts for backend 'be'.\n"
                    "   | While not properly invalid, you will certainly encounter various problems\n"
                    "   | with such a configuration. To fix this, please ensure that all following\n"
                    "   | timeouts are set to a non-zero value: 'client', 'connect', 'server'."));
  EXPECT_TRUE(r.r.model);
  // A tcp backend with a tunnel timeout is excused for its server timeout; no servers, no warning.
  EXPECT_EQ(parse("backend be\n  timeout connect 1s\n  timeout tunnel 1m\n  server s 1.1.1.1:1\n").r.warnings, 0);
  EXPECT_EQ(parse("backend be\n").r.warnings, 0);
}

}  // namespace
}  // namespace sluice::config
