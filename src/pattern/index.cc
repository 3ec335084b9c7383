// The compiled lists of patterns and their lookups (HAProxy's pat_match_* and indexes).
#include <algorithm>
#include <cstring>

#include "http/http.h"
#include "pattern/pattern.h"

namespace sluice::pattern {

namespace {

// Lists up to this long are scanned: cheaper than hashing the sample.
constexpr std::size_t kScanMax = 8;

bool str_eq(std::string_view a, std::string_view b, bool icase) {
  return icase ? http::iequals(a, b) : a == b;
}

bool has_prefix(std::string_view s, std::string_view p, bool icase) {
  return p.size() <= s.size() && str_eq(s.substr(0, p.size()), p, icase);
}

bool contains_sub(std::string_view s, std::string_view p, bool icase) {
  if (p.size() > s.size()) return false;
  if (!icase) return s.find(p) != std::string_view::npos;
  for (std::size_t i = 0; i + p.size() <= s.size(); ++i)
    if (str_eq(s.substr(i, p.size()), p, icase)) return true;
  return false;
}

// HAProxy's match_word(): the pattern (without delimiters around it) must be a sequence of
// whole delimited words of the sample.
bool match_word(std::string_view smp, std::string_view pat, bool icase, std::string_view delims) {
  auto is_delim = [&](char c) { return delims.find(c) != std::string_view::npos; };
  while (!pat.empty() && is_delim(pat.front())) pat.remove_prefix(1);
  while (!pat.empty() && is_delim(pat.back())) pat.remove_suffix(1);
  if (pat.size() > smp.size()) return false;
  bool may_match = true;
  for (std::size_t c = 0; c + pat.size() <= smp.size(); ++c) {
    if (c < smp.size() && is_delim(smp[c])) {
      may_match = true;
      continue;
    }
    if (!may_match) continue;
    if (pat.empty()) {
      if (c == smp.size()) return true;
    } else if (str_eq(smp.substr(c, pat.size()), pat, icase) &&
               (c + pat.size() == smp.size() || is_delim(smp[c + pat.size()]))) {
      return true;
    }
    may_match = false;
  }
  return false;
}

bool in_range(const IntRange& r, int64_t n) {
  bool in = n >= r.min && n <= r.max;
  return in != r.negate;
}

void mask_bytes(const uint8_t* in, int len, int prefix, uint8_t* out) {
  for (int i = 0; i < len; ++i) {
    int keep = prefix - i * 8;
    out[i] = keep >= 8 ? in[i] : keep <= 0 ? 0 : static_cast<uint8_t>(in[i] & (0xFF << (8 - keep)));
  }
}

constexpr uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};

std::string& lower_buf(std::string_view s) {
  thread_local std::string b;
  b.assign(s);
  for (char& c : b)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return b;
}

}  // namespace

