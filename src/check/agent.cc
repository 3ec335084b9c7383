// The agent check (`agent-check`): a one-line answer from an agent beside the server sets
// its state (up, down, fail, stopped), its admin state (ready, drain, maint), its weight as
// a share of the configured one, and its maxconn, as HAProxy's agent protocol says. A failed
// or silent agent changes nothing (the health check judges connectivity).
#include <fmt/format.h>

#include "base/strings.h"
#include "check/checker.h"

namespace sluice::check {

namespace {
// An answer longer than this is cut: HAProxy reads one buffer's worth and uses its first line.
constexpr std::size_t kMaxAnswer = 1024;

bool digits(std::string_view s, int* out) {
  if (s.empty() || s.size() > 7) return false;
  int n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *out = n;
  return true;
}
}  // namespace

AgentReply parse_agent_reply(std::string_view line) {
  AgentReply r;
  if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
    r.reason = std::string(base::trim(line.substr(hash + 1), " \t\r"));
    line = line.substr(0, hash);
  }
  while (!line.empty()) {
    const std::size_t end = line.find_first_of(" \t,\r");
    const std::string_view w = line.substr(0, end);
    line = end == std::string_view::npos ? std::string_view{} : line.substr(end + 1);
    if (w.empty()) continue;
    int n = 0;
    if (w == "up" || w == "down" || w == "fail" || w == "stopped") {
      r.state = w == "up" ? AgentReply::State::kUp
                : w == "down" ? AgentReply::State::kDown
                : w == "fail" ? AgentReply::State::kFail
                              : AgentReply::State::kStopped;
      r.state_word = std::string(w);
    } else if (w == "ready" || w == "drain" || w == "maint") {
      r.admin = w == "ready" ? AgentReply::Admin::kReady
                : w == "drain" ? AgentReply::Admin::kDrain
                               : AgentReply::Admin::kMaint;
    } else if (w.back() == '%' && digits(w.substr(0, w.size() - 1), &n)) {
      r.weight_pct = n;
    } else if (w.starts_with("maxconn:") && digits(w.substr(8), &n)) {
      r.maxconn = n;
    }
    // Anything else is ignored, as HAProxy ignores it.
  }
  return r;
}

void Checker::agent_read(bool eof) {
  const std::size_t nl = response_.find('\n');
  if (nl == std::string::npos && !eof && response_.size() < kMaxAnswer) return;   // more to come
  std::string line = response_.substr(0, std::min(nl, kMaxAnswer));
  if (line.empty() && nl == std::string::npos) {
    // Closed without a word: as an answer that says nothing.
    agent_done(lb::CheckStatus::kChecked, "", nullptr);
    return;
  }
  const AgentReply reply = parse_agent_reply(line);
  using S = AgentReply::State;
  lb::CheckStatus st = lb::CheckStatus::kChecked;
  std::string text;
  if (reply.state != S::kNone) {
    st = reply.state == S::kUp ? lb::CheckStatus::kL7Ok : lb::CheckStatus::kL7Sts;
    text = "via agent : " + reply.state_word;
    if (!reply.reason.empty()) text += " (" + reply.reason + ")";
  }
  agent_done(st, std::move(text), &reply);
}

void Checker::agent_done(lb::CheckStatus status, std::string text, const AgentReply* reply) {
  close_socket();
  phase_ = Phase::kIdle;
  const uint64_t now = loop_.now_ms();
  auto& as = srv_.agent_state();
  as.status.store(status, std::memory_order_relaxed);
  as.code.store(0, std::memory_order_relaxed);
  as.duration_ms.store(static_cast<int64_t>(now - started_ms_), std::memory_order_relaxed);
  as.set_text(text);
  if (reply) {
    // Admin state, weight and maxconn go through the CLI's paths (and their log lines).
    const bool other = reply->admin != AgentReply::Admin::kNone || reply->weight_pct >= 0 ||
                       reply->maxconn >= 0;
    if (other && hooks_.agent_apply) hooks_.agent_apply(srv_, *reply);
    if (reply->state != AgentReply::State::kNone) {
      const bool up = reply->state == AgentReply::State::kUp;
      const bool was = srv_.check_up() && srv_.agent_up();
      as.health.store(up ? 1 : 0, std::memory_order_relaxed);
      be_.set_agent_up(srv_, up, now);
      const bool is = srv_.check_up() && srv_.agent_up();
      if (was != is && hooks_.log) {
        // HAProxy names the agent's words as the reason, its status the check's kind.
        hooks_.log(is ? kLogNotice : kLogAlert,
                   fmt::format("{}Server {}/{} is {}, reason: {}, code: 0, info: \"{}\", check "
                               "duration: {}ms{}",
                               srv_.settings().backup ? "Backup " : "", be_.name(), srv_.name(),
                               is ? "UP" : "DOWN", lb::check_status_desc(status), text,
                               now - started_ms_, be_.state_tail(srv_, !is)));
        if (!is && be_.usable_active() + be_.usable_backup() == 0)
          hooks_.log(kLogEmerg, fmt::format("backend {} has no server available!", be_.name()));
      }
      if (hooks_.state_changed && was != is) hooks_.state_changed(srv_, is);
    }
  }
  loop_.timers().arm(timer_, next_due(now, s_.intervals.inter_ms));
}

void Checker::force_agent(bool up) {
  const uint64_t now = loop_.now_ms();
  const bool was = srv_.check_up() && srv_.agent_up();
  srv_.agent_state().health.store(up ? 1 : 0, std::memory_order_relaxed);
  be_.set_agent_up(srv_, up, now);
  const bool is = srv_.check_up() && srv_.agent_up();
  if (was == is) return;
  if (hooks_.log)
    hooks_.log(is ? kLogNotice : kLogAlert,
               fmt::format("{}Server {}/{} is {}, changed from CLI{}",
                           srv_.settings().backup ? "Backup " : "", be_.name(), srv_.name(),
                           is ? "UP" : "DOWN", be_.state_tail(srv_, !is)));
  if (hooks_.state_changed) hooks_.state_changed(srv_, is);
}

}  // namespace sluice::check
