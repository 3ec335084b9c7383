// The log-format renderer for encoded values, HAProxy 3.5's `+json` and `+cbor`: with `%{+json}o`
// (or `+cbor`) the line is one JSON object (`{"name": value, ...}`) or one CBOR map
// (indefinite length, written in hexadecimal unless `+bin`) of the named nodes, text and
// unnamed nodes left out; `+json`/`+cbor` on a node of a plain line encode that value alone.
//
// Values keep their type: numbers (the timers, counters, ports, integer samples) are numbers,
// booleans true/false, the rest text: JSON strings escape '"' and '\' (HAProxy escapes nothing
// else), CBOR texts are definite-length, and the values HAProxy builds from parts (%r, %HU,
// %hr, %ft, ...) indefinite-length texts made of chunks, each '#XX' escape a chunk of its own.
// A value that writes nothing is null. `%(name:str|sint|bool)` forces a type; `:raw` writes a
// sample's bytes as they are. +Q has HAProxy's effect: nothing more in JSON, literal quotes
// around a CBOR text. Only lines that use an encoding come here (Format::render).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <iterator>

#include <fmt/format.h>

#include "log/format.h"
#include "log/format_internal.h"
#include "sample/expr.h"

namespace sluice::log {

namespace {

using Node = Format::Node;

constexpr char kHexDigits[] = "0123456789ABCDEF";

// The bytes HAProxy writes '#XX' in a request line (kUrl) and in captured headers (kHdr).
enum class Esc : uint8_t { kNone, kUrl, kHdr };
bool escaped(Esc m, unsigned char c) {
  if (m == Esc::kNone) return false;
  if (c < 32 || c >= 127 || c == '"' || c == '#') return true;
  return m == Esc::kHdr && (c == '{' || c == '|' || c == '}');
}

// Writes one value with a node's options (or the key and the braces with the line's).
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void set(uint8_t opts, Cast cast) {
    opts_ = opts;
    cast_ = cast;
  }
  std::string& out() { return out_; }
  bool json() const { return opts_ & kOptJson; }
  bool cbor() const { return opts_ & kOptCbor; }

  // One CBOR byte: raw with +bin, else two hexadecimal digits.
  void byte(unsigned b) {
    if (opts_ & kOptBin) {
      out_ += static_cast<char>(b);
    } else {
      out_ += kHexDigits[(b >> 4) & 15];
      out_ += kHexDigits[b & 15];
    }
  }
  // A CBOR head: major type and argument, in the shortest form.
  void head(unsigned major, uint64_t n) {
    int bytes = n < 24 ? 0 : n <= 0xff ? 1 : n <= 0xffff ? 2 : n <= 0xffffffffULL ? 4 : 8;
    if (bytes == 0) return byte(major | static_cast<unsigned>(n));
    byte(major | (bytes == 1 ? 24u : bytes == 2 ? 25u : bytes == 4 ? 26u : 27u));
    for (int s = (bytes - 1) * 8; s >= 0; s -= 8) byte(static_cast<unsigned>(n >> s) & 0xff);
  }
  void cbor_string(unsigned major, std::string_view s) {
    head(major, s.size());
    for (char c : s) byte(static_cast<unsigned char>(c));
  }
  void json_body(std::string_view s) {
    for (char c : s) {
      if (c == '"' || c == '\\') out_ += '\\';
      out_ += c;
    }
  }

