// Layer-4 fetches (HAProxy's section 7.3.3): addresses and ports of both connections, the
// kernel's TCP state of the sockets (tcp_info), names and ids of the proxies and of the
// listener, connection errors and timeouts (through Env); and the stream's timers and byte
// counts of sections 7.3.2 and 7.3.6 (txn.timer.*, req.timer.*, res.timer.*, request_date,
// bytes_in/out), which Env answers with the log's numbers.
//
// src/dst and fc_src/fc_dst read the same addresses: a PROXY protocol header's addresses are
// the connection's (as in HAProxy, for both); they differ in HAProxy once `http-request
// set-src`/`set-dst` replaced the stream's, which sluice does not tell apart yet.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "net/socket.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

using Q = Env::Query;
using TQ = Env::TextQuery;

// ---- addresses ------------------------------------------------------------------------------

// An IPv4 or IPv6 sample from a socket address; nothing for UNIX sockets.
bool addr_sample(const net::SocketAddress* a, Sample& out) {
  if (!a) return false;
  out = Sample{};
  if (a->family() == AF_INET) {
    out.type = Type::kIpv4;
    out.v4 = reinterpret_cast<const sockaddr_in*>(a->sa())->sin_addr;
    return true;
  }
  if (a->family() == AF_INET6) {
    out.type = Type::kIpv6;
    out.v6 = reinterpret_cast<const sockaddr_in6*>(a->sa())->sin6_addr;
    return true;
  }
  return false;
}

bool port_sample(const net::SocketAddress* a, Sample& out) {
  if (!a || (a->family() != AF_INET && a->family() != AF_INET6)) return false;
  out = Sample::integer(a->port());
  return true;
}

// Whether the address is one of this host's: it can be bound (port 0). A UNIX socket is
// local, as HAProxy answers.
bool is_local(const net::SocketAddress* a, Sample& out) {
  if (!a) return false;
  if (a->family() == AF_UNIX) {
    out = Sample::boolean(true);
    return true;
  }
  if (a->family() != AF_INET && a->family() != AF_INET6) return false;
  int fd = socket(a->family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  net::SocketAddress probe = *a;
  probe.set_port(0);
  bool local = bind(fd, probe.sa(), probe.len) == 0 || errno == EADDRINUSE;
  close(fd);
  out = Sample::boolean(local);
  return true;
}

bool f_src(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return addr_sample(ctx.src, out);
}
bool f_dst(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return addr_sample(ctx.dst, out);
}
bool f_src_port(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return port_sample(ctx.src, out);
}
// The local address when known, else the port the caller noted.
bool f_dst_port(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.dst) return port_sample(ctx.dst, out);
  if (!ctx.dst_port) return false;
  out = Sample::integer(ctx.dst_port);
  return true;
}
bool f_src_is_local(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return is_local(ctx.src, out);
}
bool f_dst_is_local(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return is_local(ctx.dst, out);
}
// The server connection's local address: the one its leg kept, else the kernel's answer.
const net::SocketAddress* server_source(const Ctx& ctx, net::SocketAddress& buf) {
  if (ctx.srv_src) return ctx.srv_src;
  if (ctx.srv_fd >= 0 && net::local_address(ctx.srv_fd, &buf)) return &buf;
  return nullptr;
}
bool f_bc_src(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  net::SocketAddress buf;
  return addr_sample(server_source(ctx, buf), out);
}
bool f_bc_dst(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return addr_sample(ctx.srv_dst, out);
}
bool f_bc_src_port(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  net::SocketAddress buf;
  return port_sample(server_source(ctx, buf), out);
}
bool f_bc_dst_port(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return port_sample(ctx.srv_dst, out);
}

// ---- tcp_info -------------------------------------------------------------------------------

enum class TcpField : uint8_t { kRtt, kRttVar, kUnacked, kSacked, kRetrans, kFackets, kLost,
                                kReordering };

// One field of the socket's TCP_INFO; false when `fd` is not a TCP socket.
bool tcp_info_field(int fd, TcpField f, int64_t* out) {
  if (fd < 0) return false;
  tcp_info ti;
  std::memset(&ti, 0, sizeof(ti));
  socklen_t len = sizeof(ti);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return false;
  switch (f) {
    case TcpField::kRtt: *out = ti.tcpi_rtt; break;
    case TcpField::kRttVar: *out = ti.tcpi_rttvar; break;
    case TcpField::kUnacked: *out = ti.tcpi_unacked; break;
    case TcpField::kSacked: *out = ti.tcpi_sacked; break;
    case TcpField::kRetrans: *out = ti.tcpi_retrans; break;
    case TcpField::kFackets: *out = ti.tcpi_fackets; break;
    case TcpField::kLost: *out = ti.tcpi_lost; break;
    case TcpField::kReordering: *out = ti.tcpi_reordering; break;
  }
  return true;
}

