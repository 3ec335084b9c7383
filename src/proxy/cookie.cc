#include "proxy/cookie.h"
#include "proxy/cookie_table.h"

#include <arpa/inet.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace sluice::proxy {

namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// One cookie of a Cookie field: [begin, end) in the field's value, its name and value.
struct Item {
  std::size_t begin = 0, end = 0;
  std::string_view name, value;
  bool has_eq = false;
  std::string text;     // replacement text when changed
  bool changed = false, removed = false;
};

// The end of a cookie value from `i`: the first ';' or ',' outside double quotes.
std::size_t value_end(std::string_view v, std::size_t i) {
  bool quoted = false;
  for (; i < v.size(); ++i) {
    if (v[i] == '"') quoted = !quoted;
    else if (!quoted && (v[i] == ';' || v[i] == ',')) break;
  }
  return i;
}

void split_request_cookies(std::string_view v, std::vector<Item>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && (is_space(v[i]) || v[i] == ';' || v[i] == ',')) ++i;
    if (i >= v.size()) break;
    Item it;
    it.begin = i;
    std::size_t j = i;
    while (j < v.size() && v[j] != '=' && v[j] != ';' && v[j] != ',') ++j;
    it.name = trim(v.substr(i, j - i));
    std::size_t end = j;
    if (j < v.size() && v[j] == '=') {
      it.has_eq = true;
      end = value_end(v, j + 1);
      it.value = trim(v.substr(j + 1, end - j - 1));
    }
    // The cookie's text ends with its value (trailing blanks are not part of it).
    std::size_t e = end;
    while (e > it.begin && is_space(v[e - 1])) --e;
    it.end = e;
    out.push_back(it);
    i = end;
  }
}

// The field's value without the removed cookies and with the changed ones: the text between
// two kept cookies is the separator that followed the first of them.
std::string rebuild(std::string_view v, const std::vector<Item>& items) {
  std::string out;
  const Item* prev = nullptr;
  for (std::size_t k = 0; k < items.size(); ++k) {
    const Item& it = items[k];
    if (it.removed) continue;
    if (prev) {
      // the separator after prev: up to the next cookie of the original
      std::size_t next_begin = v.size();
      for (std::size_t m = 0; m < items.size(); ++m)
        if (&items[m] == prev && m + 1 < items.size()) next_begin = items[m + 1].begin;
      out.append(v.substr(prev->end, next_begin - prev->end));
    }
    if (it.changed) out += it.text;
    else out.append(v.substr(it.begin, it.end - it.begin));
    prev = &it;
  }
  return out;
}

uint32_t date_of(int s30) { return static_cast<uint32_t>(s30) << 2; }

bool starts_with_capture(std::string_view text, std::string_view cap) {
  return text.size() >= cap.size() && text.substr(0, cap.size()) == cap;
}

