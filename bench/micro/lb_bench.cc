// Pick cost per balance algorithm at 10, 100 and 1000 servers (src/lb). One thread; the
// interesting result is how the cost grows with the number of servers.
#include <benchmark/benchmark.h>

#include "lb/backend.h"

namespace {

using namespace sluice::lb;

std::vector<ServerSettings> make_servers(int n) {
  std::vector<ServerSettings> out;
  for (int i = 0; i < n; ++i) {
    ServerSettings s;
    s.name = "s" + std::to_string(i + 1);
    s.id = i + 1;
    s.weight = 1 + i % 4;   // mixed weights
    out.push_back(s);
  }
  return out;
}

void run(benchmark::State& state, BalanceKind kind, bool consistent, bool hold) {
  BalanceSettings b;
  b.kind = kind;
  b.hash.consistent = consistent;
  b.hash.avalanche = consistent;
  Backend be("b", make_servers(static_cast<int>(state.range(0))), b);
  std::vector<Server*> out;
  uint32_t i = 0;
  for (auto _ : state) {
    auto a = sluice::net::SocketAddress::ipv4(0x0a000000u + (i++ * 2654435761u), 1234);
    PickContext ctx;
    ctx.client = &a;
    be.candidates(ctx, out, 3);
    // leastconn and random look at loads: take and give back a slot like a short connection.
    if (hold && !out.empty() && out[0]->try_acquire()) out[0]->release();
    benchmark::DoNotOptimize(out.data());
  }
}

void BM_RoundRobin(benchmark::State& s) { run(s, BalanceKind::kRoundRobin, false, false); }
void BM_LeastConn(benchmark::State& s) { run(s, BalanceKind::kLeastConn, false, true); }
void BM_SourceConsistent(benchmark::State& s) { run(s, BalanceKind::kSource, true, false); }
void BM_SourceMapBased(benchmark::State& s) { run(s, BalanceKind::kSource, false, false); }
void BM_Random(benchmark::State& s) { run(s, BalanceKind::kRandom, false, true); }

BENCHMARK(BM_RoundRobin)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_LeastConn)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_SourceConsistent)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_SourceMapBased)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_Random)->Arg(10)->Arg(100)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
