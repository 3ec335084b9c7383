// Other converters (HAProxy's section 7.3.1): capture-req and capture-res, ipmask, the dates ltime, utime and their ms_
// and us_ forms, http_date, reverse_dom, param, set-var and unset-var as converters, debug, and those that ask the
// process about a proxy or a server named by the sample (nbsrv, srv_queue, srv_is_up,
// fe_exists): sample::Env answers them, and "unknown" there gives no sample.
#include <cstring>
#include <ctime>
#include <string>

#include <fmt/format.h>

#include "sample/captures.h"
#include "sample/tables.h"
#include "sample/var_read.h"

namespace sluice::sample::tables {

namespace {

// ipmask(<v4mask>[,<v6mask>]): an IPv6 address without a v6 mask gives nothing.
bool c_ipmask(const Arg* a, Sample& s, const Ctx& ctx) {
  if (s.type != Type::kIpv4 && s.type != Type::kIpv6) {
    Sample v6 = s;
    if (!cast(s, Type::kIpv4, ctx.sc()) && !cast(v6, Type::kIpv6, ctx.sc())) return false;
    if (s.type != Type::kIpv4) s = v6;
  }
  if (s.type == Type::kIpv4) {
    s.v4.s_addr &= a[0].v4.s_addr;
    return true;
  }
  if (s.type != Type::kIpv6 || !a[1].given) return false;
  for (int i = 0; i < 16; ++i) s.v6.s6_addr[i] &= a[1].v6.s6_addr[i];
  return true;
}

// ltime/utime(<format>[,<offset>]): strftime with HAProxy's %N (nanoseconds, %<n>N its
// first n digits). The input is seconds, milliseconds or microseconds since the epoch; the
// offset is in seconds.
template <int64_t kPerSec, bool kLocal>
bool c_time(const Arg* a, Sample& s, const Ctx& ctx) {
  int64_t v = s.sint;
  int64_t secs = v / kPerSec;
  int64_t frac = v % kPerSec;
  if (frac < 0) {
    frac += kPerSec;
    --secs;
  }
  if (a[1].given) secs += a[1].sint;
  char ns[16];
  snprintf(ns, sizeof(ns), "%09lld", static_cast<long long>(frac * (1000000000 / kPerSec)));
  // The format with %N forms replaced by their digits ('%' of them doubled for strftime).
  std::string fmt;
  std::string_view f = a[0].str;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '%' && i + 1 < f.size()) {
      std::size_t j = i + 1;
      int n = 9;
      if (f[j] >= '1' && f[j] <= '9' && j + 1 < f.size() && f[j + 1] == 'N') {
        n = f[j] - '0';
        ++j;
      }
      if (f[j] == 'N') {
        fmt.append(ns, static_cast<std::size_t>(n));
        i = j;
        continue;
      }
      fmt.append(f.substr(i, 2));
      ++i;
      continue;
    }
    fmt.push_back(f[i]);
  }
  time_t t = static_cast<time_t>(secs);
  struct tm tm;
  if (!(kLocal ? localtime_r(&t, &tm) : gmtime_r(&t, &tm))) return false;
  std::string& b = ctx.sc().next();
  b.resize(fmt.size() + 256);
  std::size_t n = strftime(b.data(), b.size(), fmt.c_str(), &tm);
  if (n == 0 && !fmt.empty()) return false;
  b.resize(n);
  s.type = Type::kStr;
  s.str = b;
  s.flags &= ~kConst;
  return true;
}

// param(<name>[,<delim>]): the value of the first "<name>=value" between delimiters ('&' by
// default; one character, or 0xHH).
std::string check_param(Arg* a, const ParseCtx&) {
  std::string& d = a[1].str;
  if (!a[1].given || d.empty()) {
    d.assign(1, '&');
    return {};
  }
  if (d.size() == 1) return {};
  auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
  };
  if (d.size() == 4 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X') && hex(d[2]) >= 0 &&
      hex(d[3]) >= 0) {
    char c = static_cast<char>(hex(d[2]) * 16 + hex(d[3]));
    d.resize(1);
    d[0] = c;
    return {};
  }
  return "Delimiter must be either exactly 1 character, or 0xHH for an ASCII code .";
}

