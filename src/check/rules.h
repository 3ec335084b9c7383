#pragma once
// The tcp-check rule language (`tcp-check connect|send|send-binary|send-lf|send-binary-lf|
// expect|comment`): the steps a check runs in order on its connections, and the pure parts of
// running them (the verdict of an `expect` on the bytes received so far, the texts HAProxy 3.5
// logs for each outcome). The protocol checks (`option redis-check`, `smtpchk`...) are rule
// sets of this language, as in HAProxy. No sockets here: check::Checker runs the steps.
// Immutable once built; any thread.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/regex.h"
#include "lb/server.h"
#include "net/address.h"

namespace sluice::check {

struct CheckRule {
  enum class Kind : uint8_t { kConnect, kSend, kExpect, kComment, kSetVar, kUnsetVar };
  // What an expect looks for: a text or bytes anywhere in what was received, a regex on the
  // text or on the bytes' hexadecimal dump, or a log-format rendered at each check (the
  // -lf forms: `fmt`).
  // The protocol checks also read answers that a pattern cannot judge: MySQL's greeting and
  // its answer to a login (kMysqlGreeting, kMysqlReply), LDAP's bind response (kLdapBind).
  // http-check's (the answer parsed as an HTTP response): its status (kStatus: codes and
  // ranges; kRstatus: a regex), a header field (kHdr: each comma-separated value; kFhdr: the
  // whole line), its body (kBody, kRbody, kBodyLf).
  enum class Match : uint8_t {
    kString, kRstring, kBinary, kRbinary, kStringLf, kBinaryLf,
    kMysqlGreeting, kMysqlReply, kLdapBind,
    kStatus, kRstatus, kHdr, kFhdr, kBody, kRbody, kBodyLf,
  };
  // How hdr / fhdr compare a field's name and value (`-m str|beg|end|sub|reg`).
  enum class Cmp : uint8_t { kStr, kBeg, kEnd, kSub, kReg };

  Kind kind = Kind::kComment;
  std::string comment;   // `comment <msg>` of the rule (or the text of a `tcp-check comment`)

  // kConnect: where (0 / no addr: the check's own port and address), and what it sends first.
  // `port <expr>`: `port_expr` is the expression's index in the rule set's expressions (its
  // value, when it is a valid port, wins over `port`; -1: none).
  int port = 0;
  int port_expr = -1;
  bool has_addr = false;
  net::SocketAddress addr;
  bool send_proxy = false;   // `send-proxy`: a PROXY header opens it (v1 unless the server's is v2)
  bool is_default = false;   // `default`: as the check's own connection (its check-send-proxy)
  bool linger = false;       // closed with a FIN rather than a reset (HAProxy's default)
  bool via_socks4 = false;   // through the server's SOCKS4 proxy (`socks4`), if it has one
  // `ssl`: a TLS handshake once connected (the server's TLS settings), sending `sni` (empty:
  // the server's check-sni) and offering `alpn` (empty: the server's check-alpn).
  bool ssl = false;
  std::string sni;
  std::vector<std::string> alpn;

  // kSend: the bytes (send, send-binary decoded) or a log-format (send-lf, send-binary-lf:
  // `fmt`, hex-decoded when `binary`).
  std::string data;
  bool binary = false;
  // kSend of http-check (`http`): the request line (an empty part is option httpchk's; uri-lf:
  // `fmt`), its fields (a value is a format when its index is >= 0) and its body (body-lf:
  // `body_fmt`).
  struct Field {
    std::string name;
    std::string value;
    int fmt = -1;
  };
  bool http = false;
  std::string method, uri, version;
  std::vector<Field> fields;
  std::string body;
  int body_fmt = -1;

  // kExpect hdr / fhdr: the field's name and the value pattern (none: the name alone).
  Cmp name_cmp = Cmp::kStr;
  Cmp value_cmp = Cmp::kStr;
  std::string hdr_name;
  std::shared_ptr<const base::Regex> name_re;
  bool has_value = false;

