#pragma once
// What a sample expression sees when it runs: the connection, the buffered bytes, the HTTP
// messages, the variables, and the process around them. The caller (a TCP session, an HTTP
// transaction, a log line) fills what it has and marks it in `avail`; a fetch whose data is
// not there fails (no sample), as HAProxy's do.
//
// Parse-time counterpart: each fetch declares the Use bits it reads, each place that takes an
// expression (a rule set, a log format) declares the bits it offers, and the parser refuses a
// fetch that needs one the place never has (sample/expr.h).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"
#include "net/address.h"
#include "net/proxy_protocol.h"
#include "sample/sample.h"

struct ssl_st;

namespace sluice::sample {

class Captures;
class Vars;
class VarStore;

// What a fetch reads (HAProxy's SMP_USE_* grouped as its messages name them).
enum Use : uint32_t {
  kUseInternal = 1u << 0,     // "internal state": constants, the process, variables
  kUseL4Cli = 1u << 1,        // "L4 client session": addresses, ports, the socket
  kUseL5Cli = 1u << 2,        // "L5 client session": the TLS layer
  kUseReqBuf = 1u << 3,       // "request buffer": the client's bytes (req.len, req.payload)
  kUseHttpReq = 1u << 4,      // "HTTP request headers"
  kUseHttpReqBody = 1u << 5,  // "HTTP request body"
  kUseBackend = 1u << 6,      // "backend"
  kUseServer = 1u << 7,       // "server"
  kUseResBuf = 1u << 8,       // "response buffer"
  kUseHttpRes = 1u << 9,      // "HTTP response headers"
  kUseHttpResBody = 1u << 10, // "HTTP response body"
  kUseTxnEnd = 1u << 11,      // "transaction end": timers and sizes known once it is over
  kUseReqStats = 1u << 12,    // "request buffer statistics": the request's byte counts
  kUseResStats = 1u << 13,    // "response buffer statistics": the response's byte counts
                              // and its data time
  kUseTxnStats = 1u << 14,    // "transaction statistics": the transaction's total times
  kUseHttpReqStart = 1u << 15,   // "HTTP request": its date (request_date), also known to
                                 // tcp-request content rules
  // "HTTP request headers", the part kept once the request is forwarded (HAProxy's
  // SMP_USE_HRQHP): its method and version, the captures, the unique id. Response rules and
  // log formats have it; the headers, URI and body themselves (kUseHttpReq) they do not.
  kUseHttpReqLine = 1u << 16,
  // Where kUseServer is, so are these (HAProxy's SMP_USE_L4SRV, L5SRV): the server
  // connection's addresses, timers and state ("server address"), its multiplexer
  // ("server-side connection").
  kUseL4Srv = 1u << 17,
  kUseL5Srv = 1u << 18,
  // Where kUseHttpRes is, so is this (SMP_USE_HRSHP, "HTTP response"): the status and version.
  kUseHttpResLine = 1u << 19,
};
// The name HAProxy's messages give the first bit of `bits`.
std::string_view use_name(uint32_t bits);

// What each place offers (parse time) and, by convention, what its caller fills (run time).
// A backend's rules also have kUseBackend; response rules have the server's side as well.
constexpr uint32_t kAtTcpConnection = kUseInternal | kUseL4Cli;
constexpr uint32_t kAtTcpSession = kAtTcpConnection | kUseL5Cli;
constexpr uint32_t kAtTcpContent =
    kAtTcpSession | kUseReqBuf | kUseReqStats | kUseTxnStats | kUseHttpReqStart;
constexpr uint32_t kAtHttpRequest =
    kAtTcpContent | kUseHttpReq | kUseHttpReqLine | kUseHttpReqBody;
constexpr uint32_t kAtHttpResponse = (kAtHttpRequest & ~(kUseHttpReq | kUseHttpReqBody)) |
                                     kUseBackend | kUseServer | kUseL4Srv | kUseL5Srv |
                                     kUseResBuf | kUseHttpRes | kUseHttpResLine |
                                     kUseHttpResBody | kUseResStats;
constexpr uint32_t kAtTcpResponse = kAtTcpContent | kUseBackend | kUseServer | kUseL4Srv |
                                    kUseL5Srv | kUseResBuf |
                                    kUseResStats;
constexpr uint32_t kAtLog = kAtHttpResponse | kUseTxnEnd;
// Every bit: where only the syntax is checked (an ACL's definition, a default parse context);
// the place that uses the expression checks what it offers.
constexpr uint32_t kAtAny = kAtHttpRequest | kAtHttpResponse | kUseTxnEnd;

// One HTTP message as the fetches read it.
struct HttpMsg {
  std::string_view method;    // requests
  std::string_view target;    // requests: as received (origin-form or absolute)
  std::string_view version;   // "HTTP/1.1"; empty when unknown
  // Requests: the method and target of the request line as received, before any rule
  // rewrote them (capture.req.method, capture.req.uri); empty: `method` and `target` are.
  std::string_view line_method;
  std::string_view line_target;
  int status = 0;             // responses
  std::string_view reason;    // responses
  const std::vector<http::Header>* headers = nullptr;
  std::string_view body;      // what is buffered of the body (req.body, res.body)
  bool body_final = true;     // the whole body is in `body`
};

// The process and the proxies around an evaluation, for the fetches that ask about them
// (be_name, nbsrv(), srv_conn, stopping, ...). Implemented by the proxy layer; each call is
// rare next to the message fetches, so a virtual call is fine. Defaults answer "unknown".
class Env {
 public:
  virtual ~Env() = default;
  virtual std::string_view frontend_name() const { return {}; }
  virtual int frontend_id() const { return 0; }
  virtual std::string_view backend_name() const { return {}; }
  virtual int backend_id() const { return 0; }
  virtual std::string_view server_name() const { return {}; }
  virtual int server_id() const { return 0; }
  virtual std::string_view listener_name() const { return {}; }
  virtual int listener_id() const { return 0; }
  // Usable servers of the named backend (empty: the current one); -1 when there is none.
  virtual int nbsrv(std::string_view backend) const { return -1; }
  // Connections: of a backend, a frontend, a server ("backend/server"); -1 when unknown.
  virtual int be_conn(std::string_view backend) const { return -1; }
  virtual int fe_conn(std::string_view frontend) const { return -1; }
  virtual int srv_conn(std::string_view backend, std::string_view server) const { return -1; }
  virtual bool stopping() const { return false; }
  // Whether a frontend of that name exists (the fe_exists converter); -1 when unknown.
  virtual int frontend_exists(std::string_view frontend) const { return -1; }
  // The worker thread's number, from 0.
  virtual int thread_id() const { return 0; }
  // The client connection's TLS connection (bind ... ssl), null for a plain one.
  virtual ssl_st* client_tls() const { return nullptr; }
  // The server connection's (server ... ssl), null for a plain one or none yet.
  virtual ssl_st* server_tls() const { return nullptr; }

