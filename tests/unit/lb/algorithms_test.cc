// Distribution and behaviour of every balance algorithm (src/lb). Tolerances are stated per
// test; random draws use fixed seeds so the results are deterministic.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <thread>

#include "lb/backend.h"
#include "lb/hash.h"
#include "lb/hash_table.h"
#include "lb/random.h"

namespace sluice::lb {
namespace {

std::vector<ServerSettings> servers(std::vector<int> weights) {
  std::vector<ServerSettings> out;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    ServerSettings s;
    s.name = "s" + std::to_string(i + 1);
    s.id = static_cast<int>(i + 1);
    s.weight = weights[i];
    out.push_back(s);
  }
  return out;
}

BalanceSettings algo(BalanceKind k, bool consistent = false) {
  BalanceSettings b;
  b.kind = k;
  b.hash.consistent = consistent;
  b.hash.avalanche = consistent;
  return b;
}

net::SocketAddress client_ip(uint32_t i) { return net::SocketAddress::ipv4(0x0a000000u + i * 7919u, 1234); }

Server* pick_one(Backend& be, const PickContext& ctx = {}) {
  std::vector<Server*> out;
  be.candidates(ctx, out, 1);
  return out.empty() ? nullptr : out[0];
}

std::vector<int> counts(Backend& be, int n, bool with_client) {
  std::vector<int> c(be.servers().size(), 0);
  for (int i = 0; i < n; ++i) {
    auto a = client_ip(static_cast<uint32_t>(i));
    PickContext ctx;
    if (with_client) ctx.client = &a;
    Server* s = pick_one(be, ctx);
    if (s) ++c[static_cast<std::size_t>(s->index())];
  }
  return c;
}

// Each server's share is within `tol` (relative) of its weight's share.
void expect_weighted(const std::vector<int>& c, const std::vector<int>& w, double tol) {
  double total = 0, wsum = 0;
  for (int x : c) total += x;
  for (int x : w) wsum += x;
  for (std::size_t i = 0; i < c.size(); ++i) {
    double want = total * w[i] / wsum;
    EXPECT_NEAR(c[i], want, want * tol + 1) << "server " << i + 1;
  }
}

TEST(Hash, KnownValues) {
  // The CRC-32 check value and values that follow from the definitions in HAProxy's hash.c.
  EXPECT_EQ(hash_crc32("123456789", 9), 0xcbf43926u);   // the CRC-32 check value
  EXPECT_EQ(hash_sdbm("", 0), 0u);
  EXPECT_EQ(hash_djb2("", 0), 5381u);
  EXPECT_EQ(hash_djb2("a", 1), 5381u * 33 + 'a');
  EXPECT_EQ(hash_sdbm("a", 1), static_cast<uint32_t>('a'));
  EXPECT_NE(full_hash(1), full_hash(2));
  HashSettings h;
  h.function = HashFunction::kNone;
  EXPECT_EQ(hash_key(h, "\x01\x02\x03\x04", 4), 0x01020304u);
  h.avalanche = true;
  EXPECT_EQ(hash_key(h, "\x01\x02\x03\x04", 4), full_hash(0x01020304u));
  EXPECT_NE(hash_wt6("abc", 3), hash_wt6("abd", 3));
}

TEST(RoundRobinAlgo, WeightsExactAndSetWeightTakesEffect) {
  Backend be("b", servers({1, 2, 3}));
  expect_weighted(counts(be, 600, false), {1, 2, 3}, 0.0);
  be.set_weight(*be.servers()[0], 3);
  expect_weighted(counts(be, 800, false), {3, 2, 3}, 0.0);
  be.set_weight(*be.servers()[2], 0);
  auto c = counts(be, 500, false);
  EXPECT_EQ(c[2], 0);
  EXPECT_EQ(be.servers()[2]->weight(), 0);
  EXPECT_EQ(be.servers()[2]->initial_weight(), 3);
}

TEST(RoundRobinAlgo, CandidatesForRetriesAreDistinctAndSkipDown) {
  Backend be("b", servers({1, 1, 1, 1}));
  be.set_usable(*be.servers()[1], false);
  std::vector<Server*> out;
  be.candidates(out, 4);
  ASSERT_EQ(out.size(), 3u);
  for (Server* s : out) EXPECT_NE(s->index(), 1);
  EXPECT_NE(out[0], out[1]);
  EXPECT_NE(out[1], out[2]);
  EXPECT_EQ(be.usable_active(), 3);
}

TEST(StaticRr, IgnoresRuntimeWeight) {
  Backend be("b", servers({1, 3}), algo(BalanceKind::kStaticRr));
  EXPECT_STREQ(be.algorithm_name(), "static-rr");
  be.set_weight(*be.servers()[0], 3);
  expect_weighted(counts(be, 400, false), {1, 3}, 0.0);
  be.set_weight(*be.servers()[0], 0);
  EXPECT_EQ(counts(be, 100, false)[0], 0);
}

TEST(LeastConn, PrefersLeastLoadedRelativeToWeight) {
  Backend be("b", servers({1, 1, 2}), algo(BalanceKind::kLeastConn));
  auto& sv = be.servers();
  // Hold connections: every pick acquires, so loads stay weight-proportional: 1:1:2.
  for (int i = 0; i < 400; ++i) ASSERT_TRUE(pick_one(be)->try_acquire());
  EXPECT_NEAR(sv[0]->current_conns(), 100, 1);
  EXPECT_NEAR(sv[1]->current_conns(), 100, 1);
  EXPECT_NEAR(sv[2]->current_conns(), 200, 1);
  // Free 50 on s2: it is now the least loaded and takes the next 50.
  for (int i = 0; i < 50; ++i) sv[1]->release();
  for (int i = 0; i < 50; ++i) {
    Server* s = pick_one(be);
    EXPECT_EQ(s, sv[1].get());
    s->try_acquire();
  }
}

TEST(LeastConn, TiesAreRoundRobin) {
  Backend be("b", servers({1, 1, 1}), algo(BalanceKind::kLeastConn));
  std::vector<int> c(3, 0);
  for (int i = 0; i < 300; ++i) {   // connect and close at once: always a tie
    Server* s = pick_one(be);
    ++c[static_cast<std::size_t>(s->index())];
    s->try_acquire();
    s->release();
  }
  EXPECT_EQ(c, (std::vector<int>{100, 100, 100}));
}

TEST(First, FillsInIdOrder) {
  auto st = servers({1, 1, 1});
  for (auto& s : st) s.maxconn = 2;
  st[0].id = 3;   // declared first but highest id
  st[2].id = 1;
  Backend be("b", st, algo(BalanceKind::kFirst));
  std::vector<std::string> order;
  for (int i = 0; i < 6; ++i) {
    Server* s = pick_one(be);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->try_acquire());
    order.push_back(s->name());
  }
  EXPECT_EQ(order, (std::vector<std::string>{"s3", "s3", "s2", "s2", "s1", "s1"}));
  EXPECT_EQ(pick_one(be), nullptr) << "every server full";
  be.servers()[2]->release();
  EXPECT_EQ(pick_one(be)->name(), "s3");
}

