// Rendering a compiled log-format (format.h) for one line, as HAProxy 3.5 writes each alias:
// `-` for what is absent (`""` when quoted), +Q around strings, addresses and samples (never
// around numbers, dates or termination states), +X on addresses, ports and the few counters
// HAProxy writes in hexadecimal. Appends to the caller's buffer; no allocation once it has
// grown (UNIX socket addresses aside).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctime>
#include <iterator>

#include <fmt/format.h>

#include "log/format.h"
#include "log/format_internal.h"
#include "sample/expr.h"

namespace sluice::log {

namespace {

using Node = Format::Node;

void put_int(std::string& out, long long v) { fmt::format_to(std::back_inserter(out), "{}", v); }

void put_hex(std::string& out, unsigned long long v, int width) {
  fmt::format_to(std::back_inserter(out), "{:0{}X}", v, width);
}

// HAProxy's lf_text: quoted when +Q, `-` when absent (and not quoted), +E escapes.
void put_text(std::string& out, std::string_view s, bool present, uint8_t opts) {
  const bool q = opts & kOptQuote;
  if (q) out += '"';
  if (present && !s.empty()) {
    if (opts & kOptEscape) {
      for (char c : s) {
        if (c == '"' || c == '\\' || c == ']') out += '\\';
        out += c;
      }
    } else {
      out += s;
    }
  } else if (!q && !(opts & kOptNoDash)) {
    out += '-';
  }
  if (q) out += '"';
}

// A field written with HAProxy's '#XX' encoding (%r, %HU, captures).
void put_encoded(std::string& out, std::string_view s, uint8_t opts, bool capture = false) {
  const bool q = opts & kOptQuote;
  if (q) out += '"';
  append_escaped(out, s, capture);
  if (q) out += '"';
}

void put_ip(std::string& out, const net::SocketAddress* a, uint8_t opts) {
  if (!a || a->len == 0) return put_text(out, {}, false, opts);
  if (a->family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->sa());
    if (opts & kOptHex) return put_hex(out, ntohl(in->sin_addr.s_addr), 8);
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    return put_text(out, buf, true, opts);
  }
  if (a->family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->sa());
    if (opts & kOptHex) {
      for (unsigned char b : in6->sin6_addr.s6_addr) put_hex(out, b, 2);
      return;
    }
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
    return put_text(out, buf, true, opts);
  }
  put_text(out, a->host_string(), true, opts);
}

void put_port(std::string& out, const net::SocketAddress* a, uint8_t opts) {
  if (!a || a->len == 0) return put_text(out, {}, false, opts);
  if (a->family() != AF_INET && a->family() != AF_INET6) return put_text(out, "unix", true, opts);
  if (opts & kOptHex) return put_hex(out, a->port(), 4);
  put_int(out, a->port());
}

// "%d/%b/%Y:%H:%M:%S" then ".mmm" (%t, %tr) or " +zzzz" (%T, %Tl, %trg, %trl).
void put_date(std::string& out, uint64_t wall_us, bool local, bool with_ms) {
  char buf[64];
  out.append(buf, date_text(buf, sizeof buf, wall_us, local, with_ms));
}

void put_captures(std::string& out, std::size_t slots, std::span<const std::string> values,
                  uint8_t opts, bool list) {
  if (slots == 0) return;
  const bool q = opts & kOptQuote;
  if (!list) {
    if (q) out += '"';
    out += '{';
    for (std::size_t i = 0; i < slots; ++i) {
      if (i) out += '|';
      if (i < values.size()) append_escaped(out, values[i], true);
    }
    out += '}';
    if (q) out += '"';
    return;
  }
  for (std::size_t i = 0; i < slots; ++i) {
    if (i) out += ' ';
    std::string_view v = i < values.size() ? std::string_view(values[i]) : std::string_view();
    if (q) out += '"';
    if (!v.empty()) append_escaped(out, v, true);
    else if (!q && !(opts & kOptNoDash)) out += '-';
    if (q) out += '"';
  }
}


void put_sample(std::string& out, const Node& n, uint8_t opts, const sample::Ctx* ctx,
                bool* stop) {
  const bool q = opts & kOptQuote;
  std::size_t at = out.size();
  if (q) out += '"';
  std::size_t start = out.size();
  bool ok = ctx && n.expr->eval_text(*ctx, out);
  if (!ok && (opts & kOptMandatory)) {
    out.resize(at);
    *stop = true;
    return;
  }
  if (!ok || out.size() == start) {
    out.resize(start);
    if (!q && !(opts & kOptNoDash)) out += '-';
  } else if (opts & kOptEscape) {
    // Escape in place: rare, so a temporary is acceptable here.
    std::string v = out.substr(start);
    out.resize(start);
    for (char c : v) {
      if (c == '"' || c == '\\' || c == ']') out += '\\';
      out += c;
    }
  }
  if (q) out += '"';
}

}  // namespace