bool c_param(const Arg* a, Sample& s, const Ctx&) {
  std::string_view in = s.str, name = a[0].str;
  char delim = a[1].str[0];
  std::size_t p = 0;
  while (p <= in.size()) {
    std::size_t e = in.find(delim, p);
    if (e == std::string_view::npos) e = in.size();
    std::string_view item = in.substr(p, e - p);
    if (item.size() > name.size() && item.substr(0, name.size()) == name &&
        item[name.size()] == '=') {
      s.str = item.substr(name.size() + 1);
      s.type = Type::kStr;
      return true;
    }
    p = e + 1;
  }
  return false;
}

// set-var(<var>[,<cond>...]) / unset-var(<var>): the sample passes on unchanged.
std::string check_set_var(Arg* a, const ParseCtx& pc) {
  VarNames& names = pc.var_names ? *pc.var_names : VarNames::global();
  std::string err;
  if (!names.parse(a[0].str, &a[0].var, &err)) return err;
  a[0].type = ArgType::kVar;
  uint16_t conds = 0;
  for (int i = 1; i < kMaxArgs; ++i) {
    if (!a[i].given || a[i].str.empty()) continue;
    if (!parse_set_cond(a[i].str, &conds)) return fmt::format("unknown condition \"{}\"", a[i].str);
  }
  a[0].sint = conds;
  return {};
}

bool c_set_var(const Arg* a, Sample& s, const Ctx& ctx) {
  write_var(a[0].var, ctx, s, static_cast<uint16_t>(a[0].sint));
  return true;
}

std::string check_unset_var(Arg* a, const ParseCtx& pc) {
  if (a[0].str.empty()) return "Empty variable name cannot be accepted";
  VarNames& names = pc.var_names ? *pc.var_names : VarNames::global();
  std::string err;
  if (!names.parse(a[0].str, &a[0].var, &err)) return err;
  a[0].type = ArgType::kVar;
  return {};
}

// capture-req(<id>) / capture-res(<id>): the sample goes into capture slot <id> of the
// stream's frontend, cut to the slot's length, and passes on whole; no such slot (or no
// stream): no sample.
template <bool kResponse>
bool c_capture(const Arg* a, Sample& s, const Ctx& ctx) {
  if (!ctx.captures) return false;
  return kResponse ? ctx.captures->set_res(a[0].sint, s.str) : ctx.captures->set_req(a[0].sint, s.str);
}

bool c_unset_var(const Arg* a, Sample&, const Ctx& ctx) {
  unset_var(a[0].var, ctx);
  return true;
}

// debug([<prefix>][,<buffer>]): HAProxy writes the sample to a ring buffer ("buf0" by
// default) that only its CLI reads; sluice has no such ring, so the sample only passes on.
bool c_debug(const Arg*, Sample&, const Ctx&) { return true; }

// The process state converters: the sample names a backend, "backend/server", a frontend.
bool c_nbsrv(const Arg*, Sample& s, const Ctx& ctx) {
  int n = ctx.env->nbsrv(s.str);
  if (n < 0) return false;
  s = Sample::integer(n);
  return true;
}

template <Env::ProxyStat kStat>
bool c_srv_stat(const Arg*, Sample& s, const Ctx& ctx) {
  std::size_t slash = s.str.find('/');
  if (slash == std::string_view::npos) return false;
  int64_t v = 0;
  if (!ctx.env->proxy_stat(kStat, s.str.substr(0, slash), s.str.substr(slash + 1), &v))
    return false;
  if (kStat == Env::ProxyStat::kSrvIsUp) s = Sample::boolean(v != 0);
  else s = Sample::integer(v);
  return true;
}

bool c_fe_exists(const Arg*, Sample& s, const Ctx& ctx) {
  int r = ctx.env->frontend_exists(s.str);
  if (r < 0) return false;
  s = Sample::boolean(r != 0);
  return true;
}

// http_date([<offset>[,<unit>]]): an IMF-fixdate ("Tue, 14 Nov 2023 22:13:20 GMT") of a time
// in seconds, or in ms or us (with that many decimals); the offset is in the same unit.
std::string check_http_date(Arg* a, const ParseCtx&) {
  std::string_view u = a[1].given ? std::string_view(a[1].str) : std::string_view();
  if (u.empty() || u == "s") a[1].sint = 1;
  else if (u == "ms") a[1].sint = 1000;
  else if (u == "us") a[1].sint = 1000000;
  else return fmt::format("expects 's', 'ms' or 'us', got '{}'", u);
  return {};
}

