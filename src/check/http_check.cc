#include "check/http_check.h"

#include <fmt/format.h>

#include "base/regex.h"

namespace sluice::check {

namespace {

bool ieq(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

HttpVerdict verdict(lb::CheckStatus st, int code, std::string text) {
  HttpVerdict v;
  v.done = true;
  v.status = st;
  v.code = code;
  v.text = std::move(text);
  return v;
}

}  // namespace

std::string build_request(const HttpRequestSpec& spec) {
  std::string r = fmt::format("{} {} {}\r\n", spec.method, spec.uri, spec.version);
  bool has_conn = false, has_len = false;
  for (const auto& [n, v] : spec.headers) {
    r += fmt::format("{}: {}\r\n", n, v);
    has_conn = has_conn || ieq(n, "connection");
    has_len = has_len || ieq(n, "content-length");
  }
  if (!has_conn) r += "Connection: close\r\n";
  if (!spec.body.empty() && !has_len) r += fmt::format("Content-Length: {}\r\n", spec.body.size());
  r += "\r\n";
  r += spec.body;
  return r;
}

bool status_matches(int code, std::string_view list) {
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    std::size_t dash = item.find('-');
    auto num = [](std::string_view s, int* out) {
      s = trim(s);
      if (s.empty()) return false;
      int n = 0;
      for (char c : s) {
        if (c < '0' || c > '9') return false;
        n = n * 10 + (c - '0');
        if (n > 100000) return false;
      }
      *out = n;
      return true;
    };
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (num(item, &lo) && code == lo) return true;
    } else if (num(item.substr(0, dash), &lo) && num(item.substr(dash + 1), &hi)) {
      if (code >= lo && code <= hi) return true;
    }
  }
  return false;
}

HttpVerdict evaluate_response(std::string_view data, bool eof, const HttpExpect& expect) {
  std::size_t eol = data.find('\n');
  if (eol == std::string_view::npos) {
    if (!eof) return {};
    return verdict(lb::CheckStatus::kL7Rsp, 0, data.empty() ? "Empty response" : "Not an HTTP response");
  }
  std::string_view line = trim(data.substr(0, eol));
  // "HTTP/1.1 200 OK": version, space, three digits, then an optional reason.
  if (line.size() < 12 || line.substr(0, 5) != "HTTP/" || line[8] != ' ')
    return verdict(lb::CheckStatus::kL7Rsp, 0, "Not an HTTP response");
  int code = 0;
  for (std::size_t i = 9; i < 12; ++i) {
    if (line[i] < '0' || line[i] > '9') return verdict(lb::CheckStatus::kL7Rsp, 0, "Not an HTTP response");
    code = code * 10 + (line[i] - '0');
  }
  if (line.size() > 12 && line[12] != ' ') return verdict(lb::CheckStatus::kL7Rsp, 0, "Not an HTTP response");
  std::string reason(line.size() > 13 ? trim(line.substr(13)) : std::string_view{});

  bool ok = false;
  switch (expect.kind) {
    case HttpExpect::Kind::kDefault:
      ok = code >= 200 && code < 400;
      break;
    case HttpExpect::Kind::kStatus:
      ok = status_matches(code, expect.arg);
      break;
    case HttpExpect::Kind::kRstatus: {
      // Validated at configuration time; a pattern that does not compile never matches.
      base::Regex re;
      ok = re.compile(expect.arg, nullptr) && re.search(std::to_string(code));
      break;
    }
    case HttpExpect::Kind::kString: {
      std::size_t hdr_end = data.find("\r\n\r\n");
      std::size_t body_at = hdr_end == std::string_view::npos ? std::string_view::npos : hdr_end + 4;
      if (hdr_end == std::string_view::npos) {
        hdr_end = data.find("\n\n");
        body_at = hdr_end == std::string_view::npos ? std::string_view::npos : hdr_end + 2;
      }
      if (body_at == std::string_view::npos) {
        if (!eof) return {};
        return verdict(lb::CheckStatus::kL7Rsp, code, "Incomplete HTTP response");
      }
      // Content-Length, when present, says when the body is complete; otherwise read until close.
      long long clen = -1;
      std::string_view headers = data.substr(eol + 1, hdr_end - eol - 1);
      while (!headers.empty()) {
        std::size_t nl = headers.find('\n');
        std::string_view h = headers.substr(0, nl);
        headers = nl == std::string_view::npos ? std::string_view{} : headers.substr(nl + 1);
        std::size_t colon = h.find(':');
        if (colon != std::string_view::npos && ieq(trim(h.substr(0, colon)), "content-length")) {
          std::string v(trim(h.substr(colon + 1)));
          char* end = nullptr;
          long long n = std::strtoll(v.c_str(), &end, 10);
          if (end && *end == '\0' && n >= 0) clen = n;
        }
      }
      std::string_view body = data.substr(body_at);
      if (clen >= 0 && body.size() > static_cast<std::size_t>(clen)) body = body.substr(0, static_cast<std::size_t>(clen));
      bool found = body.find(expect.arg) != std::string_view::npos;
      bool complete = eof || (clen >= 0 && body.size() >= static_cast<std::size_t>(clen));
      if (!found && !complete) return {};
      if (found != expect.negate) return verdict(lb::CheckStatus::kL7Ok, code, reason);
      return verdict(lb::CheckStatus::kL7Rsp, code,
                     fmt::format("HTTP content check {}match '{}'", expect.negate ? "did " : "did not ",
                                 expect.arg));
    }
  }
  if (ok != expect.negate) return verdict(lb::CheckStatus::kL7Ok, code, reason);
  return verdict(lb::CheckStatus::kL7Sts, code, reason);
}

}  // namespace sluice::check