// HAProxy's cacheability of a response for `nocache` (GET and HEAD only, a status cacheable
// by default, no Pragma: no-cache nor private / no-cache / no-store / s-maxage=0 / a lone
// max-age=0, and freshness information or a validator).
bool response_cacheable(bool cacheable, int status, const std::vector<http::Header>& hs) {
  switch (status) {
    case 200: case 203: case 204: case 206: case 300: case 301: case 404: case 405: case 410:
    case 414: case 501:
      break;
    default:
      cacheable = false;
  }
  if (status < 200) return false;
  for (const auto& h : hs)
    if (http::iequals(h.name, "pragma")) {
      if (http::iequals(h.value, "no-cache")) return false;
      break;
    }
  bool null_maxage = false, fresh = false;
  auto starts = [](std::string_view s, std::string_view p) {
    return s.size() >= p.size() && http::iequals(s.substr(0, p.size()), p);
  };
  for (const auto& h : hs) {
    if (!http::iequals(h.name, "cache-control")) continue;
    std::string_view v = h.value;
    while (!v.empty()) {
      std::size_t c = v.find(',');
      std::string_view e = trim(v.substr(0, c));
      v = c == std::string_view::npos ? std::string_view{} : v.substr(c + 1);
      if (http::iequals(e, "public")) {
        cacheable = true;
      } else if (http::iequals(e, "max-age=0")) {
        null_maxage = true;
      } else if (http::iequals(e, "private") || http::iequals(e, "no-cache") ||
                 http::iequals(e, "no-store") || http::iequals(e, "s-maxage=0")) {
        cacheable = false;
      } else if (starts(e, "no-cache=\"set-cookie")) {
        // only the cookie may not be cached
      } else if (starts(e, "s-maxage")) {
        fresh = true;
        null_maxage = false;
      } else if (starts(e, "max-age")) {
        fresh = true;
      }
    }
  }
  if (null_maxage) cacheable = false;
  bool validator = false;
  for (const auto& h : hs) {
    if (!fresh && http::iequals(h.name, "expires")) fresh = true;
    if (http::iequals(h.name, "etag") || http::iequals(h.name, "last-modified")) validator = true;
  }
  if (!fresh && !validator) cacheable = false;
  return cacheable;
}

}  // namespace

std::string dynamic_cookie(std::string_view key, const void* addr, std::size_t addr_len,
                           uint16_t port) {
  std::string buf(key);
  buf.append(static_cast<const char*>(addr), addr_len);
  const uint32_t p = htonl(port);
  buf.append(reinterpret_cast<const char*>(&p), 4);
  return fmt::format("{:016x}", static_cast<unsigned long long>(XXH64(buf.data(), buf.size(), 0)));
}

void s30_to_b64(uint32_t v, char out[5]) {
  for (int i = 4; i >= 0; --i) {
    out[i] = kB64[v & 63];
    v >>= 6;
  }
}

int b64_to_s30(const char in[5]) {
  int v = 0;
  for (int i = 0; i < 5; ++i) {
    const char* p = std::strchr(kB64, in[i]);
    if (!in[i] || !p) return -1;
    v = (v << 6) | static_cast<int>(p - kB64);
  }
  return v;
}