  // The rest of the integer state the fetches of HAProxy's sections 7.3.2 and 7.3.3 read
  // (fetch_internal.cc, fetch_l4.cc), one enumeration per question rather than one method
  // each. False: unknown here, and the fetch returns nothing.
  //
  // State of a proxy or of a server, by name: `proxy` empty is the current backend (for the
  // fe_* ones, the current frontend), `server` empty the current server.
  enum class ProxyStat : uint8_t {
    kAvgQueue,      // avg_queue: queued streams / usable servers, rounded up
    kQueue,         // queue: streams in the backend's and its servers' queues
    kConnSlots,     // connslots: free connection and queue slots, -1 when unlimited
    kBeConnFree,    // be_conn_free: free connection slots on usable servers, -1 unlimited
    kBeSessRate,    // be_sess_rate: sessions per second, last second
    kFeReqRate,     // fe_req_rate: HTTP requests per second
    kFeSessRate,    // fe_sess_rate: sessions per second
    kSrvConnFree,   // srv_conn_free: free connection slots of the server, -1 unlimited
    kSrvIsUp,       // srv_is_up: 1 when the server is up, 0 else
    kSrvQueue,      // srv_queue: streams in the server's queue
    kSrvSessRate,   // srv_sess_rate
    kSrvWeight,     // srv_weight: effective weight
    kSrvIweight,    // srv_iweight: initial weight
    kSrvUweight,    // srv_uweight: user weight
  };
  virtual bool proxy_stat(ProxyStat s, std::string_view proxy, std::string_view server,
                          int64_t* out) const {
    return false;
  }
  // State of the process, the connections and the current stream.
  enum class Query : uint8_t {
    kActConn,         // act_conn: connections being processed by the process
    kUptime,          // uptime: seconds since the process started
    kThreadGroup,     // tgroup: the thread's group
    kCpuUsageThr,     // cpu_usage_thr / _grp / _proc: percent of CPU used lately
    kCpuUsageGrp,
    kCpuUsageProc,
    kCpuCalls,        // cpu_calls: calls to the stream's task
    kCpuNsTot,        // cpu_ns_tot: CPU time spent in them, ns (0 unless profiled)
    kLatNsTot,        // lat_ns_tot: time they waited to run, ns (0 unless profiled)
    kPrioClass,       // prio_class, prio_offset: set-priority-class/-offset (0 when unset)
    kPrioOffset,
    kTxnId32,         // txn.id32: the transaction's 32-bit id
    kConnRetries,     // txn.conn_retries: connection retries to servers
    kRedispatched,    // txn.redispatched: 1 when redispatched to another server
    kLastRuleLine,    // last_rule_line: line of the last rule that ran
    kDstConn,         // dst_conn: connections on the listener that accepted this one
    kAcceptDateUs,    // accept_date: when the connection was accepted, us since the epoch
    kFcHandshakeMs,   // fc.timer.handshake: accept to handshake done, ms
    kFcTotalMs,       // fc.timer.total: the client connection's life so far, ms
    kBcConnectMs,     // bc.timer.connect: the server connection's set-up, ms
    kFcErr,           // fc_err / bc_err: HAProxy's connection error code (0: none)
    kBcErr,
    kFcHttpMajor,     // fc_http_major / bc_http_major: 1, 2 or 3 (HTTP mux), 0 else
    kBcHttpMajor,
    kFcGlitches,      // fc_glitches / bc_glitches: protocol glitches seen by the mux
    kBcGlitches,
    kFcNbStreams,     // fc_nb_streams / bc_nb_streams: streams open on the connection
    kBcNbStreams,
    kFcStreamsLimit,  // fc/bc_settings_streams_limit: the peer's max concurrent streams
    kBcStreamsLimit,
    kBcReused,        // bc_reused: 1 when the server connection was reused
    kBcSrvQueue,      // bc_srv_queue / bc_be_queue: queue sizes when this stream was queued
    kBcBeQueue,
    kFeClientTimeout,   // the frontend's, the backend's and the stream's (set-timeout)
    kFeTarpitTimeout,   // settings, in ms
    kBeServerTimeout,
    kBeTunnelTimeout,
    kBeConnectTimeout,
    kBeQueueTimeout,
    kBeTarpitTimeout,
    kBeMaxRetries,      // a count, not a time
    kCurClientTimeout,
    kCurServerTimeout,
    kCurTunnelTimeout,
    kCurConnectTimeout,
    kCurQueueTimeout,
    kCurTarpitTimeout,
    kCurMaxRetries,
    // The transaction's timers (HAProxy's txn.timer.*, req.timer.*, res.timer.*), in ms, the
    // numbers of the log's %Ta %Tu %Ti %Tq %TR %Tw %Tr %Td; -1 for a step not reached. Before
    // the end (rules), the close time counts as 0, as in HAProxy: the totals are negative.
    kTxnTotalMs,      // txn.timer.total (%Ta)
    kTxnUserMs,       // txn.timer.user (%Tu)
    kReqIdleMs,       // req.timer.idle (%Ti)
    kReqTqMs,         // req.timer.tq (%Tq)
    kReqHdrMs,        // req.timer.hdr (%TR)
    kReqQueueMs,      // req.timer.queue (%Tw)
    kResHdrMs,        // res.timer.hdr (%Tr)
    kResDataMs,       // res.timer.data (%Td once the response head came, else -1)
    kRequestDateUs,   // request_date: the request's first byte (TCP: the accept), us
    // Byte counts, known at the end (0 before): bytes_in and req.bytes_in (%U), req.bytes_out
    // (sent to the server), bytes_out and res.bytes_in (%B), res.bytes_out (sent to the client).
    kReqBytesIn,
    kReqBytesOut,
    kResBytesIn,
    kResBytesOut,
  };
  virtual bool query(Query q, int64_t* out) const { return false; }
  // Texts, same convention (an empty text can be a value: fc_err_name of no error).
  enum class TextQuery : uint8_t {
    kDefaultBackend,   // fe_defbe: the frontend's default_backend
    kTermState,        // txn.sess_term_state: the two termination state characters
    kLastRuleFile,     // last_rule_file: file of the last rule that ran
    kLastEntity,       // last_entity: the last rule ("file:line") or filter that ran
    kFcErrStr,         // fc_err_str / bc_err_str: the error's text ("Success" for none)
    kBcErrStr,
    kFcErrName,        // fc_err_name / bc_err_name: its short name (empty for none)
    kBcErrName,
  };
  virtual bool text(TextQuery q, std::string_view* out) const { return false; }
  // The PROXY protocol header the connection began with (bind ... accept-proxy), null for
  // none: fc_rcvd_proxy, fc_pp_authority, fc_pp_unique_id, fc_pp_tlv().
  virtual const net::pp::Header* proxy_header() const { return nullptr; }
};
// An Env that knows nothing (tests, places with no proxy around them). Inline: every Ctx
// starts with it.
namespace detail {
extern const Env kNullEnv;
}
inline const Env& null_env() { return detail::kNullEnv; }

// Everything one evaluation reads. Pointers may be null where `avail` says so.
struct Ctx {
  uint32_t avail = kUseInternal;