std::size_t date_text(char* buf, std::size_t size, uint64_t wall_us, bool local, bool with_ms) {
  time_t secs = static_cast<time_t>(wall_us / 1000000);
  tm tm{};
  if (local) localtime_r(&secs, &tm);
  else gmtime_r(&secs, &tm);
  std::size_t n =
      strftime(buf, size, with_ms ? "%d/%b/%Y:%H:%M:%S" : "%d/%b/%Y:%H:%M:%S %z", &tm);
  if (with_ms && n + 4 < size) {
    auto r = fmt::format_to_n(buf + n, size - n, ".{:03}", (wall_us / 1000) % 1000);
    n += r.size;
  }
  return n;
}

ReqLine split_request_line(std::string_view line) {
  ReqLine r;
  std::size_t a = line.find(' ');
  if (a == std::string_view::npos) {
    r.method = line;
    return r;
  }
  r.method = line.substr(0, a);
  std::size_t b = line.rfind(' ');
  if (b == a) {
    r.target = line.substr(a + 1);
    return r;
  }
  r.target = line.substr(a + 1, b - a - 1);
  r.version = line.substr(b + 1);
  return r;
}

const ReqLine& LineState::req() {
  if (!rl_done) {
    rl = split_request_line(r.request_line);
    rl_done = true;
  }
  return rl;
}

