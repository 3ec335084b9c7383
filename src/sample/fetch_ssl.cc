// The ssl_fc* and ssl_c_* fetches (HAProxy's section 7.3.4): what the client connection's TLS
// says (bind ... ssl), read from its OpenSSL connection through net/tls.h; the ssl_bc* ones
// say the same of the server connection (server ... ssl). On a plain connection the booleans
// are false and the others find nothing, as in HAProxy.
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

constexpr uint32_t kL5 = kUseL5Cli;
constexpr uint32_t kL5S = kUseL5Srv;

constexpr FetchDef kFetches[] = {
    {"ssl_fc", f_ssl_fc<>, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_fc_sni", f_text<net::tls::sni>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_has_sni", f_has_sni, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_fc_protocol", f_text<net::tls::protocol>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_cipher", f_text<net::tls::cipher>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_alpn", f_text<net::tls::alpn>, no_args(), nullptr, Type::kStr, kL5, "str"},
    {"ssl_fc_is_resumed", f_reused<>, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_fc_use_keysize", f_keysize<false>, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_fc_alg_keysize", f_keysize<true>, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_fc_has_crt", f_has_crt, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_c_used", f_has_crt, no_args(), nullptr, Type::kBool, kL5, "bool"},
    {"ssl_c_verify", f_c_verify, no_args(), nullptr, Type::kSint, kL5, "int"},
    {"ssl_bc", f_ssl_fc<true>, no_args(), nullptr, Type::kBool, kL5S, "bool"},
    {"ssl_bc_protocol", f_text<net::tls::protocol, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_bc_cipher", f_text<net::tls::cipher, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_bc_alpn", f_text<net::tls::alpn, true>, no_args(), nullptr, Type::kStr, kL5S, "str"},
    {"ssl_bc_is_resumed", f_reused<true>, no_args(), nullptr, Type::kBool, kL5S, "bool"},
    {"ssl_bc_use_keysize", f_keysize<false, true>, no_args(), nullptr, Type::kSint, kL5S, "int"},
    {"ssl_bc_alg_keysize", f_keysize<true, true>, no_args(), nullptr, Type::kSint, kL5S, "int"},
};

}  // namespace

std::span<const FetchDef> ssl_fetches() { return kFetches; }

}  // namespace sluice::sample::tables