Index::Index(const Kind& kind, std::vector<Item> items, std::vector<std::unique_ptr<base::Regex>> regexes)
    : kind_(kind), items_(std::move(items)), regexes_(std::move(regexes)) {
  const auto n = static_cast<uint32_t>(items_.size());
  linear_ = n <= kScanMax;
  if (linear_) return;
  switch (kind_.method) {
    case Method::kStr:
    case Method::kBin:
      exact_.reserve(n);
      for (uint32_t i = 0; i < n; ++i) exact_.try_emplace(items_[i].cmp, i);
      break;
    case Method::kInt: {
      int_hashed_ = std::all_of(items_.begin(), items_.end(), [](const Item& it) {
        return it.range.min == it.range.max && !it.range.negate;
      });
      if (int_hashed_)
        for (uint32_t i = 0; i < n; ++i) exact_int_.try_emplace(items_[i].range.min, i);
      break;
    }
    case Method::kBeg: {
      sorted_.resize(n);
      for (uint32_t i = 0; i < n; ++i) sorted_[i] = i;
      std::stable_sort(sorted_.begin(), sorted_.end(),
                       [&](uint32_t a, uint32_t b) { return items_[a].cmp < items_[b].cmp; });
      // The longest proper prefix of each key among the keys before it in sorted order: a
      // stack of the keys that are prefixes of the current one.
      parent_.assign(n, -1);
      std::vector<int32_t> stack;
      for (uint32_t p = 0; p < n; ++p) {
        const std::string& k = items_[sorted_[p]].cmp;
        while (!stack.empty() && !k.starts_with(items_[sorted_[stack.back()]].cmp)) stack.pop_back();
        // A duplicate key points at its first copy, which is its "prefix" too.
        parent_[p] = stack.empty() ? -1 : stack.back();
        stack.push_back(static_cast<int32_t>(p));
      }
      break;
    }
    case Method::kIp: {
      auto add = [&](std::vector<IpTable>& tables, uint32_t i, int len) {
        const net::Network& net = items_[i].net;
        auto t = std::find_if(tables.begin(), tables.end(), [&](const IpTable& x) { return x.prefix == net.prefix; });
        if (t == tables.end()) {
          tables.push_back(IpTable{net.prefix, {}});
          t = tables.end() - 1;
        }
        t->keys.try_emplace(std::string_view(reinterpret_cast<const char*>(net.bytes), len), i);
      };
      for (uint32_t i = 0; i < n; ++i)
        add(items_[i].net.family == AF_INET ? v4_ : v6_, i, items_[i].net.family == AF_INET ? 4 : 16);
      auto longest = [](const IpTable& a, const IpTable& b) { return a.prefix > b.prefix; };
      std::sort(v4_.begin(), v4_.end(), longest);
      std::sort(v6_.begin(), v6_.end(), longest);
      break;
    }
    default:
      linear_ = true;
      break;
  }
}

bool Index::tree(const Kind& kind) {
  switch (kind.method) {
    case Method::kStr:
    case Method::kBeg: return !kind.icase;
    case Method::kIp: return true;
    default: return false;
  }
}

const Item* Index::find_beg(std::string_view s) const {
  const bool icase = kind_.icase;
  if (linear_) {
    // Case-sensitive: the longest prefix (HAProxy's tree); -i: the first in order (its list).
    const Item* best = nullptr;
    for (const Item& it : items_) {
      if (!has_prefix(s, it.cmp, icase)) continue;
      if (icase) return &it;
      if (!best || it.cmp.size() > best->cmp.size()) best = &it;
    }
    return best;
  }
  std::string_view q = icase ? std::string_view(lower_buf(s)) : s;
  // The greatest key <= q; the keys that are prefixes of q are that key's prefix chain (or
  // itself), cut to the length q shares with it.
  auto ub = std::upper_bound(sorted_.begin(), sorted_.end(), q,
                             [&](std::string_view v, uint32_t i) { return v < items_[i].cmp; });
  if (ub == sorted_.begin()) return nullptr;
  int32_t p = static_cast<int32_t>(ub - sorted_.begin()) - 1;
  const Item* best = nullptr;
  uint32_t best_idx = UINT32_MAX;
  while (p >= 0) {
    uint32_t i = sorted_[p];
    if (q.starts_with(items_[i].cmp)) {
      // Duplicates sort in written order; the first copy is the one that answers.
      while (parent_[p] >= 0 && items_[sorted_[parent_[p]]].cmp == items_[i].cmp) {
        p = parent_[p];
        i = sorted_[p];
      }
      if (!icase) return &items_[i];
      if (i < best_idx) {
        best_idx = i;
        best = &items_[i];
      }
    }
    p = parent_[p];
  }
  return best;
}

