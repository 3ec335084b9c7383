// Pattern lists (src/pattern): HAProxy's file format, each match method's answer on the
// scanned (short) and indexed (long) paths alike, versions, and readers during changes.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "pattern/pattern.h"

namespace sluice::pattern {
namespace {

in_addr v4(const char* s) {
  in_addr a{};
  inet_pton(AF_INET, s, &a);
  return a;
}

in6_addr v6(const char* s) {
  in6_addr a{};
  inet_pton(AF_INET6, s, &a);
  return a;
}

// A map (or ACL) Ref with `entries`, compiled for `kind`. `pad` unmatched entries are added
// first so that the indexed path runs instead of the scan.
struct Built {
  std::shared_ptr<Ref> ref;
  std::shared_ptr<Expr> expr;
};
Built build(Kind kind, const std::vector<std::pair<std::string, std::string>>& entries, int pad = 0) {
  Built b;
  b.ref = std::make_shared<Ref>("", kind.value == ValueType::kNone ? Ref::kAcl : Ref::kMap);
  for (int i = 0; i < pad; ++i) {
    std::string k = kind.method == Method::kIp    ? "203.0.113." + std::to_string(i % 250) + "/32"
                    : kind.method == Method::kInt ? std::to_string(100000 + i)
                                                  : "zz-pad-" + std::to_string(i);
    b.ref->add_loaded(k, "pad");
  }
  for (const auto& [k, v] : entries) b.ref->add_loaded(k, v);
  b.expr = std::make_shared<Expr>(b.ref, kind);
  auto r = b.ref->compile(*b.expr, nullptr);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return b;
}

std::string value_of(const Expr& e, std::string_view s) {
  std::string out = "<none>";
  e.lookup([&](const Index& idx, base::Regex::Groups* g) { return idx.find_str(s, g); },
           [&](const Item& it, const base::Regex::Groups&) { out = it.value; });
  return out;
}

std::string value_v4(const Expr& e, const char* a) {
  std::string out = "<none>";
  in_addr x = v4(a);
  e.lookup([&](const Index& idx, base::Regex::Groups*) { return idx.find_v4(x); },
           [&](const Item& it, const base::Regex::Groups&) { out = it.value; });
  return out;
}

std::string value_v6(const Expr& e, const char* a) {
  std::string out = "<none>";
  in6_addr x = v6(a);
  e.lookup([&](const Index& idx, base::Regex::Groups*) { return idx.find_v6(x); },
           [&](const Item& it, const base::Regex::Groups&) { out = it.value; });
  return out;
}

Kind map_kind(Method m, bool icase = false) {
  Kind k;
  k.method = m;
  k.icase = icase;
  k.value = ValueType::kStr;
  return k;
}

class BothPaths : public ::testing::TestWithParam<int> {};

TEST_P(BothPaths, ExactStringsFirstDuplicateWins) {
  auto b = build(map_kind(Method::kStr), {{"example.com", "a"}, {"example.com", "dup"}, {"x", "b"}}, GetParam());
  EXPECT_EQ(value_of(*b.expr, "example.com"), "a");
  EXPECT_EQ(value_of(*b.expr, "x"), "b");
  EXPECT_EQ(value_of(*b.expr, "EXAMPLE.com"), "<none>");
  EXPECT_EQ(value_of(*b.expr, "example.co"), "<none>");
}

TEST_P(BothPaths, ExactStringsIgnoringCase) {
  auto b = build(map_kind(Method::kStr, true), {{"Example.COM", "a"}, {"example.com", "dup"}}, GetParam());
  EXPECT_EQ(value_of(*b.expr, "EXAMPLE.com"), "a");
}

TEST_P(BothPaths, PrefixesLongestWinsAsHAProxysTree) {
  auto b = build(map_kind(Method::kBeg),
                 {{"/api", "api"}, {"/api/v2", "v2"}, {"/", "root"}, {"/api/v2", "v2dup"}, {"/b", "b"}},
                 GetParam());
  EXPECT_EQ(value_of(*b.expr, "/api/v2/x"), "v2");
  EXPECT_EQ(value_of(*b.expr, "/api/v1"), "api");
  EXPECT_EQ(value_of(*b.expr, "/apx"), "root");
  EXPECT_EQ(value_of(*b.expr, "/b"), "b");
  EXPECT_EQ(value_of(*b.expr, "x"), "<none>");
}

TEST_P(BothPaths, PrefixesIgnoringCaseFirstInOrder) {
  // -i puts HAProxy's patterns in a list: the first written that matches answers.
  auto b = build(map_kind(Method::kBeg, true), {{"/API", "api"}, {"/api/v2", "v2"}}, GetParam());
  EXPECT_EQ(value_of(*b.expr, "/Api/V2/x"), "api");
}

TEST_P(BothPaths, NetworksLongestPrefixWins) {
  Kind k = map_kind(Method::kIp);
  auto b = build(k,
                 {{"10.0.0.0/8", "n8"},
                  {"10.1.0.0/16", "n16"},
                  {"10.1.2.3", "host"},
                  {"::ffff:10.9.0.0/112", "mapped"},
                  {"2001:db8::/32", "v6"}},
                 GetParam());
  EXPECT_EQ(value_v4(*b.expr, "10.1.2.3"), "host");
  EXPECT_EQ(value_v4(*b.expr, "10.1.9.9"), "n16");
  EXPECT_EQ(value_v4(*b.expr, "10.2.0.1"), "n8");
  // No IPv4 network holds it: the IPv6 networks through ::ffff:a.b.c.d.
  EXPECT_EQ(value_v4(*b.expr, "11.0.0.1"), "<none>");
  EXPECT_EQ(value_v6(*b.expr, "2001:db8::1"), "v6");
  EXPECT_EQ(value_v6(*b.expr, "::ffff:10.1.2.3"), "host");
  EXPECT_EQ(value_v6(*b.expr, "2001:db9::1"), "<none>");
}

TEST_P(BothPaths, Integers) {
  Kind k = map_kind(Method::kInt);
  auto b = build(k, {{"1", "one"}, {"2", "two"}, {"1", "dup"}}, GetParam());
  auto find = [&](int64_t n) {
    std::string out = "<none>";
    b.expr->lookup([&](const Index& idx, base::Regex::Groups*) { return idx.find_int(n); },
                   [&](const Item& it, const base::Regex::Groups&) { out = it.value; });
    return out;
  };
  EXPECT_EQ(find(1), "one");
  EXPECT_EQ(find(2), "two");
  EXPECT_EQ(find(3), "<none>");
}

INSTANTIATE_TEST_SUITE_P(ScannedAndIndexed, BothPaths, ::testing::Values(0, 40));

TEST(Pattern, ListMethodsInOrder) {
  EXPECT_EQ(value_of(*build(map_kind(Method::kDom), {{"example.com", "d"}}).expr, "a.example.com"), "d");
  EXPECT_EQ(value_of(*build(map_kind(Method::kDom), {{"example.com", "d"}}).expr, "aexample.com"), "<none>");
  EXPECT_EQ(value_of(*build(map_kind(Method::kDir), {{"img", "i"}}).expr, "/static/img/x.png"), "i");
  EXPECT_EQ(value_of(*build(map_kind(Method::kEnd), {{".png", "p"}, {"png", "q"}}).expr, "/a.png"), "p");
  EXPECT_EQ(value_of(*build(map_kind(Method::kSub), {{"adm", "s"}}).expr, "/x/admin"), "s");
  auto re = build(map_kind(Method::kRegm), {{"^/u/([0-9]+)$", "user-\\1"}});
  std::string out;
  re.expr->lookup([&](const Index& idx, base::Regex::Groups* g) { return idx.find_str("/u/42", g); },
                  [&](const Item& it, const base::Regex::Groups& g) {
                    out = base::Regex::expand(it.value, "/u/42", g);
                  });
  EXPECT_EQ(out, "user-42");
}

TEST(Pattern, FileFormat) {
  std::string path = ::testing::TempDir() + "/pattern_test.map";
  {
    std::ofstream f(path);
    f << "# comment\n\n  lead v\nfoo\\ bar spaced  \nk\tv\tw\nonly\r\n";
  }
  Ref ref(path, Ref::kMap);
  ASSERT_TRUE(ref.load_file().ok());
  // HAProxy's reading: no unescaping, the value runs to the end of the line, blanks cut.
  EXPECT_EQ(ref.show(0).substr(ref.show(0).find(' ') + 1, 7), "lead v\n");
  std::string shown = ref.show(0);
  EXPECT_NE(shown.find(" foo\\ bar spaced\n"), std::string::npos) << shown;
  EXPECT_NE(shown.find(" k v\tw\n"), std::string::npos) << shown;
  EXPECT_NE(shown.find(" only \n"), std::string::npos) << shown;
  std::remove(path.c_str());
  Ref missing("/nonexistent/file.map", Ref::kMap);
  EXPECT_EQ(missing.load_file().error().message, "failed to open pattern file </nonexistent/file.map>");
}

TEST(Pattern, BadEntriesAreRefusedWithHAProxysTexts) {
  Kind ip = map_kind(Method::kIp);
  auto b = build(ip, {{"10.0.0.0/8", "a"}});
  EXPECT_EQ(b.ref->add_current("nope", "v").error().message, "'nope' is not a valid IPv4 or IPv6 address");
  Kind num = map_kind(Method::kStr);
  num.value = ValueType::kInt;
  auto n = build(num, {{"a", "1"}});
  EXPECT_EQ(n.ref->add_current("b", "x").error().message, "unable to parse 'x'");
  EXPECT_EQ(n.ref->set("a", "y").error().message, "unable to parse 'y'");
  EXPECT_EQ(n.ref->set("zz", "2").error().message, "entry not found.");
  EXPECT_EQ(n.ref->del("zz").error().message, "Key not found.");
}

TEST(Pattern, VersionsPrepareAndCommit) {
  auto b = build(map_kind(Method::kStr), {{"a", "1"}, {"b", "2"}});
  uint32_t v = b.ref->prepare();
  EXPECT_EQ(v, 1u);
  ASSERT_TRUE(b.ref->add(v, "c", "3").ok());
  // Not visible before the commit.
  EXPECT_EQ(value_of(*b.expr, "c"), "<none>");
  EXPECT_EQ(value_of(*b.expr, "a"), "1");
  EXPECT_EQ(b.ref->commit(5).error().message, "Version number out of range.");
  ASSERT_TRUE(b.ref->commit(v).ok());
  EXPECT_EQ(value_of(*b.expr, "c"), "3");
  EXPECT_EQ(value_of(*b.expr, "a"), "<none>");
  EXPECT_EQ(b.ref->curr_gen(), 1u);
  // `#<ptr>` names one entry.
  std::string shown = b.ref->show(1);
  std::string ptr = "#" + shown.substr(0, shown.find(' '));
  ASSERT_TRUE(b.ref->set(ptr, "33").ok());
  EXPECT_EQ(value_of(*b.expr, "c"), "33");
  ASSERT_TRUE(b.ref->del(ptr).ok());
  EXPECT_EQ(value_of(*b.expr, "c"), "<none>");
}

TEST(Pattern, GetAnswersAsHAProxysCli) {
  auto b = build(map_kind(Method::kBeg), {{"/api", "x"}});
  EXPECT_EQ(b.ref->get("/api/v"),
            "type=beg, case=sensitive, found=yes, idx=tree, key=\"/api\", value=\"x\", type=\"str\"\n");
  EXPECT_EQ(b.ref->get("/b"), "type=beg, case=sensitive, found=no\n");
  Kind acl;
  acl.method = Method::kSub;
  acl.icase = true;
  auto a = build(acl, {{"adm", ""}});
  EXPECT_EQ(a.ref->get("/ADMIN"), "type=sub, case=insensitive, match=yes, idx=list, pattern=\"adm\"\n");
}

// Readers on other threads see the old list or the new one, never a torn or freed one.
TEST(Pattern, ReadersDuringChanges) {
  auto b = build(map_kind(Method::kStr), {{"k", "v0"}}, 20);
  std::atomic<bool> stop{false};
  std::atomic<long> bad{0}, reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        std::string v = value_of(*b.expr, "k");
        if (v.size() < 2 || v[0] != 'v') ++bad;
        ++reads;
      }
    });
  }
  for (int i = 1; i <= 300; ++i) {
    ASSERT_TRUE(b.ref->set("k", "v" + std::to_string(i)).ok());
    ASSERT_TRUE(b.ref->add_current("extra" + std::to_string(i), "e").ok());
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(value_of(*b.expr, "k"), "v300");
}

TEST(Registry, IdsFilesAndColumns) {
  auto& reg = Registry::global();
  reg.reset();
  bool created = false;
  auto m = reg.file_ref("/x.map", true, &created);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(created);
  EXPECT_EQ(reg.file_ref("/x.map", false, &created).error().message,
            "The file \"/x.map\" is already used as two column file and cannot be used by as one column file.");
  auto pinned = reg.inline_ref(0);
  ASSERT_TRUE(pinned.ok());
  auto other = reg.inline_ref(-1);
  reg.finalize_ids();
  EXPECT_EQ(pinned.value()->id(), 0);
  EXPECT_EQ(m.value()->id(), 1);   // 0 is taken by -u 0
  EXPECT_EQ(other.value()->id(), 2);
  EXPECT_EQ(reg.find("#1", true), m.value());
  EXPECT_EQ(reg.find("/x.map", true), m.value());
  EXPECT_EQ(reg.find("/x.map", false), nullptr);
  EXPECT_EQ(reg.find("#2", false), other.value());
  reg.reset();
}

}  // namespace
}  // namespace sluice::pattern
