// The log record a rule's format renders its log-format aliases from (%b, %s, %Ts, %rt, %r,
// %Tq, %ST...): what the rules' view and its environment know of the stream at that point.
#include <unistd.h>

#include <algorithm>

#include "base/clock.h"
#include "base/host.h"
#include "net/socket.h"
#include "log/format.h"
#include "rules/internal.h"
#include "sample/captures.h"

namespace sluice::rules::detail {

namespace {

int64_t ask(const RequestView& v, sample::Env::Query q, int64_t dflt) {
  int64_t out = 0;
  return v.env->query(q, &out) ? out : dflt;
}

std::string_view host_name() {
  static const std::string name = base::host_name();
  return name;
}

}  // namespace

void fill_record(const RequestView& v, log::Record& r, std::string& request_line) {
  using Q = sample::Env::Query;
  const sample::Env& env = *v.env;
  r.client = v.src;
  r.local = v.dst;
  r.server_addr = v.srv_dst;
  r.backend_src = v.srv_src;
  if (!r.backend_src && v.srv_fd >= 0) {
    thread_local net::SocketAddress kernels;
    if (net::local_address(v.srv_fd, &kernels)) r.backend_src = &kernels;
  }
  r.http = v.has(sample::kUseHttpReqLine);
  r.frontend = env.frontend_name();
  r.backend = env.backend_name().empty() ? r.frontend : env.backend_name();
  r.server = env.server_name().empty() ? std::string_view("<NOSRV>") : env.server_name();
  const int64_t now_us = static_cast<int64_t>(v.now_us ? v.now_us : base::wall_us());
  const int64_t req_us = ask(v, Q::kRequestDateUs, now_us);
  r.date_wall_us = static_cast<uint64_t>(req_us);
  r.accept_wall_us = static_cast<uint64_t>(ask(v, Q::kAcceptDateUs, req_us));
  // The timers as the transaction knows them now: -1 for a step not reached.
  r.ti = ask(v, Q::kReqIdleMs, 0);
  r.tr = ask(v, Q::kReqHdrMs, -1);
  r.tw = ask(v, Q::kReqQueueMs, -1);
  r.tc = ask(v, Q::kBcConnectMs, -1);
  r.tresp = ask(v, Q::kResHdrMs, -1);
  r.total = now_us >= req_us ? (now_us - req_us) / 1000 : 0;
  r.status = v.has(sample::kUseHttpRes) && v.res.status > 0 ? v.res.status : -1;
  r.bytes_out = static_cast<uint64_t>(ask(v, Q::kResBytesIn, 0));
  r.bytes_in = static_cast<uint64_t>(ask(v, Q::kReqBytesIn, 0));
  r.actconn = static_cast<int>(ask(v, Q::kActConn, 0));
  r.feconn = std::max(0, env.fe_conn({}));
  r.beconn = std::max(0, env.be_conn({}));
  r.srvconn = env.server_name().empty() ? 0 : std::max(0, env.srv_conn({}, {}));
  r.retries = static_cast<int>(ask(v, Q::kConnRetries, 0));
  r.redispatched = ask(v, Q::kRedispatched, 0) != 0;
  r.request_counter = static_cast<uint64_t>(ask(v, Q::kTxnId32, 0));
  r.unique_id = v.unique_id;
  r.hostname = host_name();
  r.pid = static_cast<int>(getpid());
  if (v.captures) {
    r.req_capture_slots = v.captures->req_slots();
    r.req_captures = v.captures->req();
    r.res_capture_slots = v.captures->res_slots();
    r.res_captures = v.captures->res();
  }
  if (!v.req.method.empty()) {
    request_line.assign(v.req.method);
    request_line += ' ';
    request_line += v.req.target;
    if (!v.req.version.empty()) {
      request_line += ' ';
      request_line += v.req.version;
    }
    r.request_line = request_line;
  }
}

}  // namespace sluice::rules::detail