  // L4: the client connection.
  const net::SocketAddress* src = nullptr;   // client address
  const net::SocketAddress* dst = nullptr;   // local address (null: not known)
  uint16_t dst_port = 0;                     // local port the client connected to
  int cli_fd = -1;                           // client socket (tcp_info fetches), -1: none
  // The server connection (bc_src, bc_dst, bc_rtt...; filled on the response side where
  // kUseServer is set). Null / -1: no server connection.
  const net::SocketAddress* srv_src = nullptr;   // its local address
  const net::SocketAddress* srv_dst = nullptr;   // the server's address
  int srv_fd = -1;

  // L5: the client's bytes buffered so far (tcp-request content), final when the client
  // closed, the buffer is full, or inspect-delay is over or unset.
  std::string_view payload;
  bool payload_final = true;
  std::string_view res_payload;              // tcp-response content
  bool res_payload_final = true;

  // HTTP.
  HttpMsg req;
  HttpMsg res;
  // The stream's capture slots (capture.req.hdr(n), capture-req(n), the capture actions);
  // null: none. unique-id-format's id of the request (unique-id); empty: none.
  Captures* captures = nullptr;
  std::string_view unique_id;

  // Variables by scope (null: that scope does not exist here).
  VarStore* sess_vars = nullptr;
  VarStore* txn_vars = nullptr;
  VarStore* req_vars = nullptr;
  VarStore* res_vars = nullptr;
  VarStore* check_vars = nullptr;   // a health check's own (check.*)

  const Env* env = &null_env();
  Scratch* scratch = nullptr;   // null: the thread's (thread_scratch())
  // Wall-clock time of the event, microseconds since the epoch; 0: read the clock.
  uint64_t now_us = 0;

  Scratch& sc() const { return scratch ? *scratch : thread_scratch(); }
  bool has(uint32_t bits) const { return (avail & bits) == bits; }
};

}  // namespace sluice::sample
