// Path regex match cost: the POSIX regexec() sluice used before (what `path_reg` cost then)
// against base::Regex on PCRE2, JIT-compiled and interpreted. One thread; docs/performance.md
// gives the ratio. Timing is reported, never asserted.
#include <regex.h>

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "base/regex.h"

namespace {

constexpr const char* kPattern = "^/api/v[0-9]+/(users|orders)/[0-9]+(/[a-z]+)?$";

const std::vector<std::string>& paths() {
  static const std::vector<std::string> p = {
      "/api/v2/users/12345", "/api/v1/orders/9/items", "/static/img/logo.png",
      "/api/v3/users/77/profile/extra", "/index.html", "/api/v10/orders/424242/status"};
  return p;
}

void Posix(benchmark::State& state) {
  regex_t re;
  if (regcomp(&re, kPattern, REG_EXTENDED | REG_NOSUB) != 0) {
    state.SkipWithError("regcomp failed");
    return;
  }
  std::size_t i = 0, hits = 0;
  for (auto _ : state) {
    const std::string& p = paths()[i++ % paths().size()];
    hits += regexec(&re, p.c_str(), 0, nullptr, 0) == 0;
  }
  benchmark::DoNotOptimize(hits);
  regfree(&re);
}

void Pcre2(benchmark::State& state, bool jit) {
  sluice::base::Regex re;
  if (!re.compile(kPattern, nullptr, false, false, jit)) {
    state.SkipWithError("compile failed");
    return;
  }
  state.SetLabel(re.jit() ? "jit" : "interpreter");
  std::size_t i = 0, hits = 0;
  for (auto _ : state) hits += re.search(paths()[i++ % paths().size()]);
  benchmark::DoNotOptimize(hits);
}

void Pcre2Jit(benchmark::State& state) { Pcre2(state, true); }
void Pcre2Interpreter(benchmark::State& state) { Pcre2(state, false); }

BENCHMARK(Posix);
BENCHMARK(Pcre2Jit);
BENCHMARK(Pcre2Interpreter);

}  // namespace

BENCHMARK_MAIN();