  void null() {
    if (json()) out_ += "null";
    else byte(0xF6);
  }
  void boolean(bool b) {
    if (json()) out_ += b ? "true" : "false";
    else byte(b ? 0xF5 : 0xF4);
  }
  // An integer; `:bool` makes it true/false, `:str` a JSON string.
  void integer(int64_t v) {
    if (cast_ == Cast::kBool) return boolean(v != 0);
    if (json()) {
      if (cast_ == Cast::kStr) fmt::format_to(std::back_inserter(out_), "\"{}\"", v);
      else fmt::format_to(std::back_inserter(out_), "{}", v);
      return;
    }
    if (v >= 0) head(0x00, static_cast<uint64_t>(v));
    else head(0x20, static_cast<uint64_t>(-1 - v));
  }
  // A text value (HAProxy's lf_text): JSON always quotes it (`""` when absent); CBOR writes a
  // text string, nothing when absent or empty (the value is then null), between literal
  // quotes with +Q. Up to a NUL byte.
  void text(std::string_view s) {
    s = s.substr(0, s.find('\0'));
    const bool quote = json() || (opts_ & kOptQuote);
    if (quote) out_ += '"';
    if (json()) json_body(s);
    else if (!s.empty()) cbor_string(0x60, s);
    if (quote) out_ += '"';
  }
  // A text HAProxy builds itself (dates, hexadecimal forms, termination states): quoted in
  // JSON unless inside a started text; in CBOR a text string (a chunk inside a started one).
  void rawtext(std::string_view s) {
    if (cbor()) {
      if (!s.empty()) cbor_string(0x60, s);
      return;
    }
    if (!in_text_) out_ += '"';
    json_body(s);
    if (!in_text_) out_ += '"';
  }
  // A text of several parts: JSON between quotes, CBOR an indefinite-length text.
  void start_text() {
    in_text_ = true;
    if (cbor()) byte(0x7F);
    else out_ += '"';
  }
  void end_text() {
    if (!in_text_) return;
    in_text_ = false;
    if (cbor()) byte(0xFF);
    else out_ += '"';
  }
  // One character of a started text (a chunk of its own in CBOR).
  void put_char(char c) {
    if (cbor() && in_text_) cbor_string(0x60, std::string_view(&c, 1));
    else out_ += c;
  }
  // Bytes with HAProxy's '#XX' escapes. JSON: the others with '"' and '\' escaped. CBOR: runs
  // of plain bytes and each escape as chunks (the run before an escape even when empty), of
  // the started text, or of a byte string of its own (`binary`) or a text of its own.
  void encode(std::string_view s, Esc m, bool binary = false) {
    if (json()) {
      for (char ch : s) {
        unsigned char c = static_cast<unsigned char>(ch);
        if (escaped(m, c)) {
          out_ += '#';
          out_ += kHexDigits[c >> 4];
          out_ += kHexDigits[c & 15];
        } else {
          if (c == '"' || c == '\\') out_ += '\\';
          out_ += ch;
        }
      }
      return;
    }
    const unsigned major = !in_text_ && binary ? 0x40 : 0x60;
    if (!in_text_) byte(major | 0x1F);
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (!escaped(m, c)) continue;
      cbor_string(major, s.substr(run, i - run));   // even empty, as HAProxy
      const char esc[3] = {'#', kHexDigits[c >> 4], kHexDigits[c & 15]};
      cbor_string(major, std::string_view(esc, 3));
      run = i + 1;
    }
    if (s.size() > run) cbor_string(major, s.substr(run));
    if (!in_text_) byte(0xFF);
  }
  void array_start() {
    if (json()) out_ += '[';
    else byte(0x9F);
  }
  void array_next() {
    if (json()) out_ += ", ";
  }
  void array_end() {
    if (json()) out_ += ']';
    else byte(0xFF);
  }

 private:
  std::string& out_;
  uint8_t opts_ = 0;
  Cast cast_ = Cast::kSame;
  bool in_text_ = false;
};

// A hexadecimal form (+X) as HAProxy prints it: "%0<width>X".
void hex_text(Writer& w, uint64_t v, int width) {
  char buf[24];
  auto r = fmt::format_to_n(buf, sizeof buf, "{:0{}X}", v, width);
  w.rawtext(std::string_view(buf, r.size));
}

void date(Writer& w, uint64_t wall_us, bool local, bool with_ms) {
  char buf[64];
  w.rawtext(std::string_view(buf, date_text(buf, sizeof buf, wall_us, local, with_ms)));
}

