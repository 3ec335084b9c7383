// The ssl_fc* and ssl_c_* fetches (HAProxy's section 7.3.4): what the client connection's TLS
// says (bind ... ssl), read from its OpenSSL connection through net/tls.h; the ssl_bc* ones
// say the same of the server connection (server ... ssl). On a plain connection the booleans
// are false and the others find nothing, as in HAProxy.
#include <string>

#include "net/tls.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

// The client's connection, or with Back the server's.
template <bool Back = false>
ssl_st* tls_of(const Ctx& ctx) {
  if (!ctx.env) return nullptr;
  return Back ? ctx.env->server_tls() : ctx.env->client_tls();
}

template <bool Back = false>
bool f_ssl_fc(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::boolean(tls_of<Back>(ctx) != nullptr);
  return true;
}

template <std::string_view (*Get)(ssl_st*), bool Back = false>
bool f_text(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of<Back>(ctx);
  if (!s) return false;
  std::string_view v = Get(s);
  if (v.empty()) return false;
  out = Sample::string(v);
  return true;
}

bool f_has_sni(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of(ctx);
  out = Sample::boolean(s && !net::tls::sni(s).empty());
  return true;
}

template <bool Back = false>
bool f_reused(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of<Back>(ctx);
  if (!s) return false;
  out = Sample::boolean(net::tls::session_reused(s));
  return true;
}

// ssl_fc_err / ssl_bc_err, and with Text their _str forms: what broke the connection's TLS.
template <bool Text, bool Back = false>
bool f_err(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of<Back>(ctx);
  if (!s) return false;
  const unsigned long code = net::tls::last_error(s);
  if constexpr (Text) {
    if (!code) return false;
    std::string_view r = net::tls::error_reason(code);
    if (r.empty()) return false;
    out = Sample::string(r);
  } else {
    out = Sample::integer(static_cast<int64_t>(code));
  }
  return true;
}

template <bool Alg, bool Back = false>
bool f_keysize(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of<Back>(ctx);
  if (!s) return false;
  int alg = 0;
  const int used = net::tls::cipher_bits(s, &alg);
  out = Sample::integer(Alg ? alg : used);
  return true;
}

bool f_has_crt(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of(ctx);
  if (!s) return false;
  out = Sample::boolean(net::tls::has_peer_cert(s));
  return true;
}

bool f_c_verify(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of(ctx);
  if (!s) return false;
  out = Sample::integer(net::tls::verify_result(s));
  return true;
}

// The certificates: the peer's (ssl_c_*, the client's) or this side's (ssl_f_*, the one the
// frontend served); with Back the server connection's peer (ssl_s_*, the server's).
// Binary fields (serial, sha1, der) are binary samples.
template <bool Peer, net::tls::CertField F, Type T, bool Back = false>
bool f_cert(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of<Back>(ctx);
  if (!s) return false;
  std::string& buf = ctx.sc().next();
  if (!net::tls::cert_field(s, Peer, F, &buf)) return false;
  if constexpr (T == Type::kSint) {
    out = Sample::integer(std::stoll(buf));
    return true;
  } else {
    out = Sample::string(buf);
    out.type = T;
    return true;
  }
}

// ssl_c_s_dn / ssl_c_i_dn / ssl_f_s_dn / ssl_f_i_dn / ssl_s_s_dn / ssl_s_i_dn
// ([<entry>[,<occ>[,<format>]]]).
template <bool Peer, bool Issuer, bool Back = false>
bool f_dn(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  ssl_st* s = tls_of<Back>(ctx);
  if (!s) return false;
  std::string& buf = ctx.sc().next();
  const std::string_view entry = a[0].given ? std::string_view(a[0].str) : std::string_view();
  const int occ = a[1].given ? static_cast<int>(a[1].sint) : 0;
  const bool rfc2253 = a[2].given && a[2].str == "rfc2253";
  if (!net::tls::cert_dn(s, Peer, Issuer, entry, occ, rfc2253, &buf)) return false;
  out = Sample::string(buf);
  return true;
}

std::string check_dn_format(Arg* a, const ParseCtx&) {
  if (a[2].given && !a[2].str.empty() && a[2].str != "rfc2253")
    return "only rfc2253 or a blank value are currently supported as the format argument.";
  return {};
}

// ssl_c_err, ssl_c_ca_err, ssl_c_ca_err_depth: the verification errors a connection was let
// through with. sluice has no ca-ignore-err / crt-ignore-err: a certificate that does not
// verify ends the handshake, so an established connection has none (0), as HAProxy reports
// without those options.
bool f_no_verify_error(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (!tls_of(ctx)) return false;
  out = Sample::integer(0);
  return true;
}

constexpr uint32_t kL5 = kUseL5Cli;
constexpr ArgSpec kDnArgs = args(0, ArgType::kStr, ArgType::kSint, ArgType::kStr);
using CF = net::tls::CertField;
constexpr uint32_t kL5S = kUseL5Srv;