  // kExpect.
  Match match = Match::kString;
  bool negate = false;     // `!`: passes when the pattern is absent
  std::string pattern;     // as written (binary: the hex text), for the messages
  std::string bytes;       // what is searched for (binary: decoded)
  std::shared_ptr<const base::Regex> re;   // kRstring, kRbinary
  int min_recv = -1;       // bytes to wait for before judging (-1: judge what is there)
  lb::CheckStatus ok_status = lb::CheckStatus::kL7Ok;
  lb::CheckStatus error_status = lb::CheckStatus::kL7Rsp;
  lb::CheckStatus tout_status = lb::CheckStatus::kL7Tout;
  bool error_status_set = false;   // written (http-check's default depends on the match)

  // Log-format indexes into the rule set's formats (-1: none): send-lf's, the -lf pattern,
  // `on-success` and `on-error`. Rendered by the checker's hook (check/ has no sample language).
  int fmt = -1;
  int on_success = -1;
  int on_error = -1;
  // `status-code <expr>`: a format ("%[<expr>]") whose integer value is the check's code.
  int status_code = -1;

  // kSetVar (`set-var(<var>[,<cond>...]) <expr>`, `set-var-fmt(...) <fmt>`) and kUnsetVar
  // (`unset-var(<var>)`): the action's index in the rule set's variable actions, which the
  // checker's hook runs (check/ has no sample language).
  int action = -1;
};

struct RuleSet {
  std::vector<CheckRule> rules;
  // What a check that passed every step reports: "(tcp-check)" for a rule set written by hand,
  // the protocol check's own words otherwise (redis-check: "Redis server is ok"...).
  std::string ok_info = "(tcp-check)";
  // Whether the first step opens the connection itself (else an implicit connect comes first,
  // HAProxy's "initial connection step"). Comments and variable steps before it do not count.
  bool starts_with_connect() const;
};

// The verdict of an expect on `in`, what was received since the last send. `last`: no more
// will come (the server closed, or the buffer is full). `rendered`: the -lf pattern's value.
enum class ExpectVerdict : uint8_t { kPass, kFail, kWait };
ExpectVerdict evaluate_expect(const CheckRule& r, std::string_view in, bool last,
                              std::string_view rendered = {});

// The protocol answers (Match kMysql*, kLdapBind), as HAProxy 3.5 judges them: the verdict,
// and the code and info the check then reports (code -1: none; a passing MySQL greeting's
// info is the server's version, which the check reports if nothing later says otherwise).
struct CustomOutcome {
  ExpectVerdict verdict = ExpectVerdict::kWait;
  lb::CheckStatus status = lb::CheckStatus::kL7Rsp;   // a failure's status
  int code = -1;
  std::string info;
};
CustomOutcome evaluate_custom(const CheckRule& r, std::string_view in, bool last);
bool is_custom(const CheckRule& r);

// HAProxy 3.5's texts: the info of a failed expect ("TCPCHK did not match content 'OK' at
// step 2 comment: ..."), the description of a step for errors and timeouts ("connect port
// 9590", "expect string '+OK'"), and an errno as it reports it ("ECONNREFUSED returned by OS
// (Connection refused)"). Steps are numbered from 1, the implicit connect not counted.
std::string expect_failure_text(const CheckRule& r, int step, std::string_view rendered = {});
std::string step_text(const CheckRule& r);
std::string errno_report(int err);

// Whether `code` is in a `status` list: codes and ranges, comma separated ("200-299,304").
bool status_matches(int code, std::string_view list);

// http-check: the request of an HTTP send (`render` gives the formats' values; `state`: the
// x-haproxy-server-state value of send-state, empty without it), as HAProxy 3.5 writes it:
// lower-case field names, content-length with a body, `connection: close` in HTTP/1.1.
std::string http_request(const CheckRule& r, const std::function<std::string(int)>& render,
                         std::string_view state);

// The verdict of an http-check expect on `in` (the answer so far) to a request of `method`:
// kWait while the head (or, for a body match, the body) is incomplete and more may come. On
// kFail `out` holds the status and the words HAProxy 3.5 reports; on kPass the code. A head
// that does not parse is kFail with SOCKERR and no words, as HAProxy reports it.
struct HttpOutcome {
  lb::CheckStatus status = lb::CheckStatus::kL7Ok;
  int code = 0;
  std::string info;
};
ExpectVerdict evaluate_http_expect(const CheckRule& r, std::string_view in, bool last,
                                   std::string_view method, std::string_view rendered,
                                   HttpOutcome* out);

}  // namespace sluice::check