void ip(Writer& w, const net::SocketAddress* a, uint8_t opts) {
  if (!a || a->len == 0) return w.text({});
  if (a->family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->sa());
    if (opts & kOptHex) return hex_text(w, ntohl(in->sin_addr.s_addr), 8);
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    return w.text(buf);
  }
  if (a->family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->sa());
    if (opts & kOptHex) {
      char hex[33];
      for (int i = 0; i < 16; ++i) {
        hex[2 * i] = kHexDigits[in6->sin6_addr.s6_addr[i] >> 4];
        hex[2 * i + 1] = kHexDigits[in6->sin6_addr.s6_addr[i] & 15];
      }
      return w.rawtext(std::string_view(hex, 32));
    }
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
    return w.text(buf);
  }
  w.text(a->host_string());
}

void port(Writer& w, const net::SocketAddress* a, uint8_t opts) {
  if (!a || a->len == 0) return w.text({});
  if (a->family() != AF_INET && a->family() != AF_INET6) return w.text("unix");
  if (opts & kOptHex) return hex_text(w, a->port(), 4);
  w.integer(a->port());
}

// %hr %hs: "{a|b}"; %hrl %hsl: a list of texts ("-" for a value not captured).
void captures(Writer& w, std::size_t slots, std::span<const std::string> values, uint8_t opts,
              bool list) {
  if (slots == 0) return;
  auto value = [&](std::size_t i) {
    return i < values.size() ? std::string_view(values[i]) : std::string_view();
  };
  if (!list) {
    w.start_text();
    w.put_char('{');
    for (std::size_t i = 0; i < slots; ++i) {
      if (i) w.put_char('|');
      if (!value(i).empty()) w.encode(value(i), Esc::kHdr);
    }
    w.put_char('}');
    return;
  }
  w.array_start();
  for (std::size_t i = 0; i < slots; ++i) {
    if (i) w.array_next();
    w.start_text();
    if (!value(i).empty()) w.encode(value(i), Esc::kHdr);
    else if (!(opts & kOptQuote)) w.put_char('-');
    w.end_text();
  }
  w.array_end();
}

