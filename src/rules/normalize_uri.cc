// `http-request normalize-uri <normalizer> [full|strict]`: HAProxy 3.5's URI normalizers on a
// request target (origin-form `path[?query][#fragment]`), measured on HAProxy 3.5: what each
// one changes, and what it leaves when the target is not what it expects.
#include "rules/normalize_uri.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/strings.h"

namespace sluice::rules {
namespace {

bool unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '.' || c == '_' || c == '~';
}

// The target split where the path ends (at `?` or `#`).
std::size_t path_end(std::string_view t) {
  std::size_t e = t.find_first_of("?#");
  return e == std::string_view::npos ? t.size() : e;
}

// `/a//b` -> `/a/b`, in the path only.
std::string merge_slashes(std::string_view t) {
  std::size_t pe = path_end(t);
  std::string out;
  for (std::size_t i = 0; i < pe; ++i)
    if (!(t[i] == '/' && !out.empty() && out.back() == '/')) out += t[i];
  out.append(t.substr(pe));
  return out;
}

// The path's segments after its leading `/`: "/a/b/" -> {"a", "b", ""}.
std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> s;
  std::size_t i = 1;
  for (;;) {
    std::size_t slash = path.find('/', i);
    s.push_back(path.substr(i, slash == std::string_view::npos ? std::string_view::npos : slash - i));
    if (slash == std::string_view::npos) break;
    i = slash + 1;
  }
  return s;
}

// `.` segments removed; one at the end leaves the slash before it ("/a/." -> "/a/").
std::string strip_dot(std::string_view t) {
  std::size_t pe = path_end(t);
  std::string_view path = t.substr(0, pe);
  if (path.empty() || path[0] != '/') return std::string(t);
  std::vector<std::string_view> segs = segments(path);
  std::string out;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (segs[i] == ".") {
      if (i + 1 == segs.size()) out += '/';
      continue;
    }
    out += '/';
    out += segs[i];
  }
  if (out.empty()) out = "/";
  out.append(t.substr(pe));
  return out;
}

// A `..` segment removes the one before it (any segment, `.` included); with `full`, one that
// would climb above the root goes too, else it stays. One at the end leaves its slash.
std::string strip_dotdot(std::string_view t, bool full) {
  std::size_t pe = path_end(t);
  std::string_view path = t.substr(0, pe);
  if (path.empty() || path[0] != '/') return std::string(t);
  std::vector<std::string_view> segs = segments(path);
  std::vector<std::string_view> kept;
  bool trailing = false;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const bool last = i + 1 == segs.size();
    if (segs[i] != "..") {
      kept.push_back(segs[i]);
      continue;
    }
    if (!kept.empty() && kept.back() != "..") {
      kept.pop_back();
      trailing = trailing || last;
    } else if (!full) {
      kept.push_back(segs[i]);
      trailing = trailing || last;
    } else {
      trailing = trailing || last;
    }
  }
  std::string out;
  for (auto s : kept) {
    out += '/';
    out += s;
  }
  if (trailing || out.empty()) out += '/';
  out.append(t.substr(pe));
  return out;
}

// %XX of an unreserved character decoded; a malformed %-sequence stays (an error when strict).
bool decode_unreserved(std::string_view t, bool strict, std::string* out) {
  out->clear();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '%') {
      *out += t[i];
      continue;
    }
    int h = i + 2 < t.size() ? base::hex_value(t[i + 1]) : -1;
    int l = h >= 0 ? base::hex_value(t[i + 2]) : -1;
    if (h < 0 || l < 0) {
      if (strict) return false;
      *out += t[i];
      continue;
    }
    auto c = static_cast<unsigned char>(h * 16 + l);
    if (unreserved(c)) {
      *out += static_cast<char>(c);
    } else {
      out->append(t.substr(i, 3));
    }
    i += 2;
  }
  return true;
}

// The hex digits of each %XX in upper case; a malformed one stays (an error when strict).
bool upper_percent(std::string_view t, bool strict, std::string* out) {
  out->assign(t);
  for (std::size_t i = 0; i < out->size(); ++i) {
    if ((*out)[i] != '%') continue;
    if (i + 2 >= out->size() || base::hex_value((*out)[i + 1]) < 0 || base::hex_value((*out)[i + 2]) < 0) {
      if (strict) return false;
      continue;
    }
    for (std::size_t k = i + 1; k <= i + 2; ++k)
      if ((*out)[k] >= 'a' && (*out)[k] <= 'f') (*out)[k] = static_cast<char>((*out)[k] - 32);
    i += 2;
  }
  return true;
}

// The query's `&`-separated parameters ordered by name (the part before `=`), ties kept in
// their order.
std::string sort_query(std::string_view t) {
  std::size_t q = t.find('?');
  if (q == std::string_view::npos) return std::string(t);
  std::size_t hash = t.find('#', q);
  std::string_view query = t.substr(q + 1, hash == std::string_view::npos ? std::string_view::npos : hash - q - 1);
  std::vector<std::string_view> params;
  for (std::size_t i = 0;;) {
    std::size_t amp = query.find('&', i);
    params.push_back(query.substr(i, amp == std::string_view::npos ? std::string_view::npos : amp - i));
    if (amp == std::string_view::npos) break;
    i = amp + 1;
  }
  auto name = [](std::string_view p) { return p.substr(0, p.find('=')); };
  std::stable_sort(params.begin(), params.end(),
                   [&](std::string_view a, std::string_view b) { return name(a) < name(b); });
  std::string out(t.substr(0, q + 1));
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i) out += '&';
    out += params[i];
  }
  if (hash != std::string_view::npos) out.append(t.substr(hash));
  return out;
}

}  // namespace

const Normalizer* find_normalizer(std::string_view name) {
  static constexpr Normalizer kNormalizers[] = {
      {"fragment-encode", Normalizer::Kind::kFragmentEncode, ""},
      {"fragment-strip", Normalizer::Kind::kFragmentStrip, ""},
      {"path-merge-slashes", Normalizer::Kind::kMergeSlashes, ""},
      {"path-strip-dot", Normalizer::Kind::kStripDot, ""},
      {"path-strip-dotdot", Normalizer::Kind::kStripDotdot, "full"},
      {"percent-decode-unreserved", Normalizer::Kind::kDecodeUnreserved, "strict"},
      {"percent-to-uppercase", Normalizer::Kind::kPercentUpper, "strict"},
      {"query-sort-by-name", Normalizer::Kind::kSortQuery, ""},
  };
  for (const auto& n : kNormalizers)
    if (n.name == name) return &n;
  return nullptr;
}

bool normalize_uri(Normalizer::Kind kind, bool option, std::string_view target, std::string* out) {
  using K = Normalizer::Kind;
  switch (kind) {
    case K::kFragmentEncode: {
      std::size_t h = target.find('#');
      out->assign(target);
      if (h == std::string_view::npos) return true;
      out->resize(h);
      for (char c : target.substr(h)) {
        if (c == '#') *out += "%23";
        else *out += c;
      }
      return true;
    }
    case K::kFragmentStrip:
      out->assign(target.substr(0, target.find('#')));
      return true;
    case K::kMergeSlashes: *out = merge_slashes(target); return true;
    case K::kStripDot: *out = strip_dot(target); return true;
    case K::kStripDotdot: *out = strip_dotdot(target, option); return true;
    case K::kDecodeUnreserved: return decode_unreserved(target, option, out);
    case K::kPercentUpper: return upper_percent(target, option, out);
    case K::kSortQuery: *out = sort_query(target); return true;
  }
  return true;
}

}  // namespace sluice::rules