// fc_rtt([unit]) and the like: "ms" (the default) or "us"; sint is 1 for us, 1000 for ms.
std::string check_rtt_unit(Arg* a, const ParseCtx&) {
  if (!a[0].given) a[0].sint = 1000;
  else if (a[0].str == "ms") a[0].sint = 1000;
  else if (a[0].str == "us") a[0].sint = 1;
  else return "expects 'us' or 'ms', got '" + a[0].str + "'";
  return {};
}

// The kernel keeps times in microseconds.
template <TcpField kField, bool kServerSide>
bool f_tcp_time(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t v = 0;
  if (!tcp_info_field(kServerSide ? ctx.srv_fd : ctx.cli_fd, kField, &v)) return false;
  int64_t div = a[0].given ? a[0].sint : 1000;
  out = Sample::integer(v / (div > 0 ? div : 1000));
  return true;
}

// Counters take no unit; HAProxy accepts one with a warning ("no argument supported for
// 'fc_*' sample expressions returning counters") and ignores it, as sluice does.
template <TcpField kField>
bool f_tcp_count(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t v = 0;
  if (!tcp_info_field(ctx.cli_fd, kField, &v)) return false;
  out = Sample::integer(v);
  return true;
}

// ---- Env: names, ids, errors, timeouts ------------------------------------------------------

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

template <TQ kWhat>
bool f_text(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view v;
  if (!ctx.env->text(kWhat, &v)) return false;
  out = Sample::string(v);
  return true;
}

// fc_http_major: the Env's (the multiplexer's), else the request line's version.
bool f_fc_http_major(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t v = 0;
  if (!ctx.env->query(Q::kFcHttpMajor, &v)) {
    std::string_view ver = ctx.req.version;
    if (!ctx.has(kUseHttpReqLine) || ver.size() < 6 || ver.substr(0, 5) != "HTTP/" ||
        ver[5] < '0' || ver[5] > '9')
      return false;
    v = ver[5] - '0';
  }
  out = Sample::integer(v);
  return true;
}

bool name_sample(std::string_view name, Sample& out) {
  if (name.empty()) return false;
  out = Sample::string(name);
  return true;
}

bool id_sample(int id, Sample& out) {
  if (id <= 0) return false;
  out = Sample::integer(id);
  return true;
}

bool f_fe_name(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return name_sample(ctx.env->frontend_name(), out);
}
bool f_fe_id(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return id_sample(ctx.env->frontend_id(), out);
}
bool f_be_name(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return name_sample(ctx.env->backend_name(), out);
}
bool f_be_id(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return id_sample(ctx.env->backend_id(), out);
}
bool f_srv_name(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return name_sample(ctx.env->server_name(), out);
}
bool f_srv_id(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return id_sample(ctx.env->server_id(), out);
}
// A listener without a `name` gives no so_name.
bool f_so_name(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return name_sample(ctx.env->listener_name(), out);
}
bool f_so_id(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return id_sample(ctx.env->listener_id(), out);
}

// accept_date([unit]): "s" (default), "ms" or "us".
std::string check_accept_unit(Arg* a, const ParseCtx&) {
  if (!a[0].given) a[0].sint = 1000000;
  else if (a[0].str == "s") a[0].sint = 1000000;
  else if (a[0].str == "ms") a[0].sint = 1000;
  else if (a[0].str == "us") a[0].sint = 1;
  else return "expects 's', 'ms' or 'us', got '" + a[0].str + "'";
  return {};
}

bool f_accept_date(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t us = 0;
  if (!ctx.env->query(Q::kAcceptDateUs, &us)) return false;
  int64_t div = a[0].given && a[0].sint > 0 ? a[0].sint : 1000000;
  out = Sample::integer(us / div);
  return true;
}

// request_date([unit]): the request's first byte (TCP: the accept), units as accept_date's.
bool f_request_date(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t us = 0;
  if (!ctx.env->query(Q::kRequestDateUs, &us)) return false;
  int64_t div = a[0].given && a[0].sint > 0 ? a[0].sint : 1000000;
  out = Sample::integer(us / div);
  return true;
}

// ---- PROXY protocol -------------------------------------------------------------------------
// What the connection's PROXY protocol header carried (bind ... accept-proxy), through Env.

