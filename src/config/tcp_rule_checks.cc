// The check phase for the TCP rule sets: what the sessions of this proxy's mode cannot run.
#include <fmt/format.h>

#include "config/parser.h"
#include "rules/rules.h"

namespace sluice::config {

namespace {

std::string at(const SourceLoc& loc) { return fmt::format("parsing [{}:{}] : ", loc.file, loc.line); }

std::string_view action_word(const rules::TcpRule& r) {
  using A = rules::TcpRule::Action;
  switch (r.action) {
    case A::kAccept: return "accept";
    case A::kReject: return "reject";
    case A::kClose: return "close";
    case A::kSilentDrop: return "silent-drop";
    case A::kVar: return "set-var";
    case A::kSetSrc: return "set-src";
    case A::kSetDst: return "set-dst";
    case A::kSetSrcPort: return "set-src-port";
    case A::kSetDstPort: return "set-dst-port";
    case A::kCapture: return "capture";
    case A::kExpectProxy: return "expect-proxy";
  }
  return {};
}

}  // namespace

void Parser::check_tcp_rules(const ProxyConfig& p) {
  const std::string px = fmt::format("{} '{}'", type_word(p), p.name);
  if (p.mode == Mode::kHttp) {
    // An HTTP connection runs its frontend's session rules once accepted, its frontend's
    // content rules when a request head is complete, a backend's content rules when the
    // request enters it, and the backend's response rules when the response head is complete.
    for (const auto& r : p.tcp_request_content) {
      using A = rules::TcpRule::Action;
      if (r.rule.action == A::kClose ||
          (!(p.caps & ProxyConfig::kFrontend) && r.rule.action == A::kSilentDrop)) {
        fatal(at(r.loc) + fmt::format("'tcp-request content {}' in HTTP mode ({}) is not supported "
                                      "by sluice yet.", action_word(r.rule), px), false);
      }
    }
    for (const auto& r : p.tcp_response_content) {
      using A = rules::TcpRule::Action;
      const rules::PayloadUse u =
          rules::payload_fetch(std::vector<rules::TcpRule>{r.rule}, sample::kUseResBuf);
      if (!u.fetch.empty()) {
        fatal(at(r.loc) + fmt::format("fetch '{}' reads the raw response, which HTTP mode does not "
                                      "keep: not supported by sluice in 'tcp-response content' of "
                                      "HTTP mode {}.", u.fetch, px), false);
      } else if (r.rule.action != A::kAccept && r.rule.action != A::kReject &&
                 r.rule.action != A::kClose && r.rule.action != A::kVar) {
        fatal(at(r.loc) + fmt::format("'tcp-response content {}' in HTTP mode ({}) is not supported "
                                      "by sluice yet.", action_word(r.rule), px), false);
      }
    }
    return;
  }
  // A backend's content rules judge what has arrived when the session reaches it.
  if (!(p.caps & ProxyConfig::kFrontend) && p.tcp_inspect_delay_ms) {
    for (const auto& r : p.tcp_request_content) {
      const rules::PayloadUse u = rules::payload_fetch(std::vector<rules::TcpRule>{r.rule});
      if (!u.fetch.empty()) {
        fatal(at(r.loc) + fmt::format("waiting for the client's bytes ('tcp-request "
                                      "inspect-delay') in the 'tcp-request content' rules of "
                                      "{} is not supported by sluice yet (fetch '{}').",
                                      px, u.fetch), false);
        break;
      }
    }
  }
}

}  // namespace sluice::config
