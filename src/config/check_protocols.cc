// The protocol checks (`option redis-check`, `smtpchk`, `pgsql-check`, `mysql-check`,
// `ldap-check`, `ssl-hello-chk`): each is a tcp-check rule set, the bytes and verdicts HAProxy
// 3.5 uses (what it sends was captured from it, and its log lines compared).
#include <algorithm>

#include <fmt/format.h>

#include "base/strings.h"
#include "config/proxy_keywords.h"

namespace sluice::config::proxy_kw {

namespace {

using check::CheckRule;
using M = CheckRule::Match;
using S = lb::CheckStatus;

CheckRule send_hex(const std::string& hex) {
  CheckRule r;
  r.kind = CheckRule::Kind::kSend;
  base::hex_decode(hex, &r.data);
  return r;
}

CheckRule send_text(std::string text) {
  CheckRule r;
  r.kind = CheckRule::Kind::kSend;
  r.data = std::move(text);
  return r;
}

// One expect of a protocol's rule set, written as its options: Expect(M::kString, "+PONG")
// .error(S::kL7Sts).on_error("...").
struct Expect {
  Expect(M m, std::string p) : match(m), pattern(std::move(p)) {}
  Expect& negated() { negate = true; return *this; }
  Expect& min(int n) { min_recv = n; return *this; }
  Expect& statuses(S o, S e, S t) { ok = o; error = e; tout = t; return *this; }
  Expect& error_status(S e) { error = e; return *this; }
  Expect& on_ok(std::string f) { on_success = std::move(f); return *this; }
  Expect& on_err(std::string f) { on_error = std::move(f); return *this; }
  Expect& code(std::string expr) { status_code = std::move(expr); return *this; }
  Expect& quiet() { silent_error = true; return *this; }

  M match;
  std::string pattern;
  bool negate = false;
  int min_recv = -1;
  S ok = S::kL7Ok, error = S::kL7Rsp, tout = S::kL7Tout;
  std::string on_success, on_error, status_code;   // formats ("" none)
  bool silent_error = false;                       // a failure reports no info
};

class Builder {
 public:
  Builder(const Line& l, TcpCheckConfig& tc) : l_(l), tc_(tc) {}

  // `linger`: as HAProxy 3.5's rule set for the protocol (its close seen from the server: a
  // FIN for SMTP, PostgreSQL and MySQL, a reset for Redis, LDAP and the SSL hello).
  void connect_default(bool linger) {
    CheckRule r;
    r.kind = CheckRule::Kind::kConnect;
    r.is_default = true;
    r.linger = linger;
    tc_.rules.push_back(std::move(r));
  }
  void add(CheckRule r) { tc_.rules.push_back(std::move(r)); }
  void expect(const Expect& e) {
    CheckRule r;
    r.kind = CheckRule::Kind::kExpect;
    r.match = e.match;
    r.negate = e.negate;
    r.pattern = e.pattern;
    r.min_recv = e.min_recv;
    r.ok_status = e.ok;
    r.error_status = e.error;
    r.tout_status = e.tout;
    if (e.match == M::kString) r.bytes = e.pattern;
    if (e.match == M::kRstring || e.match == M::kRbinary) {
      auto re = std::make_shared<base::Regex>();
      std::string error;
      re->compile(e.pattern, &error);
      r.re = std::move(re);
    }
    if (!e.on_success.empty()) r.on_success = fmt(e.on_success);
    if (!e.on_error.empty() || e.silent_error) r.on_error = fmt(e.on_error);
    if (!e.status_code.empty()) r.status_code = fmt("%[" + e.status_code + "]");
    tc_.rules.push_back(std::move(r));
  }
  int fmt(const std::string& text) { return add_check_format(tc_, l_, "option", text); }

