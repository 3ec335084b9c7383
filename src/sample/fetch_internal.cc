// Internal-state fetches (HAProxy's section 7.3.2): constants, variables, the process, the
// proxies and servers around the stream (through Env), dates, random numbers and UUIDs.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "base/host.h"
#include "http/http.h"
#include "sample/tables.h"
#include "sample/var_read.h"

namespace sluice::sample::tables {

namespace {

using PS = Env::ProxyStat;
using Q = Env::Query;
using TQ = Env::TextQuery;

// ---- constants ------------------------------------------------------------------------------

bool f_always_true(const Arg*, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::boolean(true);
  return true;
}

bool f_always_false(const Arg*, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::boolean(false);
  return true;
}

// A string argument left out is an empty string (`str` alone gives ""), as HAProxy's are.
bool f_str(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::string(a[0].str, kConst);
  return true;
}

bool f_int(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::integer(a[0].sint);
  return true;
}

// bool(<str>): "true", "false" (any case), "1" or "0"; the value lands in args[0].sint.
std::string check_bool(Arg* a, const ParseCtx&) {
  std::string_view s = a[0].str;
  if (http::iequals(s, "true") || s == "1") a[0].sint = 1;
  else if (http::iequals(s, "false") || s == "0") a[0].sint = 0;
  else return "Expects 'true', 'false', '0' or '1'";
  return {};
}

bool f_bool(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::boolean(a[0].sint != 0);
  return true;
}

int hex_val(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// bin(<hex>): decoded once, into args[0].str.
std::string check_bin(Arg* a, const ParseCtx&) {
  const std::string& h = a[0].str;
  // HAProxy's own text when the argument is empty: it prints a missing message.
  if (h.empty()) return "(null)";
  if (h.size() % 2) return "an even number of hex digit is expected";
  std::string bytes;
  for (std::size_t i = 0; i < h.size(); i += 2) {
    int hi = hex_val(h[i]), lo = hex_val(h[i + 1]);
    if (hi < 0) return std::string("an hex digit is expected (found '") + h[i] + "')";
    if (lo < 0) return std::string("an hex digit is expected (found '") + h[i + 1] + "')";
    bytes += static_cast<char>(hi << 4 | lo);
  }
  a[0].str = std::move(bytes);
  return {};
}

bool f_bin(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::string(a[0].str, kConst);
  out.type = Type::kBin;
  return true;
}

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// meth(<method>): a token; empty is accepted (and is an empty "other" method).
std::string check_meth(Arg* a, const ParseCtx&) {
  for (char c : a[0].str)
    if (!is_tchar(c)) return "expects valid method.";
  return {};
}

bool f_meth(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample{};
  out.type = Type::kMeth;
  out.flags = kConst;
  out.str = a[0].str;
  out.sint = static_cast<int64_t>(method_of(a[0].str));
  return true;
}

bool f_ipv4(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample{};
  out.type = Type::kIpv4;
  out.v4 = a[0].v4;
  return true;
}

bool f_ipv6(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample{};
  out.type = Type::kIpv6;
  out.v6 = a[0].v6;
  return true;
}

// var(<name>[,<default>])
bool f_var(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  if (read_var(a[0].var, ctx, out)) return true;
  if (a[1].given) {
    out = Sample::string(a[1].str, kConst);
    return true;
  }
  return false;
}

// ---- the process ----------------------------------------------------------------------------

bool f_env(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  if (a[0].str.empty()) return false;
  const char* v = std::getenv(a[0].str.c_str());
  if (!v) return false;
  out = Sample::string(v);
  return true;
}

bool f_hostname(const Arg*, Sample& out, const Ctx&, FetchIter&) {
  static const std::string name = base::host_name();
  out = Sample::string(name, kConst);
  return true;
}

// sluice runs one process: nbproc and proc are 1, as in HAProxy since 2.5.
bool f_one(const Arg*, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::integer(1);
  return true;
}

bool f_pid(const Arg*, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::integer(getpid());
  return true;
}

bool f_thread(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::integer(ctx.env->thread_id());
  return true;
}

// One thread group unless the Env says otherwise: group 0, as HAProxy reports it.
bool f_tgroup(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t v = 0;
  ctx.env->query(Q::kThreadGroup, &v);
  out = Sample::integer(v);
  return true;
}

bool f_stopping(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::boolean(ctx.env->stopping());
  return true;
}

// An integer the Env knows: Env::query(Q).
template <Q kWhat>
bool f_query(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t v = 0;
  if (!ctx.env->query(kWhat, &v)) return false;
  out = Sample::integer(v);
  return true;
}

template <Q kWhat>
bool f_query_bool(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t v = 0;
  if (!ctx.env->query(kWhat, &v)) return false;
  out = Sample::boolean(v != 0);
  return true;
}

// A text the Env knows: Env::text(TQ).
template <TQ kWhat>
bool f_text(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view v;
  if (!ctx.env->text(kWhat, &v)) return false;
  out = Sample::string(v);
  return true;
}

// cpu_ns_avg, lat_ns_avg: the total over the task's calls (0 without calls).
template <Q kTotal>
bool f_avg_per_call(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t tot = 0, calls = 0;
  if (!ctx.env->query(kTotal, &tot) || !ctx.env->query(Q::kCpuCalls, &calls)) return false;
  out = Sample::integer(calls > 0 ? tot / calls : 0);
  return true;
}

// ---- proxies and servers --------------------------------------------------------------------

// Backend and frontend arguments are names; left out, the current proxy (an empty name).
// Names given as arguments must exist, where the parse context can tell. HAProxy reports
// these when it resolves arguments, after parsing: "unable to find backend 'x' ...".
std::string check_backend(Arg* a, const ParseCtx& pc) {
  if (a[0].given && !a[0].str.empty() && pc.backend_exists &&
      !pc.backend_exists(pc.self, a[0].str))
    return "unable to find backend '" + a[0].str + "'";
  return {};
}

std::string check_frontend(Arg* a, const ParseCtx& pc) {
  if (a[0].given && !a[0].str.empty() && pc.frontend_exists &&
      !pc.frontend_exists(pc.self, a[0].str))
    return "unable to find frontend '" + a[0].str + "'";
  return {};
}

void split_server(const Arg& a, std::string_view* be, std::string_view* srv);

std::string check_server(Arg* a, const ParseCtx& pc) {
  std::string_view be, srv;
  split_server(a[0], &be, &srv);
  if (srv.empty()) return "missing server name";
  if (!be.empty() && pc.backend_exists && !pc.backend_exists(pc.self, be))
    return "unable to find backend '" + std::string(be) + "'";
  if (pc.server_exists && !pc.server_exists(pc.self, be, srv)) {
    std::string err = "unable to find server '" + std::string(srv) + "'";
    if (!be.empty()) err += " in proxy '" + std::string(be) + "'";
    return err;
  }
  return {};
}

template <PS kWhat>
bool f_proxy_stat(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t v = 0;
  if (!ctx.env->proxy_stat(kWhat, a[0].str, {}, &v)) return false;
  out = Sample::integer(v);
  return true;
}

// `[<backend>/]<server>`: the backend's name and the server's.
void split_server(const Arg& a, std::string_view* be, std::string_view* srv) {
  std::string_view s = a.str;
  auto slash = s.find('/');
  if (slash == std::string_view::npos) {
    *be = {};
    *srv = s;
  } else {
    *be = s.substr(0, slash);
    *srv = s.substr(slash + 1);
  }
}

template <PS kWhat>
bool f_srv_stat(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view be, srv;
  split_server(a[0], &be, &srv);
  int64_t v = 0;
  if (!ctx.env->proxy_stat(kWhat, be, srv, &v)) return false;
  if (kWhat == PS::kSrvIsUp) out = Sample::boolean(v != 0);
  else out = Sample::integer(v);
  return true;
}

bool f_nbsrv(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  int v = ctx.env->nbsrv(a[0].str);
  if (v < 0) return false;
  out = Sample::integer(v);
  return true;
}

bool f_be_conn(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  int v = ctx.env->be_conn(a[0].str);
  if (v < 0) return false;
  out = Sample::integer(v);
  return true;
}

bool f_fe_conn(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  int v = ctx.env->fe_conn(a[0].str);
  if (v < 0) return false;
  out = Sample::integer(v);
  return true;
}

bool f_srv_conn(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view be, srv;
  split_server(a[0], &be, &srv);
  int v = ctx.env->srv_conn(be, srv);
  if (v < 0) return false;
  out = Sample::integer(v);
  return true;
}

// ---- dates, random numbers, UUIDs -----------------------------------------------------------

uint64_t now_us(const Ctx& ctx) {
  if (ctx.now_us) return ctx.now_us;
  auto d = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

// A unit argument "s", "ms" or "us" (left out: seconds), kept in sint as the divisor from us.
std::string check_unit_at(Arg* a) {
  if (!a->given) {
    a->sint = 1000000;
    return {};
  }
  if (a->str == "s") a->sint = 1000000;
  else if (a->str == "ms") a->sint = 1000;
  else if (a->str == "us") a->sint = 1;
  else return "expects 's', 'ms' or 'us', got '" + a->str + "'";
  return {};
}

// date([<offset>],[<unit>]): the offset is in the unit of the result.
std::string check_date(Arg* a, const ParseCtx&) { return check_unit_at(&a[1]); }

// acl(<names>): resolved now, in the ACLs declared so far by the proxy being parsed.
std::string check_acl(Arg* a, const ParseCtx&) {
  std::vector<std::string_view> names;
  for (int i = 0; i < kMaxArgs && a[i].given; ++i) names.push_back(a[i].str);
  const AclResolver* r = current_acl_resolver();
  if (!r) return fmt::format("ACL '{}' not found", names.empty() ? "" : names[0]);
  std::string err;
  auto call = r->resolve(names, &err);
  if (!call) return err;
  a[0].obj = std::move(call);
  return {};
}

bool f_acl(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::boolean(static_cast<const AclCall*>(a[0].obj.get())->eval(ctx));
  return true;
}

bool f_date(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t div = a[1].given ? a[1].sint : 1000000;
  out = Sample::integer(static_cast<int64_t>(now_us(ctx)) / div + a[0].sint);
  return true;
}

bool f_date_us(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::integer(static_cast<int64_t>(now_us(ctx) % 1000000));
  return true;
}

std::mt19937_64& rng() {
  thread_local std::mt19937_64 g{std::random_device{}()};
  return g;
}

// rand([<range>]): 32 random bits, or scaled to [0, range) by multiplying and keeping the
// high half, HAProxy's way (a negative range wraps as it does there).
bool f_rand(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  uint64_t r = rng()() >> 32;
  if (a[0].given) r = (r * static_cast<uint64_t>(a[0].sint)) >> 32;
  out = Sample::integer(static_cast<int64_t>(r));
  return true;
}

std::string check_uuid(Arg* a, const ParseCtx&) {
  if (!a[0].given) {
    a[0].sint = 4;
    return {};
  }
  if (a[0].sint != 4 && a[0].sint != 7)
    return "Unsupported UUID version: '" + a[0].str + "'";
  return {};
}

// uuid([4|7]): RFC 9562 text form, lower case. Version 7 starts with the Unix time in ms.
bool f_uuid(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  uint8_t b[16];
  uint64_t r1 = rng()(), r2 = rng()();
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<uint8_t>(r1 >> (8 * i));
    b[8 + i] = static_cast<uint8_t>(r2 >> (8 * i));
  }
  int version = a[0].given ? static_cast<int>(a[0].sint) : 4;
  if (version == 7) {
    uint64_t ms = now_us(ctx) / 1000;
    for (int i = 0; i < 6; ++i) b[i] = static_cast<uint8_t>(ms >> (8 * (5 - i)));
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | (version << 4));
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string& s = ctx.sc().next();
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += kHex[b[i] >> 4];
    s += kHex[b[i] & 15];
  }
  out = Sample::string(s);
  return true;
}

constexpr ArgType kBe = ArgType::kBackend;
constexpr ArgType kFe = ArgType::kFrontend;
constexpr ArgType kSrv = ArgType::kServer;
constexpr uint32_t kI = kUseInternal;

constexpr FetchDef kFetches[] = {
    // Constants and variables.
    {"always_false", f_always_false, no_args(), nullptr, Type::kBool, kI},
    {"always_true", f_always_true, no_args(), nullptr, Type::kBool, kI},
    {"bin", f_bin, args(1, ArgType::kStr), check_bin, Type::kBin, kI, "bin"},
    {"bool", f_bool, args(1, ArgType::kStr), check_bool, Type::kBool, kI, "bool"},
    {"int", f_int, args(1, ArgType::kSint), nullptr, Type::kSint, kI, "int"},
    {"ipv4", f_ipv4, args(1, ArgType::kIpv4), nullptr, Type::kIpv4, kI, "ip"},
    {"ipv6", f_ipv6, args(1, ArgType::kIpv6), nullptr, Type::kIpv6, kI, "ip"},
    {"meth", f_meth, args(1, ArgType::kStr), check_meth, Type::kMeth, kI, "meth"},
    {"str", f_str, args(1, ArgType::kStr), nullptr, Type::kStr, kI, "str"},
    {"var", f_var, args(1, ArgType::kVar, ArgType::kStr), nullptr, Type::kAny, kI},
    // The process.
    {"act_conn", f_query<Q::kActConn>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"cpu_calls", f_query<Q::kCpuCalls>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"cpu_ns_avg", f_avg_per_call<Q::kCpuNsTot>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"cpu_ns_tot", f_query<Q::kCpuNsTot>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"cpu_usage_grp", f_query<Q::kCpuUsageGrp>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"cpu_usage_proc", f_query<Q::kCpuUsageProc>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"cpu_usage_thr", f_query<Q::kCpuUsageThr>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"acl", f_acl, args(1, ArgType::kStr, ArgType::kStr, ArgType::kStr, ArgType::kStr, ArgType::kStr),
     check_acl, Type::kBool, kI, "bool"},
    {"date", f_date, args(0, ArgType::kSint, ArgType::kStr), check_date, Type::kSint, kI, "int"},
    {"date_us", f_date_us, no_args(), nullptr, Type::kSint, kI, "int"},
    {"env", f_env, args(1, ArgType::kStr), nullptr, Type::kStr, kI, "str"},
    {"hostname", f_hostname, no_args(), nullptr, Type::kStr, kI, "str"},
    {"last_entity", f_text<TQ::kLastEntity>, no_args(), nullptr, Type::kStr, kI, "str"},
    {"last_rule_file", f_text<TQ::kLastRuleFile>, no_args(), nullptr, Type::kStr, kI, "str"},
    {"last_rule_line", f_query<Q::kLastRuleLine>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"lat_ns_avg", f_avg_per_call<Q::kLatNsTot>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"lat_ns_tot", f_query<Q::kLatNsTot>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"nbproc", f_one, no_args(), nullptr, Type::kSint, kI, "int"},
    {"pid", f_pid, no_args(), nullptr, Type::kSint, kI, "int"},
    {"prio_class", f_query<Q::kPrioClass>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"prio_offset", f_query<Q::kPrioOffset>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"proc", f_one, no_args(), nullptr, Type::kSint, kI, "int"},
    {"rand", f_rand, args(0, ArgType::kSint), nullptr, Type::kSint, kI, "int"},
    {"stopping", f_stopping, no_args(), nullptr, Type::kBool, kI, "bool"},
    {"tgroup", f_tgroup, no_args(), nullptr, Type::kSint, kI, "int"},
    {"thread", f_thread, no_args(), nullptr, Type::kSint, kI, "int"},
    {"txn.conn_retries", f_query<Q::kConnRetries>, no_args(), nullptr, Type::kSint, kUseL4Srv,
     "int"},
    {"txn.id32", f_query<Q::kTxnId32>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"txn.redispatched", f_query_bool<Q::kRedispatched>, no_args(), nullptr, Type::kBool,
     kUseL4Srv, "bool"},
    {"txn.sess_term_state", f_text<TQ::kTermState>, no_args(), nullptr, Type::kStr, kI, "str"},
    {"uptime", f_query<Q::kUptime>, no_args(), nullptr, Type::kSint, kI, "int"},
    {"uuid", f_uuid, args(0, ArgType::kSint), check_uuid, Type::kStr, kI, "str"},
    // Proxies and servers.
    {"avg_queue", f_proxy_stat<PS::kAvgQueue>, args(0, kBe), check_backend, Type::kSint, kI, "int"},
    {"be_conn", f_be_conn, args(0, kBe), check_backend, Type::kSint, kI, "int"},
    {"be_conn_free", f_proxy_stat<PS::kBeConnFree>, args(0, kBe), check_backend, Type::kSint, kI,
     "int"},
    {"be_sess_rate", f_proxy_stat<PS::kBeSessRate>, args(0, kBe), check_backend, Type::kSint, kI,
     "int"},
    {"connslots", f_proxy_stat<PS::kConnSlots>, args(0, kBe), check_backend, Type::kSint, kI, "int"},
    {"fe_conn", f_fe_conn, args(0, kFe), check_frontend, Type::kSint, kI, "int"},
    {"fe_req_rate", f_proxy_stat<PS::kFeReqRate>, args(0, kFe), check_frontend, Type::kSint, kI, "int"},
    {"fe_sess_rate", f_proxy_stat<PS::kFeSessRate>, args(0, kFe), check_frontend, Type::kSint, kI,
     "int"},
    {"nbsrv", f_nbsrv, args(0, kBe), check_backend, Type::kSint, kI, "int"},
    {"queue", f_proxy_stat<PS::kQueue>, args(0, kBe), check_backend, Type::kSint, kI, "int"},
    {"srv_conn", f_srv_conn, args(1, kSrv), check_server, Type::kSint, kI, "int"},
    {"srv_conn_free", f_srv_stat<PS::kSrvConnFree>, args(1, kSrv), check_server, Type::kSint, kI,
     "int"},
    {"srv_is_up", f_srv_stat<PS::kSrvIsUp>, args(1, kSrv), check_server, Type::kBool, kI, "bool"},
    {"srv_iweight", f_srv_stat<PS::kSrvIweight>, args(1, kSrv), check_server, Type::kSint, kI, "int"},
    {"srv_queue", f_srv_stat<PS::kSrvQueue>, args(1, kSrv), check_server, Type::kSint, kI, "int"},
    {"srv_sess_rate", f_srv_stat<PS::kSrvSessRate>, args(1, kSrv), check_server, Type::kSint, kI,
     "int"},
    {"srv_uweight", f_srv_stat<PS::kSrvUweight>, args(1, kSrv), check_server, Type::kSint, kI, "int"},
    {"srv_weight", f_srv_stat<PS::kSrvWeight>, args(1, kSrv), check_server, Type::kSint, kI, "int"},
};

}  // namespace

std::span<const FetchDef> internal_fetches() { return kFetches; }

}  // namespace sluice::sample::tables