TEST(Source, StickyAndWeighted) {
  for (bool consistent : {false, true}) {
    Backend be("b", servers({1, 2, 1, 4}), algo(BalanceKind::kSource, consistent));
    auto a = client_ip(42);
    PickContext ctx;
    ctx.client = &a;
    Server* first = pick_one(be, ctx);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(pick_one(be, ctx), first);
    // 20000 clients: shares within 15% of the weights.
    expect_weighted(counts(be, 20000, true), {1, 2, 1, 4}, 0.15);
  }
}

// Fraction of `n` clients whose server changed between two backends' answers.
double moved(Backend& a, Backend& b, int n, int* to_or_from_changed, int changed_id) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    auto ip = client_ip(static_cast<uint32_t>(i));
    PickContext ctx;
    ctx.client = &ip;
    Server* x = pick_one(a, ctx);
    Server* y = pick_one(b, ctx);
    if (x->settings().id != y->settings().id) {
      ++m;
      if (x->settings().id == changed_id || y->settings().id == changed_id) ++*to_or_from_changed;
    }
  }
  return static_cast<double>(m) / n;
}

TEST(Source, ConsistentMovesOnlyTheChangedServersKeys) {
  const int n = 20000;
  std::vector<int> w10(10, 1), w11(11, 1);
  Backend ten("b", servers(w10), algo(BalanceKind::kSource, true));
  Backend eleven("b", servers(w11), algo(BalanceKind::kSource, true));
  int involving = 0;
  double f = moved(ten, eleven, n, &involving, 11);
  EXPECT_NEAR(f, 1.0 / 11, 0.03) << "adding one server to ten moves ~1/11 of the keys";
  EXPECT_EQ(involving, static_cast<int>(std::lround(f * n))) << "every moved key went to the new server";
  // Removing one (set_usable false on a live backend): only its own keys move.
  Backend live("b", servers(w10), algo(BalanceKind::kSource, true));
  Backend ref("b", servers(w10), algo(BalanceKind::kSource, true));
  live.set_usable(*live.servers()[3], false);
  involving = 0;
  f = moved(ref, live, n, &involving, 4);
  EXPECT_NEAR(f, 0.1, 0.03);
  EXPECT_EQ(involving, static_cast<int>(std::lround(f * n)));
}

