// HTTP fetches (HAProxy's section 7.3.6), cookies: the request's Cookie fields (several
// cookies per line, separated by ';' or ',') and the response's Set-Cookie fields (one cookie,
// then its attributes). Names compare case-sensitively; '$' attributes and items without '='
// are not cookies.
#include "sample/fetch_http_util.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }

// End of a cookie value from `i`: the first ';' or ',' outside double quotes.
std::size_t value_end(std::string_view v, std::size_t i) {
  bool quoted = false;
  for (; i < v.size(); ++i) {
    char c = v[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ';' || c == ',') {
      break;
    }
  }
  return std::min(i, v.size());
}

struct Cookie {
  std::string_view name;
  std::string_view value;
};

// The next cookie named `name` (any when `any`) in the fields `field` (Cookie or
// Set-Cookie), from the cursor: pos = field index, aux = offset in its value.
bool next_cookie(const std::vector<http::Header>* hs, bool request, std::string_view name,
                 bool any, uint32_t& pos, uint32_t& aux, Cookie& out) {
  if (!hs) return false;
  std::string_view field = request ? "cookie" : "set-cookie";
  for (; pos < hs->size(); ++pos, aux = 0) {
    const http::Header& h = (*hs)[pos];
    if (!http::iequals(h.name, field)) continue;
    std::string_view v = h.value;
    while (aux < v.size()) {
      std::size_t i = aux;
      while (i < v.size() && blank(v[i])) ++i;
      std::size_t att = i, att_end = i;
      while (i < v.size() && v[i] != '=' && v[i] != ';' && !(request && v[i] == ',')) {
        if (!blank(v[i])) att_end = i + 1;
        ++i;
      }
      bool has_value = i < v.size() && v[i] == '=';
      std::size_t next = i, val = i, val_end = i;
      if (has_value) {
        val = i + 1;
        while (val < v.size() && blank(v[val])) ++val;
        next = value_end(v, val);
        val_end = next;
        while (val_end > val && blank(v[val_end - 1])) --val_end;
      }
      aux = static_cast<uint32_t>(next + 1);
      if (!request) aux = static_cast<uint32_t>(v.size());   // attributes follow the cookie
      if (!has_value || (att < v.size() && v[att] == '$')) continue;
      std::string_view cname = v.substr(att, att_end - att);
      if (!any && cname != name) continue;
      out = {cname, v.substr(val, val_end - val)};
      return true;
    }
  }
  return false;
}

// cook([name]): with it.iterate every matching cookie; otherwise the last one of that name,
// or the first cookie when no name is given.
template <bool Req>
bool f_cook(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  const auto* hs = Req ? ctx.req.headers : ctx.res.headers;
  std::string_view name = a[0].str;
  bool any = name.empty();
  Cookie c;
  if (it.iterate) {
    if (!next_cookie(hs, Req, name, any, it.pos, it.aux, c)) return false;
    out = Sample::string(c.value);
    uint32_t p = it.pos, x = it.aux;
    Cookie more;
    if (next_cookie(hs, Req, name, any, p, x, more)) out.flags |= kNotLast;
    return true;
  }
  uint32_t p = 0, x = 0;
  bool found = false;
  while (next_cookie(hs, Req, name, any, p, x, c)) {
    found = true;
    out = Sample::string(c.value);
    if (any) break;
  }
  return found;
}

template <bool Req>
bool f_cook_cnt(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  const auto* hs = Req ? ctx.req.headers : ctx.res.headers;
  if (!hs) return false;
  std::string_view name = a[0].str;
  uint32_t p = 0, x = 0;
  Cookie c;
  int64_t n = 0;
  while (next_cookie(hs, Req, name, name.empty(), p, x, c)) ++n;
  out = Sample::integer(n);
  return true;
}

template <bool Req>
bool f_cook_val(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  if (!f_cook<Req>(a, out, ctx, it)) return false;
  uint8_t flags = out.flags;
  out = Sample::integer(leading_int(out.str));
  out.flags = flags;
  return true;
}

// cook_names([delim]): the names of the cookies in order, ',' between them by default.
template <bool Req>
bool f_cook_names(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  const auto* hs = Req ? ctx.req.headers : ctx.res.headers;
  if (!hs) return false;
  std::string_view delim = a[0].str.empty() ? std::string_view(",") : a[0].str;
  std::string& b = ctx.sc().next();
  uint32_t p = 0, x = 0;
  Cookie c;
  bool first = true;
  while (next_cookie(hs, Req, {}, true, p, x, c)) {
    if (c.name.empty()) continue;
    if (!first) b += delim;
    b += c.name;
    first = false;
  }
  out = Sample::string(b);
  return true;
}

constexpr uint32_t kReq = kUseHttpReq;
constexpr uint32_t kRes = kUseHttpRes;
constexpr ArgSpec kName = args(0, ArgType::kStr);

constexpr FetchDef kFetches[] = {
    {"cook", f_cook<true>, kName, nullptr, Type::kStr, kReq, "str"},
    {"cook_cnt", f_cook_cnt<true>, kName, nullptr, Type::kSint, kReq, "int"},
    {"cook_val", f_cook_val<true>, kName, nullptr, Type::kSint, kReq, "int"},
    {"req.cook", f_cook<true>, kName, nullptr, Type::kStr, kReq},
    {"req.cook_cnt", f_cook_cnt<true>, kName, nullptr, Type::kSint, kReq},
    {"req.cook_names", f_cook_names<true>, kName, nullptr, Type::kStr, kReq},
    {"req.cook_val", f_cook_val<true>, kName, nullptr, Type::kSint, kReq},
    {"res.cook", f_cook<false>, kName, nullptr, Type::kStr, kRes},
    {"res.cook_cnt", f_cook_cnt<false>, kName, nullptr, Type::kSint, kRes},
    {"res.cook_names", f_cook_names<false>, kName, nullptr, Type::kStr, kRes},
    {"res.cook_val", f_cook_val<false>, kName, nullptr, Type::kSint, kRes},
    {"scook", f_cook<false>, kName, nullptr, Type::kStr, kRes, "str"},
    {"scook_cnt", f_cook_cnt<false>, kName, nullptr, Type::kSint, kRes, "int"},
    {"scook_val", f_cook_val<false>, kName, nullptr, Type::kSint, kRes, "int"},
};

}  // namespace

std::span<const FetchDef> http_cookie_fetches() { return kFetches; }

}  // namespace sluice::sample::tables
