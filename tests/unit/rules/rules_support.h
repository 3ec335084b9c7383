#pragma once
// What the rules tests share: a request with owned strings, and helpers to build ACLs.
#include <arpa/inet.h>

#include <string>
#include <utility>
#include <vector>

#include "rules/rules.h"

namespace sluice::rules::testing {

inline net::SocketAddress addr(const std::string& ip, uint16_t port) {
  net::SocketAddress a;
  if (ip.find(':') != std::string::npos) {
    auto* s = reinterpret_cast<sockaddr_in6*>(a.sa());
    s->sin6_family = AF_INET6;
    inet_pton(AF_INET6, ip.c_str(), &s->sin6_addr);
    s->sin6_port = htons(port);
    a.len = sizeof(sockaddr_in6);
  } else {
    auto* s = reinterpret_cast<sockaddr_in*>(a.sa());
    s->sin_family = AF_INET;
    inet_pton(AF_INET, ip.c_str(), &s->sin_addr);
    s->sin_port = htons(port);
    a.len = sizeof(sockaddr_in);
  }
  return a;
}

// A request (and optionally a response) whose views stay valid while the object lives.
struct Msg {
  std::string method = "GET";
  std::string target = "/";
  std::string version = "HTTP/1.1";
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::pair<std::string, std::string>> res_fields;
  int status = 0;
  net::SocketAddress src = addr("10.1.2.3", 40000);
  net::SocketAddress dst = addr("127.0.0.1", 8080);

  std::vector<http::Header> hs, rhs;
  RequestView view() {
    hs.clear();
    rhs.clear();
    for (auto& [n, v] : fields) hs.push_back({n, v});
    for (auto& [n, v] : res_fields) rhs.push_back({n, v});
    RequestView v;
    v.req.method = method;
    v.req.target = target;
    v.req.version = version;
    v.req.headers = &hs;
    v.src = &src;
    v.dst = &dst;
    v.dst_port = dst.port();
    v.res.status = status;
    v.res.headers = status ? &rhs : nullptr;
    return v;
  }
};

inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Declares `acl x <expr>` in a fresh registry and evaluates `if x` on `m`.
inline bool acl_matches(const std::string& expr, Msg& m, std::string* error = nullptr) {
  AclRegistry reg;
  auto words = split("x " + expr);
  auto r = reg.parse_acl(words);
  if (!r.ok()) {
    if (error) *error = r.error().message;
    return false;
  }
  auto c = parse_condition({"if", "x"}, reg);
  if (!c.ok()) {
    if (error) *error = c.error().message;
    return false;
  }
  return c.value().eval(m.view());
}

inline std::string acl_error(const std::string& expr) {
  AclRegistry reg;
  auto r = reg.parse_acl(split("x " + expr));
  return r.ok() ? "" : r.error().message;
}

}  // namespace sluice::rules::testing