TEST(Source, MapBasedMovesMostKeys) {
  // The documented contrast: map-based spreads evenly but a change re-maps most keys.
  std::vector<int> w10(10, 1), w11(11, 1);
  Backend ten("b", servers(w10), algo(BalanceKind::kSource, false));
  Backend eleven("b", servers(w11), algo(BalanceKind::kSource, false));
  int involving = 0;
  EXPECT_GT(moved(ten, eleven, 20000, &involving, 11), 0.5);
}

// The map-based table is HAProxy's (recalc_server_map): one slot per 1/16 of weight, filled
// by the same scores, so hash % slots lands where HAProxy's does. Expected tables computed
// from HAProxy's algorithm and checked against HAProxy 2.6's picks
// (tests/integration/http/test_balance.py compares the two side by side).
TEST(Source, MapBasedTableIsHaproxys) {
  auto table = [](std::vector<int> weights) {
    Backend be("b", servers(weights), algo(BalanceKind::kSource, false));
    std::vector<Server*> raw;
    for (auto& sp : be.servers()) raw.push_back(sp.get());
    auto t = HashTable::build(false, raw);
    std::string ids;
    std::vector<Server*> out;
    for (uint32_t h = 0; h < t->size(); ++h) {
      t->lookup(h, out, 1);
      ids += static_cast<char>('0' + out[0]->settings().id - 1);
    }
    return ids;
  };
  EXPECT_EQ(table({3, 2}), "00101001010010100101001010010100101001010010100101001010010100101001010010100101");
  EXPECT_EQ(table({1, 2, 1}), "0112011201120112011201120112011201120112011201120112011201120112");
  EXPECT_EQ(table({1, 1}).size(), 32u);
}

TEST(Source, DownServerKeysGoToNextOnRingBeforeAndAfterRebuild) {
  auto t = HashTable::build(true, {});
  EXPECT_TRUE(t->empty());
  Backend be("b", servers({1, 1, 1, 1}), algo(BalanceKind::kSource, true));
  auto a = client_ip(7);
  PickContext ctx;
  ctx.client = &a;
  std::vector<Server*> before;
  be.candidates(ctx, before, 4);
  ASSERT_EQ(before.size(), 4u) << "the ring order gives every server as a candidate";
  be.set_usable(*before[0], false);
  EXPECT_EQ(pick_one(be, ctx), before[1]) << "redispatch target = the next on the ring";
}

TEST(KeyHash, UriAndHdrHashKeysAndFallBackToRoundRobinInTcp) {
  for (auto k : {BalanceKind::kUri, BalanceKind::kHdr}) {
    BalanceSettings b = algo(k, true);
    b.hdr_name = "host";
    Backend be("b", servers({1, 1, 1}), b);
    expect_weighted(counts(be, 300, false), {1, 1, 1}, 0.0);   // no key: roundrobin
    std::string_view key = "/images/logo.png";
    PickContext ctx;
    ctx.key = &key;
    Server* s = pick_one(be, ctx);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(pick_one(be, ctx), s);
  }
}