bool c_http_date(const Arg* a, Sample& s, const Ctx& ctx) {
  int64_t per = a[1].given ? a[1].sint : 1;
  if (per <= 0) per = 1;
  int64_t v = s.sint + (a[0].given ? a[0].sint : 0);
  int64_t frac = v % per;
  time_t t = static_cast<time_t>(v / per);
  struct tm tm;
  if (!gmtime_r(&t, &tm)) return false;
  std::string& b = ctx.sc().next();
  fmt::format_to(std::back_inserter(b), "{}, {:02d} {} {} {:02d}:{:02d}:{:02d}", kDayNames[tm.tm_wday],
                 tm.tm_mday, kMonthNames[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                 tm.tm_sec);
  if (per == 1000) fmt::format_to(std::back_inserter(b), ".{:03d}", frac);
  if (per == 1000000) fmt::format_to(std::back_inserter(b), ".{:06d}", frac);
  b += " GMT";
  s.type = Type::kStr;
  s.str = b;
  s.flags &= ~kConst;
  return true;
}

// reverse_dom: the labels of a domain in reverse order; an empty label gives nothing.
bool c_reverse_dom(const Arg*, Sample& s, const Ctx& ctx) {
  std::string_view in = s.str;
  if (in.empty()) return false;
  std::string& b = ctx.sc().next();
  std::size_t end = in.size();
  while (true) {
    std::size_t dot = in.rfind('.', end - 1);
    std::size_t start = dot == std::string_view::npos ? 0 : dot + 1;
    if (start == end) return false;
    if (!b.empty()) b += '.';
    b.append(in.substr(start, end - start));
    if (dot == std::string_view::npos) break;
    end = dot;
    if (end == 0) return false;
  }
  s.type = Type::kStr;
  s.str = b;
  s.flags &= ~kConst;
  return true;
}

constexpr ArgSpec kTimeArgs = args(1, ArgType::kStr, ArgType::kSint);

constexpr ConvDef kConvs[] = {
    {"capture-req", c_capture<false>, args(1, ArgType::kSint), nullptr, Type::kStr, Type::kStr},
    {"capture-res", c_capture<true>, args(1, ArgType::kSint), nullptr, Type::kStr, Type::kStr},
    {"debug", c_debug, args(0, ArgType::kStr, ArgType::kStr), nullptr, Type::kAny, Type::kAny},
    {"fe_exists", c_fe_exists, no_args(), nullptr, Type::kStr, Type::kBool},
    {"http_date", c_http_date, args(0, ArgType::kSint, ArgType::kStr), check_http_date,
     Type::kSint, Type::kStr},
    {"ipmask", c_ipmask, args(1, ArgType::kMsk4, ArgType::kMsk6), nullptr, Type::kAny,
     Type::kAny},
    {"ltime", c_time<1, true>, kTimeArgs, nullptr, Type::kSint, Type::kStr},
    {"ms_ltime", c_time<1000, true>, kTimeArgs, nullptr, Type::kSint, Type::kStr},
    {"ms_utime", c_time<1000, false>, kTimeArgs, nullptr, Type::kSint, Type::kStr},
    {"nbsrv", c_nbsrv, no_args(), nullptr, Type::kStr, Type::kSint},
    {"param", c_param, args(1, ArgType::kStr, ArgType::kStr), check_param, Type::kStr,
     Type::kStr},
    {"reverse_dom", c_reverse_dom, no_args(), nullptr, Type::kStr, Type::kStr},
    {"set-var", c_set_var,
     args(1, ArgType::kStr, ArgType::kStr, ArgType::kStr, ArgType::kStr, ArgType::kStr),
     check_set_var, Type::kAny, Type::kAny},
    {"srv_is_up", c_srv_stat<Env::ProxyStat::kSrvIsUp>, no_args(), nullptr, Type::kStr,
     Type::kBool},
    {"srv_queue", c_srv_stat<Env::ProxyStat::kSrvQueue>, no_args(), nullptr, Type::kStr,
     Type::kSint},
    {"unset-var", c_unset_var, args(1, ArgType::kStr), check_unset_var, Type::kAny, Type::kAny},
    {"us_ltime", c_time<1000000, true>, kTimeArgs, nullptr, Type::kSint, Type::kStr},
    {"us_utime", c_time<1000000, false>, kTimeArgs, nullptr, Type::kSint, Type::kStr},
    {"utime", c_time<1, false>, kTimeArgs, nullptr, Type::kSint, Type::kStr},
};

}  // namespace

std::span<const ConvDef> misc_convs() { return kConvs; }

}  // namespace sluice::sample::tables