// The request line and its parts: texts of the request as received ('#XX' escapes);
// "<BADREQ>" without one, as HAProxy writes them when encoded.
void request_part(Writer& w, Alias a, LineState& st) {
  const std::string_view line = st.r.request_line;
  w.start_text();
  if (line.empty()) return w.encode(st.r.shown_request_line(), Esc::kUrl);
  if (a == Alias::kr) return w.encode(line, Esc::kUrl);
  const ReqLine& l = st.req();
  std::string_view uri = l.target;
  const std::size_t qm = uri.find('?');
  std::string_view v;
  switch (a) {
    case Alias::kHM: v = l.target.empty() && l.version.empty() ? "<BADREQ>" : l.method; break;
    case Alias::kHV: v = l.version.empty() ? "HTTP/0.9" : l.version; break;
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
  w.encode(v, Esc::kUrl);
}

void alias_value(Writer& w, const Node& n, LineState& st) {
  const Record& r = st.r;
  const uint8_t o = n.opts;
  const bool hex = o & kOptHex;
  switch (n.alias) {
    case Alias::kGlobal: break;
    case Alias::kci:
    case Alias::kfi:
    case Alias::kbi:
    case Alias::ksi: ip(w, alias_address(r, n.alias), o); break;
    case Alias::kcp:
    case Alias::kfp:
    case Alias::kbp:
    case Alias::ksp: port(w, alias_address(r, n.alias), o); break;
    case Alias::kt:
    case Alias::ktr:
    case Alias::kT:
    case Alias::kTl:
    case Alias::ktrg:
    case Alias::ktrl: {
      const AliasDate d = alias_date(st, n.alias);
      date(w, d.wall_us, d.local, d.with_ms);
      break;
    }
    case Alias::kTs:
      if (hex) hex_text(w, st.accept_us / 1000000, 4);
      else w.integer(static_cast<int64_t>(st.accept_us / 1000000));
      break;
    case Alias::kms:
      if (hex) hex_text(w, (st.accept_us / 1000) % 1000, 2);
      else w.integer(static_cast<int64_t>((st.accept_us / 1000) % 1000));
      break;
    case Alias::kpid:
      if (hex) hex_text(w, static_cast<unsigned>(r.pid), 4);
      else w.integer(r.pid);
      break;
    case Alias::krt:
      if (hex) hex_text(w, r.request_counter, 4);
      else w.integer(static_cast<int64_t>(r.request_counter));
      break;
    case Alias::klc:
      if (hex) hex_text(w, r.log_counter, 4);
      else w.integer(static_cast<int64_t>(r.log_counter));
      break;
    case Alias::kH: w.text(r.hostname); break;
    case Alias::kf: w.text(r.frontend); break;
    case Alias::kft:
      w.start_text();
      w.rawtext(r.frontend);
      if (r.tls) w.rawtext("~");   // TLS
      break;
    case Alias::kb: w.text(r.backend); break;
    case Alias::ks: w.text(r.server); break;
    case Alias::kID: w.text(r.unique_id); break;
    case Alias::kCC: w.text(r.has_cli_cookie ? r.cli_cookie : std::string_view{}); break;
    case Alias::kCS: w.text(r.has_srv_cookie ? r.srv_cookie : std::string_view{}); break;
    case Alias::ksslc: w.text(r.ssl_cipher); break;
    case Alias::ksslv: w.text(r.ssl_version); break;
    case Alias::kTh: w.integer(r.th); break;
    case Alias::kTi: w.integer(r.ti); break;
    case Alias::kTR: w.integer(r.tr); break;
    case Alias::kTq: w.integer(st.dt.tq); break;
    case Alias::kTw: w.integer(r.tw); break;
    case Alias::kTc: w.integer(r.tc); break;
    case Alias::kTr: w.integer(r.tresp); break;
    // The '+' of option logasap and of a redispatch is not part of an encoded value.
    case Alias::kTa: w.integer(st.ta); break;
    case Alias::kTt: w.integer(st.dt.tt); break;
    case Alias::kTu: w.integer(st.dt.tu); break;
    case Alias::kTd: w.integer(st.dt.td); break;
    case Alias::kST: w.integer(r.status); break;
    case Alias::kB: w.integer(static_cast<int64_t>(r.bytes_out)); break;
    case Alias::kU: w.integer(static_cast<int64_t>(r.bytes_in)); break;
    case Alias::kts:
    case Alias::ktsc: {
      char buf[8];
      std::size_t len = 0;
      for (char c : letters(r.term)) buf[len++] = c;   // two letters, no allocation (SSO)
      if (n.alias == Alias::ktsc) {
        buf[len++] = r.cookie_flags[0];
        buf[len++] = r.cookie_flags[1];
      }
      w.rawtext(std::string_view(buf, len));
      break;
    }
    case Alias::kac: w.integer(r.actconn); break;
    case Alias::kfc: w.integer(r.feconn); break;
    case Alias::kbc: w.integer(r.beconn); break;
    case Alias::ksc: w.integer(r.srvconn); break;
    case Alias::krc: w.integer(r.retries); break;
    case Alias::ksq: w.integer(r.srv_queue); break;
    case Alias::kbq: w.integer(r.be_queue); break;
    case Alias::khr: captures(w, r.req_capture_slots, r.req_captures, o, false); break;
    case Alias::khs: captures(w, r.res_capture_slots, r.res_captures, o, false); break;
    case Alias::khrl: captures(w, r.req_capture_slots, r.req_captures, o, true); break;
    case Alias::khsl: captures(w, r.res_capture_slots, r.res_captures, o, true); break;
    case Alias::kr:
    case Alias::kHM:
    case Alias::kHU:
    case Alias::kHV:
    case Alias::kHP:
    case Alias::kHPO:
    case Alias::kHQ: request_part(w, n.alias, st); break;
  }
}

// `:raw`: the sample's bytes as they are (an integer as 8 bytes, big-endian, as HAProxy's
// binary cast), whatever the encoding.
void raw_value(std::string& out, const sample::Sample& s) {
  switch (s.type) {
    case sample::Type::kBool:
    case sample::Type::kSint:
      for (int sh = 56; sh >= 0; sh -= 8)
        out += static_cast<char>((static_cast<uint64_t>(s.sint) >> sh) & 0xff);
      break;
    case sample::Type::kIpv4:
      out.append(reinterpret_cast<const char*>(&s.v4), sizeof s.v4);
      break;
    case sample::Type::kIpv6:
      out.append(reinterpret_cast<const char*>(&s.v6), sizeof s.v6);
      break;
    default:
      out += s.str;
      break;
  }
}

// A %[...] node: its type kept (integers, booleans; binary in CBOR or with +bin), or forced
// by the node's type; text otherwise. No sample: an absent text.
void sample_value(Writer& w, const Node& n, const sample::Ctx* ctx, uint8_t opts) {
  using sample::Type;
  sample::Sample s;
  bool ok = ctx && n.expr->eval(*ctx, s);
  if (n.cast == Cast::kRaw) {
    if (ok) raw_value(w.out(), s);
    return;
  }
  Type type = Type::kStr;
  if (ok && s.type == Type::kBin && (opts & kOptBin) && n.cast != Cast::kStr) type = Type::kBin;
  if (n.cast == Cast::kStr) type = Type::kStr;
  else if (n.cast == Cast::kSint) type = Type::kSint;
  else if (n.cast == Cast::kBool) type = Type::kBool;
  else if (ok && (s.type == Type::kSint || s.type == Type::kBool ||
                  ((opts & kOptCbor) && s.type == Type::kBin)))
    type = s.type;
  if (ok && s.type != type && !sample::cast(s, type, ctx->sc())) ok = false;
  if (!ok) return w.text({});
  switch (type) {
    case Type::kBin: return w.encode(s.str, Esc::kNone, true);
    case Type::kSint: return w.integer(s.sint);
    case Type::kBool: return w.boolean(s.sint != 0);
    default: return w.text(s.str);
  }
}

// One node's value, null when it wrote nothing.
void node_value(Writer& w, const Node& n, LineState& st) {
  w.set(n.opts, n.cast);
  const std::size_t at = w.out().size();
  if (n.kind == Node::Kind::kExpr) sample_value(w, n, st.ctx, n.opts);
  else alias_value(w, n, st);
  if (w.out().size() == at) w.null();
  w.end_text();
}

}  // namespace