TEST(RandomAlgo, WeightedAndPowerOfTwoChoices) {
  Random::seed_this_thread(12345);
  BalanceSettings b = algo(BalanceKind::kRandom);
  b.draws = 1;
  Backend one("b", servers({1, 3}), b);
  expect_weighted(counts(one, 20000, false), {1, 3}, 0.05);   // plain weighted random
  // p2c with held connections: the maximum load stays close to the mean. With 10 servers
  // and 1000 connections (mean 100), one draw gives a max well above it, two draws <= +10%.
  int mx[3] = {0, 0, 0};
  for (int draws : {1, 2}) {
    b.draws = draws;
    Backend be("b", servers(std::vector<int>(10, 1)), b);
    for (int i = 0; i < 1000; ++i) pick_one(be)->try_acquire();
    for (auto& s : be.servers()) mx[draws] = std::max(mx[draws], s->current_conns());
  }
  EXPECT_LE(mx[2], 105);
  EXPECT_GT(mx[1], mx[2]);
}

TEST(Backup, FirstBackupOnlyOrAllBackups) {
  auto st = servers({1, 1, 1, 1});
  st[2].backup = true;
  st[3].backup = true;
  Backend be("b", st);
  EXPECT_EQ(counts(be, 10, false)[2], 0);
  be.set_usable(*be.servers()[0], false);
  be.set_usable(*be.servers()[1], false);
  auto c = counts(be, 10, false);
  EXPECT_EQ(c[2], 10) << "without allbackups, the first backup only";
  BalanceSettings all;
  all.allbackups = true;
  Backend ab("b", st, all);
  ab.set_usable(*ab.servers()[0], false);
  ab.set_usable(*ab.servers()[1], false);
  c = counts(ab, 10, false);
  EXPECT_EQ(c[2], 5);
  EXPECT_EQ(c[3], 5);
  ab.set_usable(*ab.servers()[0], true);
  EXPECT_EQ(counts(ab, 10, false)[0], 10) << "an active server back: backups stop";
}

TEST(SlowStart, RampsAfterComingBackNotAtBoot) {
  auto st = servers({10, 10});
  st[0].slowstart_ms = 10000;
  Backend be("b", st);
  Server& s = *be.servers()[0];
  EXPECT_EQ(s.eweight(), 10) << "no slow start at start-up";
  EXPECT_EQ(s.throttle(), -1);
  be.set_usable(s, false, 1000);
  be.set_usable(s, true, 2000);
  // HAProxy's steps: share = (16 x whole seconds + slowstart) / slowstart sixteenths, the
  // weight rounded up from it, throttle with HAProxy's rounding (see server_throttle_rate).
  EXPECT_EQ(s.ramp(), 1);
  EXPECT_EQ(s.eweight(), 1);
  EXPECT_EQ(s.throttle(), 6);      // (100 x 10 x 1 + 15) / (16 x 10)
  be.update_slowstart(4500);       // 2 whole seconds of 10
  EXPECT_EQ(s.ramp(), 4);
  EXPECT_EQ(s.eweight(), 3);       // ceil(10 x 4 / 16)
  EXPECT_EQ(s.throttle(), 25);
  // Picks drive the ramp themselves when a step is due.
  PickContext ctx;
  ctx.now_ms = 7000;               // 5 s of 10 s
  pick_one(be, ctx);
  EXPECT_EQ(s.ramp(), 9);
  EXPECT_EQ(s.eweight(), 6);
  EXPECT_EQ(s.throttle(), 56);
  expect_weighted(counts(be, 1600, false), {6, 10}, 0.0);
  ctx.now_ms = 12000;
  pick_one(be, ctx);
  EXPECT_EQ(s.eweight(), 10);
  EXPECT_EQ(s.ramp(), Server::kWeightScale);
  EXPECT_EQ(s.throttle(), -1);
}