bool f_fc_rcvd_proxy(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::boolean(ctx.env->proxy_header() != nullptr);
  return true;
}

// A v2 TLV's value: fc_pp_authority (0x02), fc_pp_unique_id (0x05), fc_pp_tlv(<type>).
template <int Type>
bool f_pp_tlv(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  const net::pp::Header* h = ctx.env->proxy_header();
  if (!h) return false;
  const net::pp::Tlv* t = h->tlv(static_cast<uint8_t>(Type >= 0 ? Type : a[0].sint));
  if (!t) return false;
  out = Sample::string(t->value);
  return true;
}

// fc_pp_tlv(<type>): a number 0..255 (decimal or 0x hex) or a type's name, any case. The
// number lands in sint.
std::string check_pp_tlv(Arg* a, const ParseCtx&) {
  static constexpr struct {
    std::string_view name;
    int type;
  } kNames[] = {
      {"ALPN", 0x01},        {"AUTHORITY", 0x02},   {"CRC32C", 0x03},     {"NOOP", 0x04},
      {"UNIQUE_ID", 0x05},   {"SSL", 0x20},         {"SSL_VERSION", 0x21}, {"SSL_CN", 0x22},
      {"SSL_CIPHER", 0x23},  {"SSL_SIG_ALG", 0x24}, {"SSL_KEY_ALG", 0x25}, {"NETNS", 0x30},
  };
  const std::string& s = a[0].str;
  if (!a[0].given || s.empty()) return {};
  for (const auto& n : kNames) {
    if (n.name.size() != s.size()) continue;
    bool eq = true;
    for (std::size_t i = 0; i < s.size() && eq; ++i) {
      char c = s[i];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      eq = c == n.name[i];
    }
    if (eq) {
      a[0].sint = n.type;
      return {};
    }
  }
  const char* p = s.c_str();
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(p, &end, 0);
  if (end == p || *end != 0 || errno) return "Could not convert type '" + s + "'";
  if (v < 0 || v > 255) return "Invalid TLV Type '" + s + "'";
  a[0].sint = v;
  return {};
}

constexpr uint32_t kL4 = kUseL4Cli;
constexpr uint32_t kBe = kUseBackend;
// The server itself ("server"), its connection's addresses and state ("server address") and
// its multiplexer ("server-side connection"), as HAProxy's messages name them.
constexpr uint32_t kSrv = kUseServer;
constexpr uint32_t kSrvAddr = kUseL4Srv;
constexpr uint32_t kSrvConn = kUseL5Srv;
constexpr ArgSpec kUnit = args(0, ArgType::kStr);
template <TcpField F>
constexpr FetchFn kCliTime = f_tcp_time<F, false>;
template <TcpField F>
constexpr FetchFn kSrvTime = f_tcp_time<F, true>;