const Item* Index::find_str(std::string_view s, base::Regex::Groups* groups) const {
  const bool icase = kind_.icase;
  switch (kind_.method) {
    case Method::kStr:
    case Method::kBin:
      if (!linear_) {
        auto it = exact_.find(icase ? std::string_view(lower_buf(s)) : s);
        return it == exact_.end() ? nullptr : &items_[it->second];
      }
      for (const Item& it : items_)
        if (str_eq(s, it.cmp, icase && kind_.method == Method::kStr)) return &it;
      return nullptr;
    case Method::kBeg: return find_beg(s);
    case Method::kLen: return find_int(static_cast<int64_t>(s.size()));
    case Method::kMeth: return find_meth(s);
    default: break;
  }
  for (std::size_t i = 0; i < items_.size(); ++i) {
    const Item& it = items_[i];
    switch (kind_.method) {
      case Method::kEnd:
        if (it.cmp.size() <= s.size() && str_eq(s.substr(s.size() - it.cmp.size()), it.cmp, icase)) return &it;
        break;
      case Method::kSub:
        if (contains_sub(s, it.cmp, icase)) return &it;
        break;
      case Method::kDir:
        if (match_word(s, it.cmp, icase, "/")) return &it;
        break;
      case Method::kDom:
        if (match_word(s, it.cmp, icase, "/?.:")) return &it;
        break;
      case Method::kReg:
      case Method::kRegm:
        if (groups ? regexes_[i]->search_groups(s, groups) : regexes_[i]->search(s)) return &it;
        break;
      default: return nullptr;
    }
  }
  return nullptr;
}

const Item* Index::find_meth(std::string_view s) const {
  // A well-known method is compared by identity (exactly, as HTTP methods are case-sensitive);
  // any other name as a string, honouring -i, and only against a method that is not a
  // well-known one: `-i get` does not match GET (HAProxy).
  const bool other = http::method_from(s) == http::Method::kOther;
  for (const Item& it : items_) {
    if (http::method_from(it.cmp) != http::Method::kOther) {
      if (s == it.cmp) return &it;
    } else if (other && str_eq(s, it.cmp, kind_.icase)) {
      return &it;
    }
  }
  return nullptr;
}

const Item* Index::find_int(int64_t v) const {
  if (int_hashed_) {
    auto it = exact_int_.find(v);
    return it == exact_int_.end() ? nullptr : &items_[it->second];
  }
  for (const Item& it : items_)
    if (in_range(it.range, v)) return &it;
  return nullptr;
}

const Item* Index::find_ip_tables(bool v6, const uint8_t* bytes) const {
  const int len = v6 ? 16 : 4;
  uint8_t masked[16];
  for (const IpTable& t : v6 ? v6_ : v4_) {
    mask_bytes(bytes, len, t.prefix, masked);
    auto it = t.keys.find(std::string_view(reinterpret_cast<const char*>(masked), len));
    if (it != t.keys.end()) return &items_[it->second];
  }
  return nullptr;
}

const Item* Index::find_v4(const in_addr& a) const {
  if (linear_) {
    // The longest network of the sample's family, then the IPv6 ones through ::ffff:a.b.c.d.
    const Item* best = nullptr;
    for (int pass = 0; pass < 2 && !best; ++pass) {
      for (const Item& it : items_) {
        if ((it.net.family == AF_INET) != (pass == 0) || !it.net.contains_v4(a)) continue;
        if (!best || it.net.prefix > best->net.prefix) best = &it;
      }
    }
    return best;
  }
  uint8_t b[16];
  std::memcpy(b, &a, 4);
  if (const Item* it = find_ip_tables(false, b)) return it;
  std::memcpy(b, kV4Mapped, 12);
  std::memcpy(b + 12, &a, 4);
  return find_ip_tables(true, b);
}

const Item* Index::find_v6(const in6_addr& a) const {
  if (linear_) {
    const Item* best = nullptr;
    for (int pass = 0; pass < 2 && !best; ++pass) {
      for (const Item& it : items_) {
        if ((it.net.family == AF_INET6) != (pass == 0) || !it.net.contains_v6(a)) continue;
        if (!best || it.net.prefix > best->net.prefix) best = &it;
      }
    }
    return best;
  }
  if (const Item* it = find_ip_tables(true, a.s6_addr)) return it;
  if (std::memcmp(a.s6_addr, kV4Mapped, 12) != 0) return nullptr;
  return find_ip_tables(false, a.s6_addr + 12);
}

}  // namespace sluice::pattern
