// Userlists: Authorization parsing, password checks (crypt(3) and insecure), groups linked
// from both sides, and the registry's resolution of names used before their section.
#include <crypt.h>
#include <gtest/gtest.h>

#include "auth/userlist.h"

namespace sluice::auth {
namespace {

using M = Credentials::Method;

TEST(Authorization, Basic) {
  Credentials c = parse_authorization("Basic YWxpY2U6d29uZDpkZXI=");   // alice:wond:der
  EXPECT_EQ(c.method, M::kBasic);
  EXPECT_EQ(c.user, "alice");
  EXPECT_EQ(c.pass, "wond:der");
  c = parse_authorization("bAsIc \t YTo=");   // "a:" : an empty password
  EXPECT_EQ(c.method, M::kBasic);
  EXPECT_EQ(c.user, "a");
  EXPECT_EQ(c.pass, "");
  for (const char* bad : {"Basic", "Basic YQ==", "Basic !!!", "Basic YTp4 extra", "Digest YTp4", ""})
    EXPECT_EQ(parse_authorization(bad).method, M::kNone) << bad;
}

TEST(Authorization, Bearer) {
  Credentials c = parse_authorization("bearer   tok.en-1 ");
  EXPECT_EQ(c.method, M::kBearer);
  EXPECT_EQ(c.token, "tok.en-1");
}

std::string hash(const char* pw, const char* setting) {
  crypt_data d{};
  const char* h = crypt_rn(pw, setting, &d, sizeof d);
  return h ? h : "";
}

TEST(Userlist, PasswordsAndGroups) {
  Userlist ul("L");
  User a;
  a.name = "a";
  a.pass = hash("secret", "$6$salt$");
  a.has_pass = true;
  User b;
  b.name = "b";
  b.pass = "plain";
  b.has_pass = b.insecure = true;
  User c;
  c.name = "c";   // no password: never authenticated
  ASSERT_TRUE(ul.add_user(std::move(a), {"g2"}));
  ASSERT_TRUE(ul.add_user(std::move(b), {}));
  ASSERT_TRUE(ul.add_user(std::move(c), {}));
  User dup;
  dup.name = "a";
  EXPECT_FALSE(ul.add_user(std::move(dup), {}));
  ASSERT_TRUE(ul.add_group("g1", {"b", "a"}));
  ASSERT_TRUE(ul.add_group("g2", {}));
  EXPECT_FALSE(ul.add_group("g1", {}));
  ASSERT_TRUE(ul.resolve().ok());

  EXPECT_NE(ul.check("a", "secret"), nullptr);
  EXPECT_EQ(ul.check("a", "secreT"), nullptr);
  EXPECT_EQ(ul.check("a", ""), nullptr);
  EXPECT_NE(ul.check("b", "plain"), nullptr);
  EXPECT_EQ(ul.check("b", "plai"), nullptr);
  EXPECT_EQ(ul.check("c", ""), nullptr);
  EXPECT_EQ(ul.check("z", "x"), nullptr);
  const User* ua = ul.find("a");
  const User* ub = ul.find("b");
  ASSERT_TRUE(ua && ub);
  EXPECT_TRUE(ul.in_group(*ua, ul.group_index("g1")));
  EXPECT_TRUE(ul.in_group(*ua, ul.group_index("g2")));
  EXPECT_TRUE(ul.in_group(*ub, ul.group_index("g1")));
  EXPECT_FALSE(ul.in_group(*ub, ul.group_index("g2")));
  EXPECT_EQ(ul.group_index("g3"), -1);
}

TEST(Userlist, ResolveErrors) {
  Userlist ul("L");
  User a;
  a.name = "a";
  ASSERT_TRUE(ul.add_user(std::move(a), {"nope"}));
  auto r = ul.resolve();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "userlist 'L': no such group 'nope' specified in user 'a'");
  Userlist ul2("M");
  ASSERT_TRUE(ul2.add_group("g", {"ghost"}));
  r = ul2.resolve();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "userlist 'M': no such user 'ghost' specified in group 'g'");
}

TEST(Registry, NamesUsedBeforeTheirSection) {
  Registry reg;
  auto used = reg.use("L", "parsing [f:3]", "arg 1 of fetch keyword 'http_auth'");
  reg.use("Nope", "parsing [f:4]", "arg 1 of fetch keyword 'http_auth'");
  auto defined = reg.define("L", "f:9");
  ASSERT_EQ(used, defined);
  EXPECT_EQ(reg.define("L", "f:12"), nullptr);   // a second section of the same name
  ASSERT_TRUE(defined->add_group("g", {}));
  reg.require_groups(defined, {"g", "h"}, "parsing [f:5]", "acl 'http_auth_group(L) g h'");
  reg.require_groups(defined, {}, "parsing [f:6]", "acl 'http_auth_group(L)'");
  auto errors = reg.finish();
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "parsing [f:4]: unable to find userlist 'Nope' referenced in arg 1 of fetch keyword 'http_auth'.");
  EXPECT_EQ(errors[1], "parsing [f:5]: acl 'http_auth_group(L) g h': invalid group 'h'.");
  EXPECT_EQ(errors[2], "parsing [f:6]: acl 'http_auth_group(L)': no groups specified.");
  EXPECT_NE(reg.find("L"), nullptr);
  EXPECT_EQ(reg.find("Nope"), nullptr);
  reg.reset();
  EXPECT_EQ(reg.find("L"), nullptr);
}

TEST(Probe, KnownAndUnknownHashes) {
  uint64_t ms = 0;
  EXPECT_TRUE(probe_hash(hash("x", "$5$salt$"), &ms));
  EXPECT_FALSE(probe_hash("notahash", &ms));
}

}  // namespace
}  // namespace sluice::auth