constexpr FetchDef kFetches[] = {
    // The client connection.
    {"src", f_src, no_args(), nullptr, Type::kIpv4, kL4, "ip"},
    {"src_port", f_src_port, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"src_is_local", f_src_is_local, no_args(), nullptr, Type::kBool, kL4, "bool"},
    {"dst", f_dst, no_args(), nullptr, Type::kIpv4, kL4, "ip"},
    {"dst_port", f_dst_port, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"dst_is_local", f_dst_is_local, no_args(), nullptr, Type::kBool, kL4, "bool"},
    {"dst_conn", f_query<Q::kDstConn>, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fc_src", f_src, no_args(), nullptr, Type::kIpv4, kL4, "ip"},
    {"fc_src_port", f_src_port, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fc_src_is_local", f_src_is_local, no_args(), nullptr, Type::kBool, kL4, "bool"},
    {"fc_dst", f_dst, no_args(), nullptr, Type::kIpv4, kL4, "ip"},
    {"fc_dst_port", f_dst_port, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fc_dst_is_local", f_dst_is_local, no_args(), nullptr, Type::kBool, kL4, "bool"},
    {"fc_rtt", kCliTime<TcpField::kRtt>, kUnit, check_rtt_unit, Type::kSint, kL4, "int"},
    {"fc_rttvar", kCliTime<TcpField::kRttVar>, kUnit, check_rtt_unit, Type::kSint, kL4, "int"},
    {"fc_unacked", f_tcp_count<TcpField::kUnacked>, kUnit, nullptr, Type::kSint, kL4, "int"},
    {"fc_sacked", f_tcp_count<TcpField::kSacked>, kUnit, nullptr, Type::kSint, kL4, "int"},
    {"fc_retrans", f_tcp_count<TcpField::kRetrans>, kUnit, nullptr, Type::kSint, kL4, "int"},
    {"fc_fackets", f_tcp_count<TcpField::kFackets>, kUnit, nullptr, Type::kSint, kL4, "int"},
    {"fc_lost", f_tcp_count<TcpField::kLost>, kUnit, nullptr, Type::kSint, kL4, "int"},
    {"fc_reordering", f_tcp_count<TcpField::kReordering>, kUnit, nullptr, Type::kSint, kL4,
     "int"},
    {"fc_err", f_query<Q::kFcErr>, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fc_err_str", f_text<TQ::kFcErrStr>, no_args(), nullptr, Type::kStr, kL4, "str"},
    {"fc_err_name", f_text<TQ::kFcErrName>, no_args(), nullptr, Type::kStr, kL4, "str"},
    {"fc_http_major", f_fc_http_major, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fc_glitches", f_query<Q::kFcGlitches>, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fc_nb_streams", f_query<Q::kFcNbStreams>, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fc_settings_streams_limit", f_query<Q::kFcStreamsLimit>, no_args(), nullptr, Type::kSint,
     kL4, "int"},
    {"fc.timer.handshake", f_query<Q::kFcHandshakeMs>, no_args(), nullptr, Type::kSint, kL4,
     "int"},
    {"fc.timer.total", f_query<Q::kFcTotalMs>, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"accept_date", f_accept_date, kUnit, check_accept_unit, Type::kSint, kL4, "int"},
    {"fc_rcvd_proxy", f_fc_rcvd_proxy, no_args(), nullptr, Type::kBool, kL4, "bool"},
    {"fc_pp_authority", f_pp_tlv<net::pp::kTlvAuthority>, no_args(), nullptr, Type::kStr, kL4, "str"},
    {"fc_pp_unique_id", f_pp_tlv<net::pp::kTlvUniqueId>, no_args(), nullptr, Type::kStr, kL4, "str"},
    {"fc_pp_tlv", f_pp_tlv<-1>, args(1, ArgType::kStr), check_pp_tlv, Type::kStr, kL4, "str"},
    // The frontend and the listener.
    {"fe_name", f_fe_name, no_args(), nullptr, Type::kStr, kL4, "str"},
    {"fe_id", f_fe_id, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fe_defbe", f_text<TQ::kDefaultBackend>, no_args(), nullptr, Type::kStr, kL4, "str"},
    {"so_name", f_so_name, no_args(), nullptr, Type::kStr, kL4, "str"},
    {"so_id", f_so_id, no_args(), nullptr, Type::kSint, kL4, "int"},
    {"fe_client_timeout", f_query<Q::kFeClientTimeout>, no_args(), nullptr, Type::kSint, kL4,
     "int"},
    {"fe_tarpit_timeout", f_query<Q::kFeTarpitTimeout>, no_args(), nullptr, Type::kSint, kL4,
     "int"},
    {"cur_client_timeout", f_query<Q::kCurClientTimeout>, no_args(), nullptr, Type::kSint, kL4,
     "int"},
    {"cur_tarpit_timeout", f_query<Q::kCurTarpitTimeout>, no_args(), nullptr, Type::kSint, kL4,
     "int"},
    // The backend.
    {"be_name", f_be_name, no_args(), nullptr, Type::kStr, kBe, "str"},
    {"be_id", f_be_id, no_args(), nullptr, Type::kSint, kBe, "int"},
    {"be_server_timeout", f_query<Q::kBeServerTimeout>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    {"be_tunnel_timeout", f_query<Q::kBeTunnelTimeout>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    {"be_connect_timeout", f_query<Q::kBeConnectTimeout>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    {"be_queue_timeout", f_query<Q::kBeQueueTimeout>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    {"be_tarpit_timeout", f_query<Q::kBeTarpitTimeout>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    {"be_max_retries", f_query<Q::kBeMaxRetries>, no_args(), nullptr, Type::kSint, kBe, "int"},
    {"cur_server_timeout", f_query<Q::kCurServerTimeout>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    {"cur_tunnel_timeout", f_query<Q::kCurTunnelTimeout>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    {"cur_connect_timeout", f_query<Q::kCurConnectTimeout>, no_args(), nullptr, Type::kSint,
     kBe, "int"},
    {"cur_queue_timeout", f_query<Q::kCurQueueTimeout>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    {"cur_max_retries", f_query<Q::kCurMaxRetries>, no_args(), nullptr, Type::kSint, kBe,
     "int"},
    // The server and its connection.
    {"srv_name", f_srv_name, no_args(), nullptr, Type::kStr, kSrv, "str"},
    {"srv_id", f_srv_id, no_args(), nullptr, Type::kSint, kSrv, "int"},
    {"bc_src", f_bc_src, no_args(), nullptr, Type::kIpv4, kSrvAddr, "ip"},
    {"bc_src_port", f_bc_src_port, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    {"bc_dst", f_bc_dst, no_args(), nullptr, Type::kIpv4, kSrvAddr, "ip"},
    {"bc_dst_port", f_bc_dst_port, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    // HAProxy lets bc_rtt/bc_rttvar run anywhere (nothing without a server connection).
    {"bc_rtt", kSrvTime<TcpField::kRtt>, kUnit, check_rtt_unit, Type::kSint, kL4, "int"},
    {"bc_rttvar", kSrvTime<TcpField::kRttVar>, kUnit, check_rtt_unit, Type::kSint, kL4, "int"},
    {"bc_err", f_query<Q::kBcErr>, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    {"bc_err_str", f_text<TQ::kBcErrStr>, no_args(), nullptr, Type::kStr, kSrvAddr, "str"},
    {"bc_err_name", f_text<TQ::kBcErrName>, no_args(), nullptr, Type::kStr, kSrvAddr, "str"},
    {"bc_http_major", f_query<Q::kBcHttpMajor>, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    {"bc_glitches", f_query<Q::kBcGlitches>, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    {"bc_nb_streams", f_query<Q::kBcNbStreams>, no_args(), nullptr, Type::kSint, kSrvConn, "int"},
    {"bc_settings_streams_limit", f_query<Q::kBcStreamsLimit>, no_args(), nullptr, Type::kSint,
     kSrvConn, "int"},
    {"bc_reused", f_query_bool<Q::kBcReused>, no_args(), nullptr, Type::kBool, kSrvAddr, "bool"},
    {"bc_srv_queue", f_query<Q::kBcSrvQueue>, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    {"bc_be_queue", f_query<Q::kBcBeQueue>, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    {"bc.timer.connect", f_query<Q::kBcConnectMs>, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    // The transaction's timers and byte counts (HAProxy's sections 7.3.2 and 7.3.6), where
    // HAProxy lets them stand: the numbers of the log's %Ta %Tu %Ti %Tq %TR %Tw %Tr %Td %U %B.
    {"txn.timer.total", f_query<Q::kTxnTotalMs>, no_args(), nullptr, Type::kSint, kUseTxnStats,
     "int"},
    {"txn.timer.user", f_query<Q::kTxnUserMs>, no_args(), nullptr, Type::kSint, kUseTxnStats,
     "int"},
    {"req.timer.idle", f_query<Q::kReqIdleMs>, no_args(), nullptr, Type::kSint, kUseHttpReq,
     "int"},
    {"req.timer.tq", f_query<Q::kReqTqMs>, no_args(), nullptr, Type::kSint, kUseHttpReq, "int"},
    {"req.timer.hdr", f_query<Q::kReqHdrMs>, no_args(), nullptr, Type::kSint, kUseHttpReq, "int"},
    {"req.timer.queue", f_query<Q::kReqQueueMs>, no_args(), nullptr, Type::kSint, kSrvAddr, "int"},
    {"res.timer.hdr", f_query<Q::kResHdrMs>, no_args(), nullptr, Type::kSint, kUseHttpRes, "int"},
    {"res.timer.data", f_query<Q::kResDataMs>, no_args(), nullptr, Type::kSint, kUseResStats,
     "int"},
    {"request_date", f_request_date, kUnit, check_accept_unit, Type::kSint, kUseHttpReqStart,
     "int"},
    {"bytes_in", f_query<Q::kReqBytesIn>, no_args(), nullptr, Type::kSint, kUseReqStats, "int"},
    {"req.bytes_in", f_query<Q::kReqBytesIn>, no_args(), nullptr, Type::kSint, kUseReqStats,
     "int"},
    {"req.bytes_out", f_query<Q::kReqBytesOut>, no_args(), nullptr, Type::kSint, kUseReqStats,
     "int"},
    {"bytes_out", f_query<Q::kResBytesIn>, no_args(), nullptr, Type::kSint, kUseResStats, "int"},
    {"res.bytes_in", f_query<Q::kResBytesIn>, no_args(), nullptr, Type::kSint, kUseResStats,
     "int"},
    {"res.bytes_out", f_query<Q::kResBytesOut>, no_args(), nullptr, Type::kSint, kUseResStats,
     "int"},
};

}  // namespace

std::span<const FetchDef> l4_fetches() { return kFetches; }

}  // namespace sluice::sample::tables