 private:
  const Line& l_;
  TcpCheckConfig& tc_;
};

// SMTP's replies: the code, then the text after it.
constexpr const char* kSmtpText = "%[res.payload(4,0),ltrim(' '),cut_crlf]";

void smtp(Builder& b, const Line& l) {
  // `option smtpchk [HELO|EHLO <domain>]`: anything else is the default greeting.
  std::string cmd = "HELO localhost";
  if (l.args.size() > 3 && (l.args[2] == "HELO" || l.args[2] == "EHLO"))
    cmd = l.args[2] + " " + l.args[3];
  b.connect_default(true);
  b.expect(Expect(M::kRstring, "^[0-9]{3}[ \r]").min(4).on_err("%[res.payload(0,0),cut_crlf]"));
  b.expect(Expect(M::kRstring, "^2[0-9]{2}[ \r]").min(4).error_status(S::kL7Sts).on_err(kSmtpText)
               .code("res.payload(0,3)"));
  b.add(send_text(cmd + "\r\n"));
  b.expect(Expect(M::kRstring, "^2[0-9]{2}[- \r]").min(4).error_status(S::kL7Sts).on_err(kSmtpText)
               .code("res.payload(0,3)"));
  b.add(send_text("QUIT\r\n"));
  b.expect(Expect(M::kRstring, "^2[0-9]{2}[- \r]").min(4).error_status(S::kL7Sts).on_err(kSmtpText)
               .on_ok(kSmtpText).code("res.payload(0,3)"));
}

void pgsql(Builder& b, const std::string& user) {
  // The startup message: its length, protocol 3.0, "user" and the name.
  std::string body = std::string("\x00\x03\x00\x00", 4) + "user" + '\0' + user + '\0' + '\0';
  std::string msg;
  const uint32_t len = static_cast<uint32_t>(body.size() + 4);
  for (int i = 3; i >= 0; --i) msg.push_back(static_cast<char>(len >> (8 * i)));
  msg += body;
  b.connect_default(true);
  CheckRule s;
  s.kind = CheckRule::Kind::kSend;
  s.data = msg;
  b.add(std::move(s));
  b.expect(Expect(M::kRstring, "^E").negated().min(5).on_err("%[res.payload(6,0)]"));
  b.expect(Expect(M::kRbinary, "^520000000800000000").min(9).error_status(S::kL7Sts)
               .on_ok("PostgreSQL server is ok").on_err("PostgreSQL unknown error"));
}

void mysql(Builder& b, const std::string& user, bool pre41) {
  b.connect_default(true);
  b.expect(Expect(M::kMysqlGreeting, "greeting"));
  if (user.empty()) return;
  // A login without a password, then COM_QUIT. Protocol 4.1 (post-41, the default): 4 bytes
  // of capabilities, the maximum packet size, the charset, 23 reserved bytes, the user and an
  // empty password. Before 4.1 (pre-41): 2 bytes of capabilities, a 3-byte maximum packet
  // size, the user and an empty password. The bytes are HAProxy 3.5's.
  std::string hex = pre41 ? "0080" "000001" : "00820000" "00800001" "21" + std::string(46, '0');
  for (unsigned char c : user) hex += fmt::format("{:02x}", c);
  hex += "0000";
  const std::size_t len = hex.size() / 2;
  b.add(send_hex(fmt::format("{:02x}{:02x}{:02x}01", len & 0xff, (len >> 8) & 0xff,
                             (len >> 16) & 0xff) + hex + "0100000001"));
  b.expect(Expect(M::kMysqlReply, "reply"));
}

void ldap(Builder& b) {
  b.connect_default(false);
  b.add(send_hex("300C020101600702010304008000"));   // an anonymous simple bind, LDAPv3
  b.expect(Expect(M::kRbinary, "^30").min(14).on_err("Not LDAPv3 protocol"));
  b.expect(Expect(M::kLdapBind, "bind response"));
}

void ssl_hello(Builder& b, TcpCheckConfig& tc) {
  // An SSLv3 ClientHello whose random starts with the time, as HAProxy sends it.
  static constexpr const char* kCiphers =
      "000100020003000400050006000700080009000a000b000c000d000e000f0010001100120013001400150016"
      "001700180019001a001b002f0030003100320033003400350036003700380039003a";
  CheckRule s;
  s.kind = CheckRule::Kind::kSend;
  s.binary = true;
  s.fmt = b.fmt(std::string("16030000790100007503") + "00%[date,htonl,hex]" +
                "484150524f585953534c43484b0a484150524f585953534c43484b0a" + "00004e" + kCiphers +
                "0100");
  b.connect_default(false);
  b.add(std::move(s));
  b.expect(Expect(M::kRbinary, "^1[56]").min(5).statuses(S::kL6Ok, S::kL6Rsp, S::kL6Tout).quiet());
  tc.ok_info.clear();
}

}  // namespace

bool protocol_check_option(Parser& p, Line& l, ProxyConfig& px, std::string_view name) {
  (void)p;
  static constexpr std::string_view kNames[] = {"redis-check", "smtpchk", "pgsql-check",
                                                "mysql-check", "ldap-check", "ssl-hello-chk"};
  if (std::find(std::begin(kNames), std::end(kNames), name) == std::end(kNames)) return false;
  if (l.prefix != Prefix::kNone)
    throw ConfigError{fmt::format("{}negation/default is not supported for option '{}'.", l.where, name)};
  TcpCheckConfig tc;
  tc.protocol = std::string(name);
  tc.loc = l.loc;
  Builder b(l, tc);
  if (name == "redis-check") {
    no_extra(l, 2);
    b.connect_default(false);
    b.add(send_text("*1\r\n$4\r\nPING\r\n"));
    b.expect(Expect(M::kString, "+PONG\r\n").error_status(S::kL7Sts).on_ok("Redis server is ok")
                 .on_err("%[res.payload(0,0),cut_crlf]"));
  } else if (name == "smtpchk") {
    smtp(b, l);
  } else if (name == "pgsql-check") {
    if (l.args.size() < 4 || l.args[2] != "user" || l.args[3].empty())
      throw ConfigError{fmt::format("{}'option pgsql-check' expects 'user <username>' as argument.",
                                    l.where)};
    no_extra(l, 4);
    pgsql(b, l.args[3]);
  } else if (name == "mysql-check") {
    std::string user;
    bool pre41 = false;
    if (l.args.size() > 2) {
      if (l.args[2] != "user" || l.args.size() < 4 || l.args[3].empty())
        throw ConfigError{fmt::format("{}'option mysql-check' only supports optional values: "
                                      "'user'.", l.where)};
      user = l.args[3];
      if (l.args.size() > 4) {
        pre41 = l.args[4] == "pre-41";
        if (!pre41 && l.args[4] != "post-41")
          throw ConfigError{fmt::format("{}'option mysql-check user <user>' only supports "
                                        "optional values: 'pre-41' and 'post-41'.", l.where)};
        no_extra(l, 5);
      }
    }
    mysql(b, user, pre41);
  } else if (name == "ldap-check") {
    no_extra(l, 2);
    ldap(b);
  } else {
    no_extra(l, 2);
    ssl_hello(b, tc);
  }
  // The option stands for a rule set of its own: the protocol's words on success, the check
  // type `option tcp-check` runs.
  if (name == "redis-check" || name == "smtpchk" || name == "pgsql-check") tc.ok_info.clear();
  px.tcp_check = std::move(tc);
  px.option_tcp_check = true;
  px.check_type = ProxyConfig::CheckType::kTcp;
  return true;
}

}  // namespace sluice::config::proxy_kw
