// Helpers of the HTTP fetches: target parts, header value walks, hashes, parameters.
#include "sample/fetch_http_util.h"

#include <cstring>

namespace sluice::sample::httpx {

std::string_view path_of(std::string_view target) {
  std::string_view pq = pathq_of(target);
  if (pq == "*") return pq;
  auto end = pq.find('?');
  return end == std::string_view::npos ? pq : pq.substr(0, end);
}

std::string_view pathq_of(std::string_view target) {
  if (target.empty()) return target;
  std::size_t start = 0;
  if (target[0] != '/') {
    if (target == "*") return target;
    auto scheme = target.find("://");
    if (scheme == std::string_view::npos) return {};   // authority-form (CONNECT)
    start = target.find_first_of("/?#", scheme + 3);
    if (start == std::string_view::npos || target[start] != '/') return {};
  }
  return target.substr(start);
}

std::string_view query_of(std::string_view target) {
  auto q = target.find('?');
  if (q == std::string_view::npos) return {};
  return target.substr(q + 1);
}

std::string_view host_of(const HttpMsg& m) {
  if (!m.headers) return {};
  for (const auto& h : *m.headers)
    if (http::iequals(h.name, "host")) return h.value;
  return {};
}

uint32_t sdbm_hash(std::string_view a, std::string_view b) {
  uint32_t h = 0;
  for (std::string_view s : {a, b})
    for (char c : s)   // the bytes as signed chars, as HAProxy's loop reads them
      h = static_cast<uint32_t>(static_cast<int32_t>(static_cast<signed char>(c))) + (h << 6) +
          (h << 16) - h;
  // Bob Jenkins' 32-bit integer avalanche, then HAProxy's final spreading.
  h = (h + 0x7ed55d16) + (h << 12);
  h = (h ^ 0xc761c23c) ^ (h >> 19);
  h = (h + 0x165667b1) + (h << 5);
  h = (h + 0xd3a2646c) ^ (h << 9);
  h = (h + 0xfd7046c5) + (h << 3);
  h = (h ^ 0xb55a4f09) ^ (h >> 16);
  return h * 3221225473u;   // spread by a prime near 3/4 of the space, as HAProxy's full_hash
}

bool hash_src(uint32_t hash, const Ctx& ctx, Sample& out) {
  if (!ctx.src) return false;
  std::string& b = ctx.sc().next();
  for (int i = 3; i >= 0; --i) b += static_cast<char>((hash >> (8 * i)) & 0xff);
  const sockaddr* sa = ctx.src->sa();
  if (ctx.src->family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    b.append(reinterpret_cast<const char*>(&in->sin_addr), 4);
  } else if (ctx.src->family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    b.append(reinterpret_cast<const char*>(&in6->sin6_addr), 16);
  } else {
    return false;
  }
  out.type = Type::kBin;
  out.str = b;
  out.flags = 0;
  return true;
}

namespace {

std::string_view trim_blanks(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// End of the comma-separated element starting at `from` (a comma or the end), quotes kept
// together.
std::size_t element_end(std::string_view v, std::size_t from) {
  bool quoted = false;
  for (std::size_t i = from; i < v.size(); ++i) {
    char c = v[i];
    if (quoted) {
      if (c == '\\' && i + 1 < v.size()) ++i;
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      return i;
    }
  }
  return v.size();
}

// off == value size + 1: the field is done.
constexpr uint32_t kDone = 0xffffffffu;

}  // namespace

bool next_header_value(const std::vector<http::Header>* hs, std::string_view name, bool full,
                       HdrCursor& c, std::string_view& out) {
  if (!hs) return false;
  for (; c.field < hs->size(); ++c.field, c.off = 0) {
    const http::Header& h = (*hs)[c.field];
    if (c.off == kDone) continue;
    if (!name.empty() && !http::iequals(h.name, name)) continue;
    if (full) {
      out = h.value;
      c.off = kDone;
      return true;
    }
    std::size_t end = element_end(h.value, c.off);
    out = trim_blanks(h.value.substr(c.off, end - c.off));
    c.off = end < h.value.size() ? static_cast<uint32_t>(end + 1) : kDone;
    return true;
  }
  return false;
}

int64_t header_count(const std::vector<http::Header>* hs, std::string_view name, bool full) {
  HdrCursor c;
  std::string_view v;
  int64_t n = 0;
  while (next_header_value(hs, name, full, c, v)) ++n;
  return n;
}

bool header_occurrence(const std::vector<http::Header>* hs, std::string_view name, bool full,
                       int64_t occ, std::string_view& out) {
  if (occ == 0 || occ < -10) return false;
  HdrCursor c;
  std::string_view v;
  if (occ > 0) {
    while (next_header_value(hs, name, full, c, v))
      if (--occ == 0) {
        out = v;
        return true;
      }
    return false;
  }
  // The last -occ values in a ring of 10.
  std::string_view ring[10];
  int64_t n = 0;
  while (next_header_value(hs, name, full, c, v)) ring[n++ % 10] = v;
  if (n + occ < 0) return false;
  out = ring[(n + occ) % 10];
  return true;
}

bool header_fetch(const std::vector<http::Header>* hs, const Arg* a, bool full, Sample& out,
                  FetchIter& it) {
  std::string_view name = std::string_view(a[0].str);
  int64_t occ = a[1].given ? a[1].sint : 0;
  std::string_view v;
  out.type = Type::kStr;
  out.flags = 0;
  if (occ != 0 || !it.iterate) {
    if (!header_occurrence(hs, name, full, occ == 0 ? -1 : occ, v)) return false;
    out.str = v;
    return true;
  }
  HdrCursor c{it.pos, it.aux};
  if (!next_header_value(hs, name, full, c, v)) return false;
  it.pos = c.field;
  it.aux = c.off;
  std::string_view more;
  if (next_header_value(hs, name, full, c, more)) out.flags |= kNotLast;
  out.str = v;
  return true;
}

std::string check_occurrence(Arg* args, const ParseCtx&) {
  if (args[1].given && args[1].sint < -10) return "header occurrence must be >= -10";
  return {};
}

namespace {

bool is_param_end(char c, char delim) { return c == '&' || c == ';' || c == delim; }

bool same(std::string_view a, std::string_view b, bool icase) {
  return icase ? http::iequals(a, b) : a == b;
}

}  // namespace

bool next_param(std::string_view list, std::string_view name, char delim, bool icase,
                uint32_t& pos, std::string_view& value) {
  std::size_t i = pos;
  while (i < list.size()) {
    std::size_t end = i;
    while (end < list.size() && !is_param_end(list[end], delim)) ++end;
    std::string_view item = list.substr(i, end - i);
    i = end + 1;
    auto eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    if (!name.empty() && !same(item.substr(0, eq), name, icase)) continue;
    value = item.substr(eq + 1);
    pos = static_cast<uint32_t>(std::min(i, list.size()));
    return true;
  }
  pos = static_cast<uint32_t>(list.size());
  return false;
}

void append_varint(std::string& out, uint64_t v) {
  if (v < 240) {
    out += static_cast<char>(v);
    return;
  }
  out += static_cast<char>(v | 240);
  v = (v - 240) >> 4;
  while (v >= 128) {
    out += static_cast<char>(v | 128);
    v = (v - 128) >> 7;
  }
  out += static_cast<char>(v);
}

}  // namespace sluice::sample::httpx