// The plain path of render(), inlined there: a line without encoding costs what it did before
// encodings existed.
[[gnu::always_inline]] inline void plain_node(const Format::Node& n, LineState& st,
                                              std::string& out, bool* stop) {
  const uint8_t o = n.opts | st.extra;
  const Record& r = st.r;
  switch (n.kind) {
    case Node::Kind::kText:
      out += n.text;
      break;
    case Node::Kind::kSeparator:
      break;   // the caller's
    case Node::Kind::kExpr:
      put_sample(out, n, o, st.ctx, stop);
      break;
    case Node::Kind::kAlias:
      switch (n.alias) {
        case Alias::kGlobal: break;
        case Alias::kci:
        case Alias::kfi:
        case Alias::kbi:
        case Alias::ksi: put_ip(out, alias_address(r, n.alias), o); break;
        case Alias::kcp:
        case Alias::kfp:
        case Alias::kbp:
        case Alias::ksp: put_port(out, alias_address(r, n.alias), o); break;
        case Alias::kt:
        case Alias::ktr:
        case Alias::kT:
        case Alias::kTl:
        case Alias::ktrg:
        case Alias::ktrl: {
          const AliasDate d = alias_date(st, n.alias);
          put_date(out, d.wall_us, d.local, d.with_ms);
          break;
        }
        case Alias::kTs:
          if (o & kOptHex) put_hex(out, st.accept_us / 1000000, 8);
          else put_int(out, static_cast<long long>(st.accept_us / 1000000));
          break;
        case Alias::kms:
          if (o & kOptHex) put_hex(out, (st.accept_us / 1000) % 1000, 2);
          else fmt::format_to(std::back_inserter(out), "{:03}", (st.accept_us / 1000) % 1000);
          break;
        case Alias::kpid:
          if (o & kOptHex) put_hex(out, static_cast<unsigned>(r.pid), 4);
          else put_int(out, r.pid);
          break;
        case Alias::krt:
          if (o & kOptHex) put_hex(out, r.request_counter, 4);
          else put_int(out, static_cast<long long>(r.request_counter));
          break;
        case Alias::klc:
          if (o & kOptHex) put_hex(out, r.log_counter, 4);
          else put_int(out, static_cast<long long>(r.log_counter));
          break;
        case Alias::kH: put_text(out, r.hostname, true, o); break;
        case Alias::kf: put_text(out, r.frontend, true, o); break;
        case Alias::kft:
          if (r.tls) put_text(out, std::string(r.frontend) + "~", true, o);   // TLS
          else put_text(out, r.frontend, true, o);
          break;
        case Alias::kb: put_text(out, r.backend, true, o); break;
        case Alias::ks: put_text(out, r.server, true, o); break;
        case Alias::kID: put_text(out, r.unique_id, true, o); break;
        case Alias::kCC: put_text(out, r.cli_cookie, r.has_cli_cookie, o); break;
        case Alias::kCS: put_text(out, r.srv_cookie, r.has_srv_cookie, o); break;
        case Alias::ksslc: put_text(out, r.ssl_cipher, !r.ssl_cipher.empty(), o); break;
        case Alias::ksslv: put_text(out, r.ssl_version, !r.ssl_version.empty(), o); break;
        case Alias::kTh: put_int(out, r.th); break;
        case Alias::kTi: put_int(out, r.ti); break;
        case Alias::kTR: put_int(out, r.tr); break;
        case Alias::kTq: put_int(out, st.dt.tq); break;
        case Alias::kTw: put_int(out, r.tw); break;
        case Alias::kTc: put_int(out, r.tc); break;
        case Alias::kTr: put_int(out, r.tresp); break;
        case Alias::kTa:
          if (r.logasap) out += '+';
          put_int(out, st.ta); break;
        case Alias::kTt:
          if (r.logasap) out += '+';
          put_int(out, st.dt.tt); break;
        case Alias::kTu:
          if (r.logasap) out += '+';
          put_int(out, st.dt.tu);
          break;
        case Alias::kTd: put_int(out, st.dt.td); break;
        case Alias::kST: put_int(out, r.status); break;
        case Alias::kB:
          if (r.logasap) out += '+';
          put_int(out, static_cast<long long>(r.bytes_out));
          break;
        case Alias::kU: put_int(out, static_cast<long long>(r.bytes_in)); break;
        case Alias::kts: append_letters(out, r.term); break;
        case Alias::ktsc:
          append_letters(out, r.term);
          out.append(r.cookie_flags, 2);
          break;
        case Alias::kac: put_int(out, r.actconn); break;
        case Alias::kfc: put_int(out, r.feconn); break;
        case Alias::kbc: put_int(out, r.beconn); break;
        case Alias::ksc: put_int(out, r.srvconn); break;
        case Alias::krc:
          if (r.redispatched) out += '+';
          put_int(out, r.retries);
          break;
        case Alias::ksq: put_int(out, r.srv_queue); break;
        case Alias::kbq: put_int(out, r.be_queue); break;
        case Alias::khr: put_captures(out, r.req_capture_slots, r.req_captures, o, false); break;
        case Alias::khs: put_captures(out, r.res_capture_slots, r.res_captures, o, false); break;
        case Alias::khrl: put_captures(out, r.req_capture_slots, r.req_captures, o, true); break;
        case Alias::khsl: put_captures(out, r.res_capture_slots, r.res_captures, o, true); break;
        case Alias::kr:
          put_encoded(out, r.shown_request_line(), o);
          break;
        case Alias::kHM:
        case Alias::kHU:
        case Alias::kHV:
        case Alias::kHP:
        case Alias::kHPO:
        case Alias::kHQ: {
          if (r.request_line.empty()) {
            put_text(out, {}, false, o);
            break;
          }
          const ReqLine& l = st.req();
          std::string_view v;
          std::string_view uri = l.target;
          std::size_t qm = uri.find('?');
          switch (n.alias) {
            case Alias::kHM: v = l.method; break;
            case Alias::kHV: v = l.version; break;
            case Alias::kHU: v = uri; break;
            case Alias::kHP: v = uri.substr(0, qm); break;
            case Alias::kHQ: v = qm == std::string_view::npos ? std::string_view() : uri.substr(qm); break;
            default: {   // HPO: the path alone, without the scheme and authority
              v = uri.substr(0, qm);
              std::size_t scheme = v.find("://");
              if (!v.empty() && v[0] != '/' && scheme != std::string_view::npos) {
                std::size_t slash = v.find('/', scheme + 3);
                v = slash == std::string_view::npos ? std::string_view("/") : v.substr(slash);
              }
              break;
            }
          }
          if (n.alias == Alias::kHQ && v.empty()) {
            if (o & kOptQuote) out += "\"\"";
            break;
          }
          if (v.empty()) put_text(out, {}, false, o);
          else put_encoded(out, v, o);
          break;
        }
      }
      break;
  }
}

void put_plain(const Format::Node& n, LineState& st, std::string& out, bool* stop) {
  plain_node(n, st, out, stop);
}

void Format::render(const Record& r, const sample::Ctx* ctx, std::string& out,
                    uint8_t extra) const {
  if (encoded_) return render_encoded(r, ctx, out);
  bool last_space = true;   // a separator is written once, and only after something
  LineState st(r, ctx);
  st.extra = extra;
  for (const Node& n : nodes_) {
    if (n.kind == Node::Kind::kSeparator) {
      if (!last_space) out += ' ';
      last_space = true;
      continue;
    }
    const std::size_t before = out.size();
    bool stop = false;
    plain_node(n, st, out, &stop);
    if (stop) return;
    if (out.size() != before) last_space = false;
  }
}

}  // namespace sluice::log
