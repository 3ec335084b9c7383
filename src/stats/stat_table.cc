// The `show stat` table: CSV, typed and JSON dumps of every proxy, listener and server.
#include "stats/stat_table.h"

#include <fmt/format.h>

#include "stats/fields.h"

namespace sluice::stats {
namespace {

using T = FieldType;

struct Column {
  std::string_view name;
  const char* tags;      // origin, nature, scope, persistence (P: shared proxy counters)
  FieldType type;
};

// Columns 0-118 fixed by position (HAProxy's order), then the literal "-" at 119. Tools index these by
// position, so the order is the contract.
constexpr std::array<Column, kStatColumns> kColumns = {{
    {"pxname", "KNSV", T::kStr}, {"svname", "KNSV", T::kStr},
    {"qcur", "MGPV", T::kU32}, {"qmax", "MMPV", T::kU32},
    {"scur", "MGPV", T::kU32}, {"smax", "MMPV", T::kU32}, {"slim", "CLPV", T::kU32},
    {"stot", "MCPP", T::kU64}, {"bin", "MCPP", T::kU64}, {"bout", "MCPP", T::kU64},
    {"dreq", "MCPP", T::kU64}, {"dresp", "MCPP", T::kU64}, {"ereq", "MCPP", T::kU64},
    {"econ", "MCPP", T::kU64}, {"eresp", "MCPP", T::kU64}, {"wretr", "MCPP", T::kU64},
    {"wredis", "MCPP", T::kU64}, {"status", "SGPV", T::kStr}, {"weight", "MaPV", T::kU32},
    {"act", "SGPV", T::kU32}, {"bck", "SGPV", T::kU32}, {"chkfail", "MCPV", T::kU64},
    {"chkdown", "MCPV", T::kU64}, {"lastchg", "MDPV", T::kU32}, {"downtime", "MDPV", T::kU64},
    {"qlimit", "CLPV", T::kU32}, {"pid", "KGPV", T::kU32}, {"iid", "KGSV", T::kU32},
    {"sid", "KGSV", T::kU32}, {"throttle", "MaPV", T::kU32}, {"lbtot", "MCPP", T::kU64},
    {"tracked", "CNSV", T::kStr}, {"type", "CGSV", T::kU32}, {"rate", "MRPV", T::kU32},
    {"rate_lim", "CLPV", T::kU32}, {"rate_max", "MMPV", T::kU32},
    {"check_status", "SOPV", T::kStr}, {"check_code", "MOPV", T::kU32},
    {"check_duration", "MDPV", T::kU64}, {"hrsp_1xx", "MCPP", T::kU64},
    {"hrsp_2xx", "MCPP", T::kU64}, {"hrsp_3xx", "MCPP", T::kU64}, {"hrsp_4xx", "MCPP", T::kU64},
    {"hrsp_5xx", "MCPP", T::kU64}, {"hrsp_other", "MCPP", T::kU64},
    {"hanafail", "MCPV", T::kU64}, {"req_rate", "MRPV", T::kU32},
    {"req_rate_max", "MMPV", T::kU32}, {"req_tot", "MCPP", T::kU64},
    {"cli_abrt", "MCPP", T::kU64}, {"srv_abrt", "MCPP", T::kU64}, {"comp_in", "MCPP", T::kU64},
    {"comp_out", "MCPP", T::kU64}, {"comp_byp", "MCPP", T::kU64}, {"comp_rsp", "MCPP", T::kU64},
    {"lastsess", "MAPV", T::kS32}, {"last_chk", "MOPV", T::kStr}, {"last_agt", "MOPV", T::kStr},
    {"qtime", "MaPV", T::kU32}, {"ctime", "MaPV", T::kU32}, {"rtime", "MaPV", T::kU32},
    {"ttime", "MaPV", T::kU32}, {"agent_status", "SOPV", T::kStr},
    {"agent_code", "MOPV", T::kU32}, {"agent_duration", "MDPV", T::kU64},
    {"check_desc", "MOPV", T::kStr}, {"agent_desc", "MOPV", T::kStr},
    {"check_rise", "MaPV", T::kU32}, {"check_fall", "MaPV", T::kU32},
    {"check_health", "SGPV", T::kU32}, {"agent_rise", "MaPV", T::kU32},
    {"agent_fall", "MaPV", T::kU32}, {"agent_health", "SGPV", T::kU32},
    {"addr", "COSV", T::kStr}, {"cookie", "CNSV", T::kStr}, {"mode", "CGSV", T::kStr},
    {"algo", "CGSV", T::kStr}, {"conn_rate", "MRPV", T::kU32}, {"conn_rate_max", "MMPV", T::kU32},
    {"conn_tot", "MCPP", T::kU64}, {"intercepted", "MCPP", T::kU64}, {"dcon", "MCPP", T::kU64},
    {"dses", "MCPP", T::kU64}, {"wrew", "MCPP", T::kU64}, {"connect", "MCPP", T::kU64},
    {"reuse", "MCPP", T::kU64}, {"cache_lookups", "MCPP", T::kU64},
    {"cache_hits", "MCPP", T::kU64}, {"srv_icur", "MGPV", T::kU32}, {"src_ilim", "MGPV", T::kU32},
    {"qtime_max", "MMPV", T::kU32}, {"ctime_max", "MMPV", T::kU32},
    {"rtime_max", "MMPV", T::kU32}, {"ttime_max", "MMPV", T::kU32}, {"eint", "MCPP", T::kU64},
    {"idle_conn_cur", "MGPV", T::kU32}, {"safe_conn_cur", "MGPV", T::kU32},
    {"used_conn_cur", "MGPV", T::kU32}, {"need_conn_est", "MGPV", T::kU32},
    {"uweight", "MaPV", T::kU32}, {"agg_server_status", "MGPV", T::kU32},
    {"agg_server_check_status", "MGPV", T::kU32}, {"agg_check_status", "MGPV", T::kU32},
    {"srid", "KGSV", T::kU32}, {"sess_other", "MCPP", T::kU64}, {"h1sess", "MCPP", T::kU64},
    {"h2sess", "MCPP", T::kU64}, {"h3sess", "MCPP", T::kU64}, {"req_other", "MCPP", T::kU64},
    {"h1req", "MCPP", T::kU64}, {"h2req", "MCPP", T::kU64}, {"h3req", "MCPP", T::kU64},
    {"proto", "COSV", T::kStr}, {"priv_idle_cur", "MGPV", T::kU32},
    {"reqbin", "MCPP", T::kU64}, {"reqbout", "MCPP", T::kU64}, {"resbin", "MCPP", T::kU64},
    {"resbout", "MCPP", T::kU64}, {"cache_hint_hits", "MCPP", T::kU64}, {"-", "", T::kStr},
}};

// Column indexes used by name below.
enum Col : int {
  kPxname = 0, kSvname, kQcur, kQmax, kScur, kSmax, kSlim, kStot, kBin, kBout, kDreq, kDresp,
  kEreq, kEcon, kEresp, kWretr, kWredis, kStatus, kWeight, kAct, kBck, kChkfail, kChkdown,
  kLastchg, kDowntime, kQlimit, kPid, kIid, kSid, kThrottle, kLbtot, kTracked, kType, kRate,
  kRateLim, kRateMax, kCheckStatus, kCheckCode, kCheckDuration, kHrsp1xx, kHrsp2xx, kHrsp3xx,
  kHrsp4xx, kHrsp5xx, kHrspOther, kHanafail, kReqRate, kReqRateMax, kReqTot, kCliAbrt, kSrvAbrt,
  kCompIn, kCompOut, kCompByp, kCompRsp, kLastsess, kLastChk, kLastAgt, kQtime, kCtime, kRtime,
  kTtime, kAgentStatus, kAgentCode, kAgentDuration, kCheckDesc, kAgentDesc, kCheckRise,
  kCheckFall, kCheckHealth, kAgentRise, kAgentFall, kAgentHealth, kAddr, kCookie, kMode, kAlgo,
  kConnRate, kConnRateMax, kConnTot, kIntercepted, kDcon, kDses, kWrew, kConnect, kReuse,
  kCacheLookups, kCacheHits, kSrvIcur, kSrcIlim, kQtimeMax, kCtimeMax, kRtimeMax, kTtimeMax,
  kEint, kIdleConnCur, kSafeConnCur, kUsedConnCur, kNeedConnEst, kUweight, kAggServerStatus,
  kAggServerCheckStatus, kAggCheckStatus, kSrid, kSessOther, kH1sess, kH2sess, kH3sess,
  kReqOther, kH1req, kH2req, kH3req, kProto, kPrivIdleCur, kReqbin, kReqbout, kResbin,
  kResbout, kCacheHintHits, kDash,
};
static_assert(kDash == 119, "column 119 must be the literal '-'");

// The type column's values, and the bits of the `<type>` filter.
using Row = StatRow;
using RowKind = StatRow::Kind;
constexpr RowKind kFrontend = StatRow::kFrontend, kBackend = StatRow::kBackend,
                  kServer = StatRow::kServer, kListener = StatRow::kListener;
constexpr int kTypeBit[] = {1, 2, 4, 8};

std::string num(uint64_t v) { return std::to_string(v); }
std::string snum(int64_t v) { return std::to_string(v); }

const char* check_desc(std::string_view status) {
  static constexpr std::pair<std::string_view, const char*> kDescs[] = {
      {"UNK", "Unknown"}, {"INI", "Initializing"}, {"SOCKERR", "Socket error"},
      {"L4OK", "Layer4 check passed"}, {"L4TOUT", "Layer4 timeout"},
      {"L4CON", "Layer4 connection problem"}, {"L6OK", "Layer6 check passed"},
      {"L6TOUT", "Layer6 timeout"}, {"L6RSP", "Layer6 invalid response"},
      {"L7OK", "Layer7 check passed"}, {"L7OKC", "Layer7 check conditionally passed"},
      {"L7TOUT", "Layer7 timeout"}, {"L7RSP", "Layer7 invalid response"},
      {"L7STS", "Layer7 wrong status"}, {"PROCERR", "External check error"},
      {"PROCTOUT", "External check timeout"}, {"PROCOK", "External check passed"},
      {"CHECKED", "No status change"}, {"HANA", "Health analyze"},
  };
  for (const auto& [code, desc] : kDescs)
    if (code == status) return desc;
  return "";
}

// Fields every row type carries (listener, frontend, backend and server rows).
void fill_common(Row* r, const ProxySnapshot& px, std::string_view svname,
                 const Counters& c) {
  auto& v = r->v;
  v[kPxname] = px.name;
  v[kSvname] = std::string(svname);
  v[kScur] = num(c.scur);
  v[kSmax] = num(c.smax);
  v[kStot] = num(c.stot);
  v[kBin] = num(c.bin);
  v[kBout] = num(c.bout);
  v[kDresp] = num(c.dresp);
  v[kPid] = "1";
  v[kIid] = snum(px.id);
  v[kSid] = snum(r->sid);
  v[kType] = snum(r->kind);
  v[kMode] = px.mode;
  v[kWrew] = "0";
  v[kEint] = num(c.eint);
  // sluice counts the bytes of each direction once: what it reads is what it forwards, so the
  // in/out halves of reqb*/resb* carry the same value.
  v[kReqbin] = num(c.bin);
  v[kReqbout] = num(c.bin);
  v[kResbin] = num(c.bout);
  v[kResbout] = num(c.bout);
  v[kDash] = "-";
}

// Backend and server fields (..BS).
void fill_backend_side(Row* r, const Counters& c) {
  auto& v = r->v;
  v[kEcon] = num(c.econ);
  v[kEresp] = num(c.eresp);
  v[kWretr] = num(c.wretr);
  v[kWredis] = num(c.wredis);
  v[kLbtot] = num(c.lbtot);
  v[kRate] = num(c.rate);
  v[kRateMax] = num(c.rate_max);
  v[kCliAbrt] = num(c.cli_abrt);
  v[kSrvAbrt] = num(c.srv_abrt);
  v[kLastsess] = snum(c.last_sess_s);
  v[kQtime] = num(c.qtime);
  v[kCtime] = num(c.ctime);
  v[kRtime] = num(c.rtime);
  v[kTtime] = num(c.ttime);
  v[kConnect] = num(c.connect);
  v[kReuse] = num(c.reuse);
  v[kQtimeMax] = num(c.qtime_max);
  v[kCtimeMax] = num(c.ctime_max);
  v[kRtimeMax] = num(c.rtime_max);
  v[kTtimeMax] = num(c.ttime_max);
}

void fill_http(Row* r, const ProxySnapshot& px, const Counters& c) {
  if (px.mode != "http") return;
  auto& v = r->v;
  v[kHrsp1xx] = num(c.hrsp_1xx);
  v[kHrsp2xx] = num(c.hrsp_2xx);
  v[kHrsp3xx] = num(c.hrsp_3xx);
  v[kHrsp4xx] = num(c.hrsp_4xx);
  v[kHrsp5xx] = num(c.hrsp_5xx);
  v[kHrspOther] = num(c.hrsp_other);
  v[kReqTot] = num(c.req_tot);
}

bool server_in_maint(const ServerSnapshot& s) {
  // forced, inherited and DNS maintenance bits (a config `disabled` alone, 0x04, is not: the
  // CLI may have made that server ready)
  return (s.admin_state & (0x01 | 0x02 | 0x20)) != 0;
}

bool server_drained(const ServerSnapshot& s) {
  return (s.admin_state & (0x08 | 0x10)) != 0;
}

// A server the load balancer may pick: running or starting, not in maintenance nor drained,
// with a weight.
bool server_usable(const ServerSnapshot& s) {
  return (s.op_state == 1 || s.op_state == 2) && !server_in_maint(s) && !server_drained(s) &&
         s.weight > 0;
}

std::string server_status(const ServerSnapshot& s) {
  if (!s.status.empty()) return s.status;
  // The runtime normally provides the exact string (HAProxy's, "UP 1/3" included); this is
  // the fallback when it does not.
  if (server_in_maint(s)) return "MAINT";
  if (s.op_state == 0) return "DOWN";
  if (s.op_state == 3) return "NOLB";
  if (server_drained(s)) return "DRAIN";
  return s.check_enabled ? "UP" : "no check";
}

using Options = StatFilter;

bool type_selected(const Options& o, RowKind k) {
  return !o.bound || (o.type & kTypeBit[k]) != 0;
}

bool server_hidden(const Options& o, const ServerSnapshot& s) {
  if (o.hide_maint && server_in_maint(s)) return true;
  if (o.hide_down) {
    if (server_in_maint(s)) return true;
    // DOWN and not changing state; "DOWN 1/2" is on its way up and stays visible.
    std::string st = server_status(s);
    if (st == "DOWN" || st == "DOWN (agent)") return true;
  }
  return false;
}

}  // namespace

void stat_rows(const ProxySnapshot& px, const StatFilter& o, std::vector<StatRow>* rows) {
  if (px.is_frontend && type_selected(o, kFrontend)) {
    Row r;
    r.kind = kFrontend;
    r.iid = px.id;
    const auto& c = px.frontend;
    fill_common(&r, px, "FRONTEND", c);
    auto& v = r.v;
    v[kSlim] = snum(px.maxconn);
    v[kDreq] = num(c.dreq);
    v[kEreq] = num(c.ereq);
    v[kStatus] = px.frontend_status.empty() ? "OPEN" : px.frontend_status;
    v[kRate] = num(c.rate);
    v[kRateLim] = "0";
    v[kRateMax] = num(c.rate_max);
    fill_http(&r, px, c);
    v[kReqRate] = num(c.req_rate);
    v[kReqRateMax] = num(c.req_rate_max);
    v[kCompIn] = v[kCompOut] = v[kCompByp] = v[kCompRsp] = "0";
    v[kConnRate] = num(c.conn_rate);
    v[kConnRateMax] = num(c.conn_rate_max);
    v[kConnTot] = num(c.conn_tot);
    if (px.mode == "http") {
      v[kIntercepted] = num(c.intercepted);
      v[kCacheLookups] = v[kCacheHits] = "0";
    }
    v[kDcon] = num(c.dcon);
    v[kDses] = num(c.dses);
    // sluice speaks HTTP/1 only: every HTTP session and request is h1, TCP ones are "other".
    bool http = px.mode == "http";
    v[kSessOther] = http ? "0" : num(c.stot);
    v[kH1sess] = http ? num(c.stot) : "0";
    v[kH2sess] = v[kH3sess] = "0";
    v[kReqOther] = "0";
    v[kH1req] = http ? num(c.req_tot) : "0";
    if (!http) v[kReqTot] = "0";   // a TCP frontend has a request count too, always 0
    v[kH2req] = v[kH3req] = "0";
    if (px.mode == "http") v[kCacheHintHits] = "0";   // HAProxy 3.5: empty in TCP mode
    rows->push_back(std::move(r));
  }
  if (type_selected(o, kListener)) {
    for (const auto& li : px.listeners) {
      if (o.bound && o.sid != -1 && li.id != o.sid) continue;
      Row r;
      r.kind = kListener;
      r.iid = px.id;
      r.sid = li.id;
      fill_common(&r, px, li.name.empty() ? fmt::format("sock-{}", li.id) : li.name, li.c);
      auto& v = r.v;
      v[kSlim] = snum(li.maxconn);
      v[kDreq] = num(li.c.dreq);
      v[kEreq] = num(li.c.ereq);
      v[kStatus] = li.status.empty() ? "OPEN" : li.status;
      if (o.show_legends) v[kAddr] = li.addr;
      v[kConnTot] = num(li.c.conn_tot);
      v[kDcon] = v[kDses] = "0";
      v[kProto] = li.proto;
      rows->push_back(std::move(r));
    }
  }
  if (px.is_backend && type_selected(o, kServer)) {
    for (const auto& s : px.servers) {
      if (o.bound && o.sid != -1 && s.id != o.sid) continue;
      if (server_hidden(o, s)) continue;
      Row r;
      r.kind = kServer;
      r.iid = px.id;
      r.sid = s.id;
      fill_common(&r, px, s.name, s.c);
      fill_backend_side(&r, s.c);
      fill_http(&r, px, s.c);
      auto& v = r.v;
      bool checked = s.check_enabled && !server_in_maint(s);
      v[kQcur] = num(s.qcur);
      v[kQmax] = num(s.qmax);
      if (s.maxconn > 0) v[kSlim] = snum(s.maxconn);
      v[kStatus] = server_status(s);
      v[kWeight] = snum(s.eweight);
      if (s.throttle >= 0) v[kThrottle] = snum(s.throttle);
      v[kAct] = s.backup ? "0" : "1";
      v[kBck] = s.backup ? "1" : "0";
      if (s.check_enabled) {
        v[kChkfail] = num(s.chkfail);
        v[kChkdown] = num(s.chkdown);
        v[kDowntime] = num(s.downtime_s);
      }
      v[kLastchg] = snum(s.lastchg_s);
      v[kHanafail] = num(s.hanafail);
      v[kTracked] = s.tracked;
      // Maintenance pauses the check, which empties every check_* field and last_chk.
      if (checked) {
        v[kCheckStatus] = s.check_status;
        if (s.check_code > 0 && (s.check_status == "L7OK" || s.check_status == "L7OKC" ||
                                 s.check_status == "L7STS" || s.check_status.starts_with("PROC")))
          v[kCheckCode] = snum(s.check_code);
        if (s.check_duration_ms >= 0) v[kCheckDuration] = snum(s.check_duration_ms);
        v[kLastChk] = s.last_chk;
        v[kCheckDesc] = check_desc(s.check_status);
        v[kCheckRise] = snum(s.check_rise);
        v[kCheckFall] = snum(s.check_fall);
        v[kCheckHealth] = snum(s.check_health);
      }
      if (s.agent_enabled) {
        v[kAgentStatus] = s.agent_status;
        v[kAgentCode] = "0";
        if (s.agent_duration_ms >= 0) v[kAgentDuration] = snum(s.agent_duration_ms);
        v[kLastAgt] = s.last_agt;
        v[kAgentDesc] = check_desc(s.agent_status);
        v[kAgentRise] = snum(s.agent_rise);
        v[kAgentFall] = snum(s.agent_fall);
        v[kAgentHealth] = snum(s.agent_health);
      }
      if (o.show_legends) v[kAddr] = s.addr;
      if (o.show_legends && !s.cookie.empty()) v[kCookie] = s.cookie;
      v[kSrvIcur] = "0";
      v[kIdleConnCur] = v[kSafeConnCur] = "0";
      v[kUsedConnCur] = num(s.c.scur);
      v[kNeedConnEst] = "0";
      v[kUweight] = snum(s.weight);
      v[kSrid] = "0";
      v[kPrivIdleCur] = "0";
      rows->push_back(std::move(r));
    }
  }
  if (px.is_backend && type_selected(o, kBackend)) {
    Row r;
    r.kind = kBackend;
    r.iid = px.id;
    const auto& c = px.backend;
    fill_common(&r, px, "BACKEND", c);
    fill_backend_side(&r, c);
    fill_http(&r, px, c);
    auto& v = r.v;
    uint64_t qcur = px.backend_qcur, qmax = px.backend_qmax;
    int act = 0, bck = 0, act_w = 0, bck_w = 0, uweight = 0, not_stopped = 0;
    for (const auto& s : px.servers) {
      uweight += s.weight;
      if (s.op_state != 0) ++not_stopped;
      if (!server_usable(s)) continue;
      if (s.backup) {
        ++bck;
        bck_w += s.eweight_scaled;
      } else {
        ++act;
        act_w += s.eweight_scaled;
      }
    }
    // HAProxy sums the exact effective weights (1/16 scale), then rounds up once.
    int weight = ((act > 0 ? act_w : bck_w) + 15) / 16;
    v[kQcur] = num(qcur);
    v[kQmax] = num(qmax);
    v[kSlim] = snum(px.fullconn);
    v[kDreq] = num(c.dreq);
    std::string status = px.backend_status;
    if (status.empty()) status = (weight > 0 || px.servers.empty()) ? "UP" : "DOWN";
    if (o.hide_down || o.hide_maint)
      status += fmt::format(" ({}/{})", not_stopped, px.servers.size());
    v[kStatus] = status;
    v[kWeight] = snum(weight);
    v[kAct] = snum(act);
    v[kBck] = snum(bck);
    v[kChkdown] = num(px.backend_chkdown);
    if (!px.servers.empty()) {
      v[kLastchg] = snum(px.backend_lastchg_s);
      v[kDowntime] = num(px.backend_downtime_s);
    }
    v[kCompIn] = v[kCompOut] = v[kCompByp] = v[kCompRsp] = "0";
    if (o.show_legends) v[kAlgo] = px.algo.empty() ? "unknown" : px.algo;
    if (o.show_legends && !px.cookie.empty()) v[kCookie] = px.cookie;
    if (px.mode == "http") v[kCacheLookups] = v[kCacheHits] = "0";
    v[kUweight] = snum(uweight);
    v[kAggServerStatus] = v[kAggServerCheckStatus] = v[kAggCheckStatus] = "0";
    if (px.mode == "http") v[kCacheHintHits] = "0";   // HAProxy 3.5: empty in TCP mode
    rows->push_back(std::move(r));
  }
}

namespace {

// A typed value must stay on its line: CR dropped, LF turned into a space.
std::string one_line(std::string_view s) {
  std::string v;
  for (char c : s) {
    if (c == '\r') continue;
    v += c == '\n' ? ' ' : c;
  }
  return v;
}

const char* kind_letter(RowKind k) {
  switch (k) {
    case kFrontend: return "F";
    case kBackend: return "B";
    case kServer: return "S";
    case kListener: return "L";
  }
  return "F";
}

const char* kind_json(RowKind k) {
  switch (k) {
    case kFrontend: return "Frontend";
    case kBackend: return "Backend";
    case kServer: return "Server";
    case kListener: return "Listener";
  }
  return "Frontend";
}

}  // namespace

std::size_t stat_column(std::string_view name) {
  for (std::size_t i = 0; i < kColumns.size(); ++i)
    if (kColumns[i].name == name) return i;
  return kDash;
}

const std::vector<std::string_view>& stat_column_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> n;
    for (const auto& c : kColumns) n.push_back(c.name);
    return n;
  }();
  return names;
}

