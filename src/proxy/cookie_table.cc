#include "proxy/cookie_table.h"

#include <netinet/in.h>

#include <memory>
#include <utility>

#include "proxy/cookie.h"

namespace sluice::proxy {

std::string dynamic_cookie(std::string_view key, const net::SocketAddress& addr) {
  const sockaddr* sa = addr.sa();
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return dynamic_cookie(key, &in->sin_addr, 4, addr.port());
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    return dynamic_cookie(key, &in6->sin6_addr, 16, addr.port());
  }
  return {};
}

namespace {

std::unique_ptr<CookieValues> values_of(const std::vector<std::string>& v) {
  auto p = std::make_unique<CookieValues>();
  p->values = v;
  return p;
}

}  // namespace

CookieTable::CookieTable(std::vector<Server> servers, std::string key, bool dynamic)
    : servers_(std::move(servers)), key_(std::move(key)), dynamic_(dynamic),
      values_(servers_.size()), size_(servers_.size()),
      snap_(std::make_unique<CookieValues>(), base::hazard::Domain::kCookies) {
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    values_[i] = servers_[i].configured;
    recompute(i);
  }
  snap_.publish(values_of(values_));
}

std::string CookieTable::value(std::size_t i) const {
  Guard g = read();
  return i < g->values.size() ? g->values[i] : std::string();
}

void CookieTable::recompute(std::size_t i) {
  const Server& s = servers_[i];
  if (!s.configured.empty() || !dynamic_ || key_.empty()) return;
  std::string v = dynamic_cookie(key_, s.addr);
  if (!v.empty()) values_[i] = std::move(v);   // HAProxy keeps the old one otherwise
}

void CookieTable::publish() {
  if (values_ == read()->values) return;   // nothing changed: readers keep the fast path
  snap_.publish(values_of(values_));
  changed_.store(true, std::memory_order_release);
}

void CookieTable::set_key(std::string key) {
  std::lock_guard lock(mu_);
  key_ = std::move(key);
  for (std::size_t i = 0; i < servers_.size(); ++i) recompute(i);
  publish();
}

void CookieTable::set_dynamic(bool on) {
  std::lock_guard lock(mu_);
  dynamic_ = on;
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (on) recompute(i);
    else if (servers_[i].configured.empty()) values_[i].clear();
  }
  publish();
}

void CookieTable::set_addr(std::size_t i, const net::SocketAddress& addr) {
  std::lock_guard lock(mu_);
  if (i >= servers_.size()) return;
  servers_[i].addr = addr;
  recompute(i);
  publish();
}

}  // namespace sluice::proxy
