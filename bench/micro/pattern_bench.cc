// Map lookups (src/pattern) at 10 and 100,000 entries: `str` (hash), `beg` (sorted prefixes),
// `ip` (a hash per prefix length) and `sub` (scanned, as HAProxy does), half of the lookups
// hitting. And the cost of republishing a list after a change (what one CLI `add map` costs at
// that size). One thread; timing is reported, never asserted.
#include <arpa/inet.h>

#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "pattern/pattern.h"

namespace {

using sluice::pattern::Expr;
using sluice::pattern::Index;
using sluice::pattern::Item;
using sluice::pattern::Kind;
using sluice::pattern::Method;
using sluice::pattern::Ref;
using sluice::pattern::ValueType;

std::string key(Method m, int i) {
  switch (m) {
    case Method::kIp:
      return "10." + std::to_string((i >> 16) & 255) + "." + std::to_string((i >> 8) & 255) + "." +
             std::to_string(i & 255) + (i % 3 == 0 ? "/32" : "/31");
    case Method::kBeg: return "/app" + std::to_string(i) + "/";
    default: return "host" + std::to_string(i) + ".example.com";
  }
}

struct Fixture {
  std::shared_ptr<Ref> ref;
  std::shared_ptr<Expr> expr;
  std::vector<std::string> queries;
};

Fixture make(Method m, int n) {
  Fixture f;
  f.ref = std::make_shared<Ref>("", Ref::kMap);
  for (int i = 0; i < n; ++i) f.ref->add_loaded(key(m, i), "be" + std::to_string(i % 7));
  Kind k;
  k.method = m;
  k.value = ValueType::kStr;
  f.expr = std::make_shared<Expr>(f.ref, k);
  (void)f.ref->compile(*f.expr, nullptr);
  for (int i = 0; i < 64; ++i) {
    int j = static_cast<int>((static_cast<long>(i) * 7919) % n);
    bool hit = i % 2 == 0;
    switch (m) {
      case Method::kIp: f.queries.push_back(hit ? "10." + std::to_string((j >> 16) & 255) + "." +
                                                      std::to_string((j >> 8) & 255) + "." +
                                                      std::to_string(j & 255)
                                                : "192.0.2." + std::to_string(i));
        break;
      case Method::kBeg: f.queries.push_back(hit ? "/app" + std::to_string(j) + "/index.html" : "/other/x");
        break;
      case Method::kSub: f.queries.push_back(hit ? "www." + key(m, j) : "nothing.example.net");
        break;
      default: f.queries.push_back(hit ? key(m, j) : "absent" + std::to_string(i) + ".example.com");
    }
  }
  return f;
}

void Lookup(benchmark::State& state, Method m) {
  Fixture f = make(m, static_cast<int>(state.range(0)));
  std::vector<in_addr> addrs;
  for (const auto& q : f.queries) {
    in_addr a{};
    inet_pton(AF_INET, q.c_str(), &a);
    addrs.push_back(a);
  }
  std::size_t i = 0, hits = 0;
  for (auto _ : state) {
    const std::size_t q = i++ % f.queries.size();
    hits += f.expr->match([&](const Index& idx, sluice::base::Regex::Groups*) -> const Item* {
      return m == Method::kIp ? idx.find_v4(addrs[q]) : idx.find_str(f.queries[q]);
    });
  }
  benchmark::DoNotOptimize(hits);
  state.counters["hit_ratio"] = static_cast<double>(hits) / static_cast<double>(i ? i : 1);
}

void Republish(benchmark::State& state) {
  Fixture f = make(Method::kStr, static_cast<int>(state.range(0)));
  int i = 0;
  for (auto _ : state) {
    auto r = f.ref->set(key(Method::kStr, i++ % 10), "changed");
    benchmark::DoNotOptimize(r);
  }
}

BENCHMARK_CAPTURE(Lookup, str, Method::kStr)->Arg(10)->Arg(100000);
BENCHMARK_CAPTURE(Lookup, beg, Method::kBeg)->Arg(10)->Arg(100000);
BENCHMARK_CAPTURE(Lookup, ip, Method::kIp)->Arg(10)->Arg(100000);
BENCHMARK_CAPTURE(Lookup, sub, Method::kSub)->Arg(10)->Arg(1000);
BENCHMARK(Republish)->Arg(10)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