constexpr FetchDef kFetches[] = {
    {"ssl_fc", f_ssl_fc<>, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_fc_sni", f_text<net::tls::sni>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_has_sni", f_has_sni, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_fc_protocol", f_text<net::tls::protocol>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_cipher", f_text<net::tls::cipher>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_alpn", f_text<net::tls::alpn>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_curve", f_text<net::tls::curve>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_is_resumed", f_reused<>, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_fc_err", f_err<false>, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_fc_err_str", f_err<true>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_use_keysize", f_keysize<false>, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_fc_alg_keysize", f_keysize<true>, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_fc_has_crt", f_has_crt, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_c_used", f_has_crt, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_c_verify", f_c_verify, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_c_s_dn", f_dn<true, false>, kDnArgs, check_dn_format, Type::kStr, kL5, "str"},
    {"ssl_c_i_dn", f_dn<true, true>, kDnArgs, check_dn_format, Type::kStr, kL5, "str"},
    {"ssl_c_serial", f_cert<true, CF::kSerial, Type::kBin>, no_args(), nullptr, Type::kBin, kL5, "bin"},
    {"ssl_c_notafter", f_cert<true, CF::kNotAfter, Type::kStr>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_c_notbefore", f_cert<true, CF::kNotBefore, Type::kStr>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_c_sig_alg", f_cert<true, CF::kSigAlg, Type::kStr>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_c_key_alg", f_cert<true, CF::kKeyAlg, Type::kStr>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_c_sha1", f_cert<true, CF::kSha1, Type::kBin>, no_args(), nullptr, Type::kBin, kL5, "bin"},
    {"ssl_c_der", f_cert<true, CF::kDer, Type::kBin>, no_args(), nullptr, Type::kBin, kL5, "bin"},
    {"ssl_c_version", f_cert<true, CF::kVersion, Type::kSint>, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_c_err", f_no_verify_error, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_c_ca_err", f_no_verify_error, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_c_ca_err_depth", f_no_verify_error, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_f_s_dn", f_dn<false, false>, kDnArgs, check_dn_format, Type::kStr, kL5, "str"},
    {"ssl_f_i_dn", f_dn<false, true>, kDnArgs, check_dn_format, Type::kStr, kL5, "str"},
    {"ssl_f_serial", f_cert<false, CF::kSerial, Type::kBin>, no_args(), nullptr, Type::kBin, kL5, "bin"},
    {"ssl_f_notafter", f_cert<false, CF::kNotAfter, Type::kStr>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_f_notbefore", f_cert<false, CF::kNotBefore, Type::kStr>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_f_sig_alg", f_cert<false, CF::kSigAlg, Type::kStr>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_f_key_alg", f_cert<false, CF::kKeyAlg, Type::kStr>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_f_sha1", f_cert<false, CF::kSha1, Type::kBin>, no_args(), nullptr, Type::kBin, kL5, "bin"},
    {"ssl_f_der", f_cert<false, CF::kDer, Type::kBin>, no_args(), nullptr, Type::kBin, kL5, "bin"},
    {"ssl_f_version", f_cert<false, CF::kVersion, Type::kSint>, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_bc", f_ssl_fc<true>, no_args(), nullptr, Type::kBool, kL5S, "bool"},
    {"ssl_bc_protocol", f_text<net::tls::protocol, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_bc_cipher", f_text<net::tls::cipher, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_bc_alpn", f_text<net::tls::alpn, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_bc_curve", f_text<net::tls::curve, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_bc_is_resumed", f_reused<true>, no_args(), nullptr, Type::kBool, kL5S, "bool"},
    {"ssl_bc_err", f_err<false, true>, no_args(), nullptr, Type::kSint, kL5S, "int"},
    {"ssl_bc_err_str", f_err<true, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_bc_use_keysize", f_keysize<false, true>, no_args(), nullptr, Type::kSint, kL5S, "int"},
    {"ssl_bc_alg_keysize", f_keysize<true, true>, no_args(), nullptr, Type::kSint, kL5S, "int"},
    // The certificate the server presented on the server connection.
    {"ssl_s_s_dn", f_dn<true, false, true>, kDnArgs, check_dn_format, Type::kStr, kL5S, "str"},
    {"ssl_s_i_dn", f_dn<true, true, true>, kDnArgs, check_dn_format, Type::kStr, kL5S, "str"},
    {"ssl_s_serial", f_cert<true, CF::kSerial, Type::kBin, true>, no_args(), nullptr, Type::kBin, kL5S, "bin"},
    {"ssl_s_notafter", f_cert<true, CF::kNotAfter, Type::kStr, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_s_notbefore", f_cert<true, CF::kNotBefore, Type::kStr, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_s_sig_alg", f_cert<true, CF::kSigAlg, Type::kStr, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_s_key_alg", f_cert<true, CF::kKeyAlg, Type::kStr, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_s_der", f_cert<true, CF::kDer, Type::kBin, true>, no_args(), nullptr, Type::kBin, kL5S, "bin"},
    {"ssl_s_sha1", f_cert<true, CF::kSha1, Type::kBin, true>, no_args(), nullptr, Type::kBin, kL5S, "bin"},
    {"ssl_s_version", f_cert<true, CF::kVersion, Type::kSint, true>, no_args(), nullptr, Type::kSint, kL5S, "int"},
};

}  // namespace

std::span<const FetchDef> ssl_fetches() { return kFetches; }

}  // namespace sluice::sample::tables
