// Fuzzes CliSession with arbitrary bytes split into a few reads: framing, escaping, payloads,
// mode changes and every built-in command must never crash, hang or grow without bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cli/cli.h"

namespace {

class FuzzStats : public sluice::stats::StatsSource {
 public:
  sluice::stats::ProcessSnapshot process() const override {
    sluice::stats::ProcessSnapshot p;
    p.nbthread = 2;
    p.uptime_s = 90061;
    p.node = "fuzz,node";
    p.description = "a \"quoted\"\ndescription";
    return p;
  }
  std::vector<sluice::stats::ProxySnapshot> proxies() const override {
    using namespace sluice::stats;
    std::vector<ProxySnapshot> v;
    ProxySnapshot fe;
    fe.name = "fe";
    fe.id = 2;
    fe.is_frontend = true;
    fe.mode = "http";
    ListenerSnapshot li;
    li.id = 1;
    li.proto = "tcpv4";
    fe.listeners.push_back(li);
    v.push_back(fe);
    ProxySnapshot be;
    be.name = "be";
    be.id = 3;
    be.is_backend = true;
    be.mode = "tcp";
    for (int i = 1; i <= 2; ++i) {
      ServerSnapshot s;
      s.name = "s" + std::to_string(i);
      s.id = i;
      s.host = "127.0.0.1";
      s.check_enabled = i == 1;
      s.check_status = "L7STS";
      s.check_code = 503;
      s.last_chk = "bad, \"status\"\r\n";
      s.admin_state = i == 2 ? 0x08 : 0;
      be.servers.push_back(s);
    }
    v.push_back(be);
    return v;
  }
  sluice::stats::ActivitySnapshot activity(int current_thread) const override {
    sluice::stats::ActivitySnapshot a;
    a.current_thread = current_thread;
    a.metrics = {{"ctxsw", {0xffffffffULL, 2}}, {"avg_cpu_pct", {1, 2}}, {"short", {7}}};
    return a;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const FuzzStats stats;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // The first byte picks the level and where the input is cut into reads, so that line
  // assembly across reads is exercised as much as whole lines.
  uint8_t ctl = size ? data[0] : 0;
  if (size) in.remove_prefix(1);
  auto level = static_cast<sluice::cli::Level>(ctl % 3);
  sluice::cli::CliSession session(level, &stats, 1);
  std::size_t step = 1 + (ctl >> 2) * 7;
  std::string out;
  while (!in.empty()) {
    std::size_t n = std::min(step, in.size());
    std::size_t before = out.size();
    bool open = session.feed(in.substr(0, n), &out);
    // Output for one read is bounded: no command answers more than a few hundred KiB here.
    if (out.size() - before > (1u << 24)) __builtin_trap();
    if (!open) break;
    in.remove_prefix(n);
    step = step * 3 % 61 + 1;
    if (out.size() > (1u << 20)) out.clear();
  }
  return 0;
}
