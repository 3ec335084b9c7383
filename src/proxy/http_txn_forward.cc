// The request as it leaves for the server, once the rules ran: `option
// http-restrict-req-hdr-names`, and what it tells the server about the client's connection
// besides x-forwarded-for: `option forwarded` (RFC 7239) and `option originalto`, as HAProxy
// 3.5 writes them, and the values of the server's `set-proxy-v2-tlv-fmt`.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <tuple>

#include <fmt/format.h>

#include "base/clock.h"
#include "net/socket.h"
#include "proxy/http_txn.h"
#include "proxy/server_tls.h"
#include "proxy/proxy_header.h"
#include "proxy/sample_env.h"

namespace sluice::proxy {
namespace {

// A node or port of the Forwarded field from an expression's sample: addresses as addresses
// (IPv6 in brackets), anything else as its text (an obfuscated identifier such as `_hidden`).
bool sample_text(const sample::Sample& s, bool node, std::string* out) {
  char buf[INET6_ADDRSTRLEN];
  switch (s.type) {
    case sample::Type::kIpv4:
      if (!inet_ntop(AF_INET, &s.v4, buf, sizeof buf)) return false;
      *out = buf;
      return true;
    case sample::Type::kIpv6:
      if (!inet_ntop(AF_INET6, &s.v6, buf, sizeof buf)) return false;
      *out = node ? fmt::format("[{}]", buf) : std::string(buf);
      return true;
    case sample::Type::kSint:
    case sample::Type::kBool:
      *out = std::to_string(s.sint);
      return true;
    default:
      out->assign(s.str);
      return !out->empty();
  }
}

// An address as a Forwarded node: IPv6 in brackets, "unknown" when there is none (a UNIX
// socket).
std::string node_of(const net::SocketAddress* a) {
  if (!a || (a->family() != AF_INET && a->family() != AF_INET6)) return "unknown";
  return a->family() == AF_INET6 ? fmt::format("[{}]", a->host_string()) : a->host_string();
}

// RFC 7239's quoting: a value with a port or an IPv6 address (anything beyond a token) is a
// quoted-string.
void append_param(std::string& out, std::string_view name, const std::string& value,
                  bool always_quote = false) {
  if (!out.empty()) out += ';';
  out += name;
  out += '=';
  bool quote = always_quote || value.find_first_of(":[]\" ") != std::string::npos;
  if (!quote) {
    out += value;
    return;
  }
  out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

}  // namespace

const net::SocketAddress* HttpTxn::connection_dst() {
  const net::SocketAddress* a = local_addr();
  if (a && !a->is_any()) return a;
  if (client_fd_ < 0 || l_.addr.kind != net::ListenAddress::Kind::kInet) return a;
  // A wildcard bind: the kernel says which address the client reached (once per connection).
  net::SocketAddress local;
  if (!net::local_address(client_fd_, &local)) return a;
  conn_dst_ = std::make_unique<net::SocketAddress>(local);
  return local_addr();
}

void HttpTxn::add_forwarded(rules::HeadEdit& edit, rules::RequestView& view) {
  using Part = HttpSettings::Forwarded::Part;
  const HttpSettings::Forwarded& fw = be_->settings.h.forwarded;
  // The value of one part: the connection's own (`own`), or the expression's; false: none.
  auto value = [&](const HttpSettings::Forwarded::Item& item, bool node, auto own,
                   std::string* out) {
    if (item.part == Part::kAuto) {
      *out = own();
      return true;
    }
    sample::Sample s;
    return item.expr && item.expr->eval(view, s) && sample_text(s, node, out);
  };
  std::string f;
  if (fw.proto) append_param(f, "proto", "http");
  if (fw.host.part != Part::kOff) {
    std::string host;
    auto own = [&] {
      for (const auto& h : edit.headers)
        if (http::iequals(h.name, "host")) return std::string(h.value);
      return std::string();
    };
    if (value(fw.host, false, own, &host) || fw.host.part == Part::kAuto)
      append_param(f, "host", host, true);
  }
  const net::SocketAddress* dst = nullptr;
  for (auto [node, port, name, is_by] :
       {std::tuple{&fw.by, &fw.by_port, "by", true}, std::tuple{&fw.for_, &fw.for_port, "for", false}}) {
    if (node->part == Part::kOff) continue;
    if (is_by && !dst) dst = connection_dst();
    const net::SocketAddress* a = is_by ? dst : &client_;
    std::string n;
    if (!value(*node, true, [&] { return node_of(a); }, &n)) continue;
    if (port->part != Part::kOff) {
      std::string p;
      auto own = [&] { return a && a->port() ? std::to_string(a->port()) : std::string(); };
      if (value(*port, false, own, &p) && !p.empty()) n += ":" + p;
    }
    append_param(f, name, n);
  }
  // After the last Forwarded field the request carries, as one more element of its list.
  for (auto it = edit.headers.rbegin(); it != edit.headers.rend(); ++it) {
    if (!http::iequals(it->name, "forwarded")) continue;
    it->value = edit.keep(fmt::format("{},{}", it->value, f));
    edit.changed = true;
    return;
  }
  edit.headers.push_back({edit.keep(std::string("forwarded")), edit.keep(std::move(f))});
  edit.changed = true;
}

void HttpTxn::add_originalto(rules::HeadEdit& edit) {
  const auto& fh = fe_.settings.h;
  const auto& bh = be_->settings.h;
  const bool fe_ot = fh.originalto.enabled, be_ot = be_ != &fe_ && bh.originalto.enabled;
  if (!fe_ot && !be_ot) return;
  const net::SocketAddress* dst = connection_dst();
  if (!dst || (dst->family() != AF_INET && dst->family() != AF_INET6)) return;
  if ((fe_ot && fh.originalto.has_except && fh.originalto.except.contains(*dst)) ||
      (be_ot && bh.originalto.has_except && bh.originalto.except.contains(*dst)))
    return;
  const std::string& name = be_ot ? bh.originalto.header : fh.originalto.header;
  edit.headers.push_back({edit.keep(name), edit.keep(dst->host_string())});
  edit.changed = true;
}

bool HttpTxn::restrict_header_names(rules::HeadEdit& edit) {
  using M = HttpSettings::HdrNames;
  M mode = be_->settings.h.restrict_hdr_names;
  if (mode == M::kUnset) mode = fe_.settings.h.restrict_hdr_names;
  if (mode != M::kDelete && mode != M::kReject) return false;
  auto bad = [](const http::Header& h) {
    for (char c : h.name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return true;
    return false;
  };
  if (mode == M::kDelete) {
    if (std::erase_if(edit.headers, bad) > 0) edit.changed = true;
    return false;
  }
  if (std::none_of(edit.headers.begin(), edit.headers.end(), bad)) return false;
  w_.fe_counters(fe_.index).dreq.add();
  if (be_ != &fe_) w_.be_counters(be_->index).dreq.add();
  *reply_ = error_reply(403, {log::Cause::kProxy, log::FinalState::kRequest}, false, true, true);
  return true;
}

// What the expressions evaluated as a server connection opens see: the request as it left,
// the backend and the chosen server (a log record for the formats' %-variables).
template <class Use>
void HttpTxn::at_server_connect(HttpCodecs& codecs, Use&& use) {
  const lb::Server* srv = leg_.server();
  log::Record r;
  r.client = &client_;
  r.local = local_addr();
  r.date_wall_us = t_first_byte_wall_us ? t_first_byte_wall_us : base::wall_us();
  r.http = true;
  r.frontend = fe_.settings.name;
  note_tls(r, client_tls_);
  r.backend = be_->settings.name;
  r.server = srv->name();
  r.request_line = req_line;
  r.request_counter = stream_number();
  r.unique_id = unique_id;
  r.hostname = w_.logs().host();
  r.pid = w_.logs().pid();
  r.actconn = w_.process().actconn().current();
  r.feconn = fe_.feconn.current();
  r.req_capture_slots = fe_.settings.h.capture_request.size();
  if (caps_) r.req_captures = caps_->req();
  ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
  env.rec = &r;
  env.be = be_;
  env.srv = srv;
  env.stream = this;
  rules::RequestView view;
  view.env = &env;
  view.avail = sample::kAtHttpRequest | sample::kUseBackend | sample::kUseServer;
  attach_vars(view, &codecs);
  view.src = &client_;
  view.dst_port = local_port();
  view.dst = local_addr();
  view.captures = captures();
  view.unique_id = unique_id;
  view.now_us = base::wall_us();
  if (have_req_copy_) {
    view.req.method = codecs.req_copy.method;
    view.req.target = codecs.req_copy.target;
    view.req.headers = &codecs.req_copy.headers;
  }
  received_line(view.req);
  use(r, view);
}


// Rendered when the connection to the server opens, with the request as it left (its copy in
// the codecs, keep_request()), the backend and the chosen server. HAProxy 3.5 evaluates these
// at the same point, but the request's fields and path are already forwarded there and read
// empty (its method, variables and %r still show): here they show what went to the server.
void HttpTxn::render_pp2_tlvs(HttpCodecs& codecs, std::vector<net::pp::Tlv>* out) {
  const lb::Server* srv = leg_.server();
  if (!srv || !be_) return;
  const auto* formats = be_->settings.pp2_tlvs_of(static_cast<std::size_t>(srv->index()));
  if (!formats) return;
  at_server_connect(codecs, [&](log::Record& r, rules::RequestView& view) {
    proxy::render_pp2_tlvs(*formats, r, &view, out);
  });
}

bool HttpTxn::server_sni(HttpCodecs& codecs, const ProxySettings::ServerSni& sni,
                         std::string* out) {
  if (sni.from_host) return sni_of_host(sni_host_, *out);   // kept by keep_sni_host()
  bool got = false;
  at_server_connect(codecs, [&](log::Record&, rules::RequestView& view) {
    got = proxy::server_sni(sni, view, *out);
  });
  return got;
}

}  // namespace sluice::proxy
