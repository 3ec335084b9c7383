#pragma once
// HAProxy's log-format language, compiled: literal text, separators, `%<alias>` (every alias of
// HAProxy 3.5's section 8.2.6), `%[sample expression]`, and the `%{+Q,+X,+E,+M}` flags, per
// node or for the rest of the line with `%{...}o`. Nodes may be named, `%(name)` or
// `%(name:type)`, and encoded: `%{+json}o` / `%{+cbor}o` make the whole line a JSON object
// or a CBOR map of the named nodes (format_encode.cc), `+json`/`+cbor` on one node encode its
// value alone. Parsed once at configuration time; rendered for each line into a buffer the
// caller reuses, without allocating once it has grown.
//
// The predefined formats (`option httplog`, `option httplog clf`, `option tcplog`, `option
// tcplog clf`) are these same compiled formats, from HAProxy 3.5's format strings.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "log/line.h"
#include "sample/context.h"

namespace sluice::sample {
class Expr;
}

namespace sluice::log {

// HAProxy 3.5's format strings.
inline constexpr std::string_view kHttpLogFormat =
    "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc "
    "%sq/%bq %hr %hs %{+Q}r";
inline constexpr std::string_view kClfHttpLogFormat =
    "%{+Q}o %{-Q}ci - - [%trg] %r %ST %B \"\" \"\" %cp %ms %ft %b %s %TR %Tw %Tc %Tr %Ta %tsc "
    "%ac %fc %bc %sc %rc %sq %bq %CC %CS %hrl %hsl";
inline constexpr std::string_view kTcpLogFormat =
    "%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq";
inline constexpr std::string_view kClfTcpLogFormat =
    "%{+Q}o %{-Q}ci - - [%T] \"TCP \" 000 %B \"\" \"\" %cp %ms %ft %b %s %Th %Tw %Tc %Tt %U %ts-- "
    "%ac %fc %bc %sc %rc %sq %bq \"\" \"\" ";
// `option httpslog`: httplog's fields, then the TLS ones.
inline constexpr std::string_view kHttpsLogFormat =
    "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc "
    "%sq/%bq %hr %hs %{+Q}r %[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/%[ssl_c_ca_err]/"
    "%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc";

// What `%[...]` may read in a log format: the connection, the request line and the status,
// the backend, the server and the transaction's end; no buffered bytes and no bodies (HAProxy
// refuses req.len, res.len, req.body, res.body there).
inline constexpr uint32_t kLogAvail =
    sample::kAtLog & ~(sample::kUseReqBuf | sample::kUseResBuf | sample::kUseHttpReqBody |
                       sample::kUseHttpResBody);

// Node options (HAProxy's LOG_OPT_*).
enum Opt : uint8_t {
  kOptMandatory = 1,   // +M: a sample that yields nothing ends the line there
  kOptQuote = 2,       // +Q: strings, addresses and samples between double quotes
  kOptHex = 4,         // +X: addresses, ports and a few counters in hexadecimal
  kOptEscape = 8,      // +E: '"', '\' and ']' escaped with a backslash
  kOptJson = 16,       // +json: the value as JSON (with %o: the line is a JSON object)
  kOptCbor = 32,       // +cbor: the value as CBOR, written in hexadecimal
  kOptBin = 64,        // +bin (with %o only): CBOR as raw bytes, binary samples kept binary
  kOptEncode = kOptJson | kOptCbor,
  // Not written in formats: given to render() by the places that are not log lines (the
  // values of rule actions), where HAProxy writes nothing, not '-', for an absent value.
  kOptNoDash = 128,
};

// `%(name:type)`: the type a named node's value is given when encoded.
enum class Cast : uint8_t { kSame, kStr, kSint, kBool, kRaw };

enum class Alias : uint8_t {
  kGlobal,   // %o: sets the default options of what follows, writes nothing
  kB, kCC, kCS, kH, kHM, kHP, kHPO, kHQ, kHU, kHV, kID, kST, kT, kTa, kTc, kTd, kTh, kTi,
  kTl, kTq, kTR, kTr, kTs, kTt, kTu, kTw, kU, kac, kb, kbc, kbi, kbp, kbq, kci, kcp, kf, kfc,
  kfi, kfp, kft, khr, khrl, khs, khsl, klc, kms, kpid, kr, krc, krt, ks, ksc, ksi, ksp, ksq,
  ksslc, ksslv, kt, ktr, ktrg, ktrl, kts, ktsc,
};

// The alias table: name and whether it depends on HTTP mode (HAProxy's PR_MODE_HTTP ones).
struct AliasDef {
  std::string_view name;
  Alias id;
  bool http;
};
const AliasDef* find_alias(std::string_view name);

class Format {
 public:
  struct Node {
    enum class Kind : uint8_t { kText, kSeparator, kAlias, kExpr };
    Kind kind = Kind::kText;
    Alias alias = Alias::kGlobal;
    uint8_t opts = 0;
    Cast cast = Cast::kSame;
    std::string text;
    std::string name;   // `%(name)`; empty: none
    std::shared_ptr<const sample::Expr> expr;
  };

  // Compiles `text`. `avail`: the Use bits the place offers to `%[...]`. `merge_spaces`:
  // runs of spaces are one separator, written once and only after something (log-format,
  // unique-id-format); else spaces are text. Errors are HAProxy's texts (without the
  // "failed to parse log-format : " its callers put in front).
  static base::Result<Format> parse(std::string_view text, uint32_t avail = kLogAvail,
                                    bool merge_spaces = true);

  // Appends the line for `r` to `out`; `ctx` (may be null) is what `%[...]` reads. `extra`:
  // options added to every node's (kOptNoDash).
  void render(const Record& r, const sample::Ctx* ctx, std::string& out,
              uint8_t extra = 0) const;

  const std::string& text() const { return text_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  bool empty() const { return nodes_.empty(); }
  // Whether any node is an HTTP-mode alias or an HTTP sample (HAProxy's diag warning).
  bool uses_http() const;
  // Whether any node is this alias.
  bool uses(Alias a) const;
  // The options of the whole line (the %o ones in common): kOptJson or kOptCbor when the line
  // is encoded, kOptBin.
  uint8_t line_opts() const { return line_opts_; }

 private:
  // format_encode.cc: the line when it or one of its nodes is encoded.
  void render_encoded(const Record& r, const sample::Ctx* ctx, std::string& out) const;

  std::vector<Node> nodes_;
  std::string text_;
  uint8_t line_opts_ = 0;
  bool encoded_ = false;   // the line or a node is encoded: render_encoded()
};

// The predefined formats, compiled once (thread-safe).
enum class Predefined : uint8_t { kHttpLog, kClfHttpLog, kTcpLog, kClfTcpLog, kHttpsLog };
std::shared_ptr<const Format> predefined(Predefined p);

}  // namespace sluice::log