void format_stat_rows(const std::vector<StatRow>& rows, StatFormat format, std::string* out) {
  if (format == StatFormat::kCsv) {
    *out += "# ";
    for (const auto& c : kColumns) {
      *out += c.name;
      *out += ',';
    }
    *out += '\n';
    for (const auto& r : rows) {
      for (std::size_t i = 0; i < kStatColumns; ++i) {
        *out += kColumns[i].type == T::kStr ? csv_escape(r.v[i]) : r.v[i];
        *out += ',';
      }
      *out += '\n';
    }
    return;
  }
  if (format == StatFormat::kTyped) {
    for (const auto& r : rows) {
      for (std::size_t i = 0; i < kDash; ++i) {
        if (r.v[i].empty()) continue;
        const auto& c = kColumns[i];
        *out += fmt::format("{}.{}.{}.{}.{}.1:{}:{}:{}\n", kind_letter(r.kind), r.iid, r.sid, i,
                            c.name, c.tags, field_type_name(c.type), one_line(r.v[i]));
      }
    }
    return;
  }
  *out += '[';
  for (std::size_t ri = 0; ri < rows.size(); ++ri) {
    const auto& r = rows[ri];
    if (ri) *out += ',';
    *out += '[';
    bool first = true;
    for (std::size_t i = 0; i < kDash; ++i) {
      if (r.v[i].empty()) continue;
      const auto& c = kColumns[i];
      if (!first) *out += ',';
      first = false;
      *out += fmt::format(
          R"({{"objType":"{}","proxyId":{},"id":{},"field":{{"pos":{},"name":"{}"}},"processNum":1,"tags":{},"value":{}}})",
          kind_json(r.kind), r.iid, r.sid, i, c.name, json_tags(c.tags),
          json_value(c.type, r.v[i]));
    }
    *out += ']';
  }
  *out += "]\n";
}

}  // namespace sluice::stats