TEST(SlowStart, FourSecondsAsMeasuredOnHaproxy) {
  // weight 10, slowstart 4s, read at 0, 1 and 2 whole seconds: throttle 6/31/56 and
  // weight 1/4/6 (HAProxy 2.6 on the same configuration).
  auto st = servers({10, 10});
  st[1].slowstart_ms = 4000;
  Backend be("b", st);
  Server& s = *be.servers()[1];
  be.set_usable(s, false, 1000);
  be.set_usable(s, true, 2000);
  const int want_throttle[] = {6, 31, 56}, want_weight[] = {1, 4, 6};
  for (int i = 0; i < 3; ++i) {
    be.update_slowstart(2000 + 1200 * static_cast<uint64_t>(i));
    EXPECT_EQ(s.throttle(), want_throttle[i]) << i;
    EXPECT_EQ(s.eweight(), want_weight[i]) << i;
  }
}

TEST(Backend, ThreadsPickWhileWeightsChange) {
  for (auto k : {BalanceKind::kRoundRobin, BalanceKind::kLeastConn, BalanceKind::kSource,
                 BalanceKind::kRandom}) {
    Backend be("b", servers(std::vector<int>(20, 4)), algo(k, true));
    std::atomic<bool> stop{false};
    std::atomic<long> picks{0};
    std::vector<std::thread> th;
    for (int t = 0; t < 4; ++t) {
      th.emplace_back([&, t] {
        std::vector<Server*> out;
        uint32_t i = static_cast<uint32_t>(t) * 100000;
        while (!stop.load()) {
          auto a = client_ip(i++);
          PickContext ctx;
          ctx.client = &a;
          be.candidates(ctx, out, 3);
          if (!out.empty() && out[0]->try_acquire()) out[0]->release();
          picks.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
    while (picks.load() == 0) std::this_thread::yield();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 300; ++i) {
      Server& s = *be.servers()[static_cast<std::size_t>(i % 20)];
      be.set_weight(s, i % 7);
      if (i % 5 == 0) be.set_usable(s, i % 10 != 0);
    }
    stop = true;
    for (auto& t : th) t.join();
    EXPECT_GT(picks.load(), 0);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(ms, 5000) << "algorithm " << static_cast<int>(k);
  }
}


// The CLI (on one worker) and a health check (on another) change the same server at the same
// time. Whatever the interleaving, the server ends usable exactly when its last admin state,
// check verdict and stopping flag all say so: a change must not publish a usable() computed
// from states that another change has replaced meanwhile.
TEST(Backend, ConcurrentStateChangesAgreeWithTheFinalStates) {
  Backend be("b", servers({1, 1}));
  Server& s = *be.servers()[0];
  std::atomic<int> ready{0};
  std::atomic<int> round{-1};
  std::atomic<int> done{0};
  constexpr int kRounds = 4000;
  int mismatches = 0;
  auto wait_round = [&](int r) {
    ready.fetch_add(1);
    while (round.load(std::memory_order_acquire) < r) std::this_thread::yield();
  };
  // A third writer (weights of another server) keeps the writer lock busy, so that the two
  // changes often wait for it at the same time and take it in either order.
  std::atomic<bool> stop{false};
  std::thread weights([&] {
    for (int i = 0; !stop.load(); ++i) be.set_weight(*be.servers()[1], 1 + i % 2);
  });
  std::thread admin([&] {
    for (int r = 0; r < kRounds; ++r) {
      wait_round(r);
      be.set_admin_state(s, r % 2 ? AdminState::kMaint : AdminState::kReady, 1000 + r);
      done.fetch_add(1);
    }
  });
  std::thread check([&] {
    for (int r = 0; r < kRounds; ++r) {
      wait_round(r);
      be.set_check_up(s, r % 4 < 2, 1000 + r);
      done.fetch_add(1);
    }
  });
  for (int r = 0; r < kRounds; ++r) {
    while (ready.load() < 2 * (r + 1)) std::this_thread::yield();
    round.store(r, std::memory_order_release);
    while (done.load() < 2 * (r + 1)) std::this_thread::yield();
    bool want = s.admin_state() == AdminState::kReady && s.check_up() && !s.stopping();
    if (s.admin_up() != want) {
      ++mismatches;
      // Put the server back in a consistent state for the next round.
      be.set_usable(s, want, 1000 + r);
    }
  }
  admin.join();
  check.join();
  stop = true;
  weights.join();
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace sluice::lb