void Format::render_encoded(const Record& r, const sample::Ctx* ctx, std::string& out) const {
  if (nodes_.empty()) return;   // an empty format (HAProxy: as if there were none)
  LineState st(r, ctx);
  Writer w(out);
  if (!(line_opts_ & kOptEncode)) {
    // A plain line with nodes encoded on their own.
    bool last_space = true;
    for (const Node& n : nodes_) {
      if (n.kind == Node::Kind::kSeparator) {
        if (!last_space) out += ' ';
        last_space = true;
        continue;
      }
      const std::size_t before = out.size();
      if (n.kind != Node::Kind::kText && (n.opts & kOptEncode)) {
        node_value(w, n, st);
      } else {
        bool stop = false;
        put_plain(n, st, out, &stop);
        if (stop) return;
      }
      if (out.size() != before) last_space = false;
    }
    return;
  }
  // The line is an object of the named nodes.
  w.set(line_opts_, Cast::kSame);
  if (w.json()) out += '{';
  else w.byte(0xBF);
  bool first = true;
  for (const Node& n : nodes_) {
    if (n.kind == Node::Kind::kText || n.kind == Node::Kind::kSeparator || n.name.empty())
      continue;
    w.set(line_opts_, Cast::kSame);
    if (w.json()) {
      if (!first) out += ", ";
      out += '"';
      out += n.name;
      out += "\": ";
    } else {
      w.cbor_string(0x60, n.name);
    }
    first = false;
    node_value(w, n, st);
  }
  w.set(line_opts_, Cast::kSame);
  if (w.json()) out += '}';
  else w.byte(0xFF);
}

}  // namespace sluice::log