namespace {

// The values a request reads: those of the configuration until the CLI changed the table,
// then its current snapshot (one hazard read, held while `fn` runs).
template <class Fn>
bool with_server_cookies(const CookieSettings* ck, Fn&& fn) {
  static const std::vector<std::string> kNone;
  if (!ck) return fn(kNone);
  if (ck->table && ck->table->changed()) [[unlikely]] {
    CookieTable::Guard g = ck->table->read();
    return fn(g->values);
  }
  return fn(ck->server_cookies);
}

bool request_cookies_with(const CookieRequest& in, const std::vector<std::string>& server_cookies,
                          const ServerStates& servers, std::vector<http::Header>& headers,
                          http::StringStore& store, CookieTxn& t) {
  thread_local std::vector<Item> items;
  const CookieSettings* ck = in.ck;
  bool edited = false, evaluated = false;
  for (std::size_t hi = 0; hi < headers.size();) {
    if (!http::iequals(headers[hi].name, "cookie")) {
      ++hi;
      continue;
    }
    const std::string_view v = headers[hi].value;
    split_request_cookies(v, items);
    bool touched = false;
    for (Item& it : items) {
      if (!it.name.empty() && it.name[0] == '$') continue;   // RFC 2109 attributes
      const std::size_t val_end = it.has_eq ? it.end : it.begin + it.name.size();
      if (!in.capture.empty() && !t.has_cli &&
          starts_with_capture(v.substr(it.begin, val_end - it.begin), in.capture)) {
        t.has_cli = true;
        t.cli.assign(v.substr(it.begin, std::min<std::size_t>(val_end - it.begin,
                                                              static_cast<std::size_t>(in.capture_len))));
      }
      if (!ck || !it.has_eq || it.name != ck->name) continue;
      const std::string_view val = it.value;
      std::size_t delim = val.size();
      if (ck->mode == CookieSettings::Mode::kPrefix) {
        delim = std::min(val.find('~'), val.size());
      } else if (std::size_t bar = val.find('|'); bar != std::string_view::npos) {
        delim = bar;
        if (!evaluated) {
          if (val.size() - bar - 1 >= 5) {
            int d = b64_to_s30(val.data() + bar + 1);
            if (d > 0) t.last_date = date_of(d);
          }
          std::size_t bar2 = val.find('|', bar + 1);
          if (bar2 != std::string_view::npos && val.size() - bar2 > 5) {
            int d = b64_to_s30(val.data() + bar2 + 1);
            if (d > 0) t.first_date = date_of(d);
          }
        }
      }
      if (!evaluated) {
        evaluated = true;
        const int64_t now = in.now_s;
        std::size_t id_len = delim;
        if (t.first_date && ck->maxlife_s &&
            (now - t.first_date > ck->maxlife_s || static_cast<int64_t>(t.first_date) - now > 86400)) {
          t.ck = 'O';
          id_len = 0;
          t.first_date = t.last_date = 0;
        } else if (t.last_date && ck->maxidle_s &&
                   (now - t.last_date > ck->maxidle_s || static_cast<int64_t>(t.last_date) - now > 86400)) {
          t.ck = 'E';
          id_len = 0;
          t.first_date = t.last_date = 0;
        }
        const std::string_view id = val.substr(0, id_len);
        if (!id.empty() && !t.ignore) {
          for (std::size_t s = 0; s < server_cookies.size(); ++s) {
            if (server_cookies[s].empty() || server_cookies[s] != id) continue;
            const bool running = servers.running(static_cast<int>(s));
            if (running || in.persist || t.force) {
              t.ck = running ? 'V' : 'D';
              t.server = static_cast<int>(s);
              break;
            }
            t.ck = 'D';
          }
        }
        if (t.server < 0 && t.ck != 'D' && t.ck != 'E' && t.ck != 'O') t.ck = t.ignore ? 'U' : 'I';
      }
      if (ck->mode == CookieSettings::Mode::kPrefix && delim != val.size()) {
        it.text.assign(v.substr(it.begin, static_cast<std::size_t>(val.data() - v.data()) - it.begin));
        it.text.append(val.substr(delim + 1));
        it.changed = touched = true;
      } else if (ck->mode == CookieSettings::Mode::kInsert && ck->indirect) {
        it.removed = touched = true;
      }
    }
    if (!touched) {
      ++hi;
      continue;
    }
    edited = true;
    std::string nv = rebuild(v, items);
    if (nv.empty()) {
      headers.erase(headers.begin() + static_cast<std::ptrdiff_t>(hi));
      continue;
    }
    headers[hi].value = http::keep(store, std::move(nv));
    ++hi;
  }
  return edited;
}

bool response_cookies_with(const CookieResponse& in,
                           const std::vector<std::string>& server_cookies,
                           std::vector<http::Header>& headers, http::StringStore& store,
                           CookieTxn& t) {
  const CookieSettings* ck = in.ck;
  const bool known = in.server >= 0;
  const std::string* srv_cookie =
      ck && known && static_cast<std::size_t>(in.server) < server_cookies.size()
          ? &server_cookies[static_cast<std::size_t>(in.server)]
          : nullptr;
  bool edited = false;
  for (std::size_t hi = 0; hi < headers.size();) {
    if (!http::iequals(headers[hi].name, "set-cookie")) {
      ++hi;
      continue;
    }
    const std::string_view v = headers[hi].value;
    // One cookie per Set-Cookie field: name=value, then its attributes after ';'.
    std::size_t semi = value_end(v, 0);
    while (semi < v.size() && v[semi] == ',') semi = value_end(v, semi + 1);   // ',' is no separator here
    std::size_t eq = v.find('=');
    std::string_view pair = trim(v.substr(0, semi));
    if (!in.capture.empty() && !t.has_srv && starts_with_capture(pair, in.capture)) {
      t.has_srv = true;
      t.srv.assign(pair.substr(0, std::min<std::size_t>(pair.size(), static_cast<std::size_t>(in.capture_len))));
    }
    if (!ck || eq == std::string_view::npos || eq > semi || trim(v.substr(0, eq)) != ck->name) {
      ++hi;
      continue;
    }
    t.sck = 'P';
    if (ck->preserve) {
      ++hi;
      continue;
    }
    if ((known && ck->mode == CookieSettings::Mode::kInsert) || (in.direct && ck->indirect)) {
      headers.erase(headers.begin() + static_cast<std::ptrdiff_t>(hi));
      t.sck = 'D';
      edited = true;
      continue;
    }
    if (srv_cookie && !srv_cookie->empty() &&
        (ck->mode == CookieSettings::Mode::kRewrite || ck->mode == CookieSettings::Mode::kPrefix)) {
      const std::string_view val = trim(v.substr(eq + 1, semi - eq - 1));
      const std::size_t vb = static_cast<std::size_t>(val.data() - v.data());
      std::string nv(v.substr(0, vb));
      nv += *srv_cookie;
      if (ck->mode == CookieSettings::Mode::kPrefix) {
        nv += '~';
        nv += val;
      }
      nv.append(v.substr(vb + val.size()));
      headers[hi].value = http::keep(store, std::move(nv));
      t.sck = 'R';
      edited = true;
    }
    ++hi;
  }
  if (!ck || ck->mode != CookieSettings::Mode::kInsert || !known) return edited;
  const int64_t now = in.now_s;
  const bool due = !in.direct ||
                   ((ck->maxidle_s || t.last_date) && (!t.last_date || static_cast<int64_t>(t.last_date) - now < 0)) ||
                   (ck->maxlife_s && !t.first_date) || (!ck->maxlife_s && t.first_date);
  if (!due || (ck->postonly && !in.post) || t.ignore) return edited;
  std::string c = ck->name;
  if (!srv_cookie || srv_cookie->empty()) {
    c += "=; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/";
  } else {
    c += '=';
    c += *srv_cookie;
    if (ck->maxidle_s || ck->maxlife_s) {
      char d[5];
      c += '|';
      s30_to_b64(static_cast<uint32_t>((now + 3) >> 2), d);
      c.append(d, 5);
      if (ck->maxlife_s) {
        c += '|';
        s30_to_b64(t.first_date ? t.first_date >> 2 : static_cast<uint32_t>((now + 3) >> 2), d);
        c.append(d, 5);
      }
    }
    c += "; path=/";
  }
  if (!ck->domain.empty()) c += "; domain=" + ck->domain;
  if (ck->httponly) c += "; HttpOnly";
  if (ck->secure) c += "; Secure";
  if (!ck->attrs.empty()) c += "; " + ck->attrs;
  headers.push_back({"set-cookie", http::keep(store, std::move(c))});
  t.sck = srv_cookie && !srv_cookie->empty() && in.direct ? 'U' : 'I';
  if (ck->nocache && response_cacheable(t.cacheable, in.status, headers))
    headers.push_back({"cache-control", "private"});
  return true;
}

}  // namespace

bool request_cookies(const CookieRequest& in, const ServerStates& servers,
                     std::vector<http::Header>& headers, http::StringStore& store, CookieTxn& t) {
  return with_server_cookies(in.ck, [&](const std::vector<std::string>& v) {
    return request_cookies_with(in, v, servers, headers, store, t);
  });
}

bool response_cookies(const CookieResponse& in, std::vector<http::Header>& headers,
                      http::StringStore& store, CookieTxn& t) {
  return with_server_cookies(in.ck, [&](const std::vector<std::string>& v) {
    return response_cookies_with(in, v, headers, store, t);
  });
}

}  // namespace sluice::proxy
