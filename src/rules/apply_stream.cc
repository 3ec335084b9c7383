// Running the HTTP rule actions on the stream: capture, set-log-level, set-timeout, set-src,
// set-src-port, set-dst and set-dst-port, as HAProxy 3.5 runs them.
#include <arpa/inet.h>

#include <cstring>

#include "rules/internal.h"
#include "sample/captures.h"

namespace sluice::rules::detail {

namespace {

using Action = HttpRule::Action;

// HAProxy's SMP_T_ADDR: an address sample as is, a string read as IPv4 then IPv6, an integer
// as an IPv4 address.
bool as_address(sample::Sample& s, sample::Scratch& sc) {
  using sample::Type;
  if (s.type == Type::kIpv4 || s.type == Type::kIpv6) return true;
  if (s.type == Type::kStr) {
    sample::Sample v4 = s;
    if (sample::cast(v4, Type::kIpv4, sc)) {
      s = v4;
      return true;
    }
    return sample::cast(s, Type::kIpv6, sc);
  }
  return sample::cast(s, Type::kIpv4, sc);
}

// set-src / set-dst: `a` takes the sample's address and keeps its port (0 when it had none).
void set_host(net::SocketAddress& a, const sample::Sample& s) {
  uint16_t port = a.port();
  a = net::SocketAddress{};
  if (s.type == sample::Type::kIpv4) {
    auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
    in->sin_family = AF_INET;
    in->sin_addr = s.v4;
    a.len = sizeof(sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = s.v6;
    a.len = sizeof(sockaddr_in6);
  }
  a.set_port(port);
}

// set-src-port / set-dst-port: the low 16 bits of the integer, as HAProxy's htons() keeps
// them; an address that is neither IPv4 nor IPv6 becomes 0.0.0.0 first.
void set_port(net::SocketAddress& a, int64_t v) {
  if (a.family() != AF_INET && a.family() != AF_INET6) {
    a = net::SocketAddress{};
    auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
    in->sin_family = AF_INET;
    a.len = sizeof(sockaddr_in);
  }
  a.set_port(static_cast<uint16_t>(v));
}

}  // namespace

void apply_stream_action(const HttpRule& r, RuleSide side, RequestView& view, StreamEdit* st) {
  switch (r.action) {
    case Action::kCapture: {
      if (!view.captures) return;
      sample::Sample smp;
      if (!r.expr->eval(view, smp) || !sample::cast(smp, sample::Type::kStr, view.sc())) return;
      if (side == RuleSide::kRequest) view.captures->set_req(r.capture_id, smp.str);
      else view.captures->set_res(r.capture_id, smp.str);
      return;
    }
    case Action::kSetLogLevel:
      if (st) st->log_level = r.log_level;
      return;
    case Action::kSetTimeout: {
      if (!st) return;
      int64_t ms = r.timeout_ms;
      if (r.expr) {
        sample::Sample smp;
        if (!r.expr->eval(view, smp) || !sample::cast(smp, sample::Type::kSint, view.sc())) return;
        // A time in milliseconds; 0 is no timeout, as HAProxy's eternity.
        if (smp.sint < 0) return;
        ms = smp.sint > INT32_MAX ? INT32_MAX : smp.sint;
      }
      st->timeout_ms[r.timeout_kind] = static_cast<uint32_t>(ms);
      st->timeouts_set |= static_cast<uint8_t>(1u << r.timeout_kind);
      return;
    }
    case Action::kSetSrc:
    case Action::kSetSrcPort:
    case Action::kSetDst:
    case Action::kSetDstPort: {
      if (!st) return;
      const bool src = r.action == Action::kSetSrc || r.action == Action::kSetSrcPort;
      const bool port = r.action == Action::kSetSrcPort || r.action == Action::kSetDstPort;
      sample::Sample smp;
      if (!r.expr->eval(view, smp)) return;
      if (port ? !sample::cast(smp, sample::Type::kSint, view.sc()) : !as_address(smp, view.sc()))
        return;
      if (!st->addrs) st->addrs = std::make_unique<StreamAddrs>();
      StreamAddrs& a = *st->addrs;
      net::SocketAddress& addr = src ? a.src : a.dst;
      bool& is_set = src ? a.src_set : a.dst_set;
      if (!is_set) {
        // From the address the stream has now.
        const net::SocketAddress* cur = src ? view.src : view.dst;
        addr = cur ? *cur : net::SocketAddress{};
        if (!src && cur) addr.set_port(view.dst_port);
        is_set = true;
      }
      if (port) set_port(addr, smp.sint);
      else set_host(addr, smp);
      if (src) {
        view.src = &addr;
      } else {
        view.dst = &addr;
        view.dst_port = addr.port();
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace sluice::rules::detail
