// Loading as a whole: a minimal configuration, the environment the two passes see, and the
// files and directories named by -f.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/loader.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::kTimeouts;

TEST(Loader, MinimalValidConfig) {
  auto r = parse(std::string("global\n  maxconn 100\ndefaults\n") + kTimeouts +
                 "frontend fe\n  bind :8080\n  default_backend be\nbackend be\n  server s1 127.0.0.1:80\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.alerts, 0);
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  const auto& m = *r.r.model;
  EXPECT_EQ(m.global.maxconn, 100);
  ASSERT_EQ(m.proxies.size(), 2u);
  EXPECT_EQ(m.proxies[0].name, "fe");
  EXPECT_EQ(m.proxies[0].id, 2);
  EXPECT_EQ(m.proxies[1].id, 3);
  EXPECT_EQ(m.proxies[0].default_backend_index, 1);
  EXPECT_EQ(m.proxies[0].binds[0].addrs[0].addr.to_string(), "0.0.0.0:8080");
  EXPECT_EQ(m.proxies[1].servers[0].id, 1);
  EXPECT_EQ(m.proxies[1].timeouts.connect, 1000u);
  EXPECT_EQ(m.files, std::vector<std::string>{"f.cfg"});
}

TEST(Loader, EmptyFileIsValid) {
  auto r = parse("");
  EXPECT_TRUE(r.r.model);
  EXPECT_EQ(r.r.alerts, 0);
}

// ---- environment ----

// Spec 1.4: HAPROXY_LOCALPEER is set before the second pass; without -L and `localpeer`
// (sluice has neither) it is the host name.
TEST(Env, LocalPeerIsTheHostName) {
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  auto r = parse("global\n  node \"${HAPROXY_LOCALPEER}\"\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().node, host);
}

TEST(Env, SetenvIsVisibleToEarlierLines) {
  auto r = parse("global\n  node \"${SLUICE_LATE}\"\n  setenv SLUICE_LATE late\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->global.node, "late");
  EXPECT_EQ(std::getenv("SLUICE_LATE"), nullptr);   // load_text never touches the process
}

TEST(Env, PresetUnsetReset) {
  auto r = parse("global\n  setenv SLUICE_X a\n  presetenv SLUICE_X b\n  node \"$SLUICE_X\"\n");
  EXPECT_EQ(r.r.model->global.node, "a");
  r = parse("global\n  setenv SLUICE_X a\n  unsetenv SLUICE_X\n  node \"x${SLUICE_X}\"\n");
  EXPECT_EQ(r.r.model->global.node, "x");
  r = parse("global\n  setenv SLUICE_K k\n  resetenv SLUICE_K\n  node \"${SLUICE_K}${HOME}\"\n");
  EXPECT_EQ(r.r.model->global.node, "k");
  r = parse("global\n  setenv SLUICE_X\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'setenv' expects environment variable value for 'SLUICE_X'."));
}

TEST(Env, HaproxyVariables) {
  auto r = parse("global\n  node \"${HAPROXY_BRANCH}\"\n  description \"${HAPROXY_CFGFILES}\"\n");
  EXPECT_EQ(r.r.model->global.node, "3.2");
  EXPECT_EQ(r.r.model->global.description, "f.cfg");
}

TEST(Env, AddressQuirk) {
  ::setenv("SLUICE_IP", "127.0.0.1", 1);
  auto r = parse("backend b\n  server s $SLUICE_IP:80\nfrontend f\n  bind '$SLUICE_IP:81'\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].servers[0].addr.addr.to_string(), "127.0.0.1:80");
  EXPECT_EQ(r.r.model->proxies[1].binds[0].addrs[0].addr.to_string(), "127.0.0.1:81");
  r = parse("frontend f\n  bind $SLUICE_NOPE\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'bind' : '$SLUICE_NOPE' resolves to an empty address "
                    "(environment variable missing?)")) << r.all();
}

TEST(Env, StarExpansionOnServerLine) {
  ::setenv("SLUICE_SRV", "10.0.0.1:80 weight 5", 1);
  auto r = parse("backend b\n  server s \"${SLUICE_SRV[*]}\"\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].servers[0].weight, 5);
  r = parse("backend b\n  server s \"${SLUICE_SRV}\"\n");
  EXPECT_FALSE(r.r.model);
}

// ---- files and directories ----

TEST(Load, MissingFileAndDirectory) {
  std::vector<Diagnostic> d;
  LoadOptions o;
  o.paths = {"/nonexistent/x.cfg"};
  auto r = load(o, [&](const Diagnostic& x) { d.push_back(x); });
  EXPECT_FALSE(r.model);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].text, "Cannot open configuration file/directory /nonexistent/x.cfg : No such file or directory");

  char tmpl[] = "/tmp/sluice_cfgXXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  auto write = [&](const std::string& n, const std::string& t) {
    FILE* f = std::fopen((dir + "/" + n).c_str(), "w");
    std::fputs(t.c_str(), f);
    std::fclose(f);
  };
  write("b.cfg", "backend b\n");
  write("a.cfg", "backend a\n");
  write(".hidden.cfg", "bogus\n");
  write("c.conf", "bogus\n");
  o.paths = {dir};
  d.clear();
  r = load(o, [&](const Diagnostic& x) { d.push_back(x); });
  ASSERT_TRUE(r.model);
  ASSERT_EQ(r.model->files.size(), 2u);
  EXPECT_EQ(r.model->proxies[0].name, "a");
  EXPECT_EQ(r.model->proxies[1].name, "b");
  for (auto n : {"a.cfg", "b.cfg", ".hidden.cfg", "c.conf"}) std::remove((dir + "/" + n).c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace sluice::config
