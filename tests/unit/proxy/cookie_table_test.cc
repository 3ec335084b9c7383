// The per-server cookie values the dynamic cookie commands change (proxy/cookie_table.h), with
// HAProxy 3.5's rules (srv_set_dyncookie, measured), and the data path reading them.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <atomic>
#include <memory>
#include <thread>

#include "proxy/cookie.h"
#include "proxy/cookie_table.h"

namespace sluice::proxy {
namespace {

net::SocketAddress v4(const char* ip, uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  inet_pton(AF_INET, ip, &in.sin_addr);
  return net::SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&in), sizeof in);
}

// Values taken from HAProxy 3.5 (show stat, Set-Cookie) for 127.0.0.1:19001.
constexpr const char* kMykey = "29c725a0ee26ef26";
constexpr const char* kNewkey = "c2acb4ef7362887a";
constexpr const char* kK2 = "9d662e338741ebfa";
constexpr const char* kK2Port19003 = "2fc5d2e30444e5f5";

CookieTable table(bool dynamic, std::string key = "mykey") {
  return CookieTable({{"", v4("127.0.0.1", 19001)}, {"B", v4("127.0.0.1", 19002)}, {"", {}}},
                     std::move(key), dynamic);
}

TEST(CookieTable, BuiltValues) {
  CookieTable t = table(true);
  EXPECT_FALSE(t.changed());
  EXPECT_EQ(t.value(0), kMykey);
  EXPECT_EQ(t.value(1), "B");
  EXPECT_EQ(t.value(2), "");   // no address (init-addr none): no dynamic cookie
  EXPECT_EQ(t.value(9), "");
  EXPECT_EQ(table(false).value(0), "");
  EXPECT_EQ(table(true, "").value(0), "");
  EXPECT_EQ(dynamic_cookie("mykey", v4("127.0.0.1", 19001)), kMykey);
}

TEST(CookieTable, SetKey) {
  CookieTable t = table(true);
  t.set_key("newkey");
  EXPECT_TRUE(t.changed());
  EXPECT_EQ(t.value(0), kNewkey);
  EXPECT_EQ(t.value(1), "B");   // its own cookie never changes
  EXPECT_EQ(t.read()->values.size(), 3u);
}

TEST(CookieTable, SetKeyOfStaticBackendWaitsForEnable) {
  CookieTable t = table(false);
  t.set_key("k2");
  EXPECT_FALSE(t.changed());   // nothing changed: the fast path stays
  EXPECT_EQ(t.value(0), "");
  t.set_dynamic(true);
  EXPECT_TRUE(t.changed());
  EXPECT_EQ(t.value(0), kK2);
}

TEST(CookieTable, DisableClearsDynamicValuesOnly) {
  CookieTable t = table(true);
  t.set_dynamic(false);
  EXPECT_EQ(t.value(0), "");
  EXPECT_EQ(t.value(1), "B");
  t.set_key("k2");   // disabled: kept empty
  EXPECT_EQ(t.value(0), "");
  t.set_addr(0, v4("127.0.0.1", 19003));
  EXPECT_EQ(t.value(0), "");
  t.set_dynamic(true);
  EXPECT_EQ(t.value(0), kK2Port19003);
}

TEST(CookieTable, SetAddrRecomputes) {
  CookieTable t = table(true, "k2");
  t.set_addr(0, v4("127.0.0.1", 19003));
  EXPECT_EQ(t.value(0), kK2Port19003);
  t.set_addr(1, v4("127.0.0.1", 19003));
  EXPECT_EQ(t.value(1), "B");
  t.set_addr(7, v4("127.0.0.1", 1));   // out of range: ignored
  t.set_addr(0, {});                   // no family: the old value stays (HAProxy)
  EXPECT_EQ(t.value(0), kK2Port19003);
}

struct AllUp final : ServerStates {
  bool running(int) const override { return true; }
};

// The data path reads the configured values until a change, then the table's.
TEST(CookieTable, RequestAndResponseFollowTheTable) {
  auto tbl = std::make_shared<CookieTable>(
      std::vector<CookieTable::Server>{{"", v4("127.0.0.1", 19001)}, {"B", v4("127.0.0.1", 19002)}},
      "mykey", true);
  CookieSettings c;
  c.name = "SRV";
  c.mode = CookieSettings::Mode::kInsert;
  c.server_cookies = {tbl->value(0), tbl->value(1)};
  c.table = tbl;
  auto pick = [&](std::string_view value) {
    std::vector<http::Header> h{{"host", "x"}, {"cookie", value}};
    http::StringStore store;
    CookieTxn t;
    CookieRequest in;
    in.ck = &c;
    request_cookies(in, AllUp(), h, store, t);
    return t.server;
  };
  auto inserted = [&](int server) {
    std::vector<http::Header> h;
    http::StringStore store;
    CookieTxn t;
    CookieResponse in;
    in.ck = &c;
    in.server = server;
    response_cookies(in, h, store, t);
    return h.empty() ? std::string() : std::string(h.back().value);
  };
  EXPECT_EQ(pick(std::string("SRV=") + kMykey), 0);
  EXPECT_EQ(inserted(0), std::string("SRV=") + kMykey + "; path=/");
  tbl->set_key("newkey");
  EXPECT_EQ(pick(std::string("SRV=") + kMykey), -1);
  EXPECT_EQ(pick(std::string("SRV=") + kNewkey), 0);
  EXPECT_EQ(pick("SRV=B"), 1);
  EXPECT_EQ(inserted(0), std::string("SRV=") + kNewkey + "; path=/");
  tbl->set_dynamic(false);
  EXPECT_EQ(pick(std::string("SRV=") + kNewkey), -1);
  EXPECT_EQ(inserted(0), "SRV=; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/");
}

// Readers on other threads always see a whole snapshot while a writer republishes.
TEST(CookieTable, ConcurrentReaders) {
  CookieTable t = table(true);
  std::atomic<bool> stop{false};
  std::atomic<long> bad{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        CookieTable::Guard g = t.read();
        if (g->values.size() != 3 || g->values[1] != "B" ||
            (g->values[0] != kMykey && g->values[0] != kNewkey))
          bad.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < 2000; ++i) t.set_key(i % 2 ? "mykey" : "newkey");
  stop = true;
  for (auto& th : readers) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace sluice::proxy
