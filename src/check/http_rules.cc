// http-check's send and expect (check/rules.h), on sluice's HTTP parser (src/http).
#include <algorithm>
#include <cctype>
#include <iterator>

#include <fmt/format.h>

#include "base/strings.h"
#include "check/rules.h"
#include "http/http.h"

namespace sluice::check {

bool status_matches(int code, std::string_view list) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    auto num = [](std::string_view s, int* out) {
      if (s.empty() || s.size() > 6) return false;
      int n = 0;
      for (char c : s) {
        if (c < '0' || c > '9') return false;
        n = n * 10 + (c - '0');
      }
      *out = n;
      return true;
    };
    const std::size_t dash = item.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (num(item, &lo) && code == lo) return true;
    } else if (num(item.substr(0, dash), &lo) && num(item.substr(dash + 1), &hi) && code >= lo &&
               code <= hi) {
      return true;
    }
  }
  return false;
}

std::string http_request(const CheckRule& r, const std::function<std::string(int)>& render,
                         std::string_view state) {
  std::string out = fmt::format("{} {} {}\r\n", r.method, r.fmt >= 0 ? render(r.fmt) : r.uri,
                                r.version);
  if (!state.empty()) fmt::format_to(std::back_inserter(out), "x-haproxy-server-state: {}\r\n", state);
  const std::string body = r.body_fmt >= 0 ? render(r.body_fmt) : r.body;
  bool has_len = false, has_conn = false;
  for (const CheckRule::Field& f : r.fields) {
    std::string name = f.name;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    has_len = has_len || name == "content-length";
    has_conn = has_conn || name == "connection";
    fmt::format_to(std::back_inserter(out), "{}: {}\r\n", name, f.fmt >= 0 ? render(f.fmt) : f.value);
  }
  if (!body.empty() && !has_len) fmt::format_to(std::back_inserter(out), "content-length: {}\r\n", body.size());
  if (r.version == "HTTP/1.1" && !has_conn) out += "connection: close\r\n";
  out += "\r\n";
  out += body;
  return out;
}

namespace {

bool compare(CheckRule::Cmp cmp, const base::Regex* re, std::string_view text, std::string_view pat,
             bool icase) {
  using C = CheckRule::Cmp;
  auto eq = [&](std::string_view a, std::string_view b) {
    return icase ? base::iequals(a, b) : a == b;
  };
  switch (cmp) {
    case C::kStr: return eq(text, pat);
    case C::kBeg: return text.size() >= pat.size() && eq(text.substr(0, pat.size()), pat);
    case C::kEnd: return text.size() >= pat.size() && eq(text.substr(text.size() - pat.size()), pat);
    case C::kSub: {
      if (!icase) return text.find(pat) != std::string_view::npos;
      for (std::size_t i = 0; i + pat.size() <= text.size(); ++i)
        if (base::iequals(text.substr(i, pat.size()), pat)) return true;
      return false;
    }
    case C::kReg: return re && re->search(text);
  }
  return false;
}

// hdr: a field whose name matches and, with a value pattern, one of whose comma-separated
// values (fhdr: its whole value) matches it.
bool header_matches(const CheckRule& r, const std::vector<http::Header>& headers) {
  for (const http::Header& h : headers) {
    // Field names compare without case, as HTTP says.
    if (!compare(r.name_cmp, r.name_re.get(), h.name, r.hdr_name, true)) continue;
    if (!r.has_value) return true;
    if (r.match == CheckRule::Match::kFhdr) {
      if (compare(r.value_cmp, r.re.get(), base::trim(h.value), r.bytes, false)) return true;
      continue;
    }
    std::string_view v = h.value;
    while (true) {
      const std::size_t comma = v.find(',');
      if (compare(r.value_cmp, r.re.get(), base::trim(v.substr(0, comma)), r.bytes, false)) return true;
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return false;
}

}  // namespace

ExpectVerdict evaluate_http_expect(const CheckRule& r, std::string_view in, bool last,
                                   std::string_view method, std::string_view rendered,
                                   HttpOutcome* out) {
  using M = CheckRule::Match;
  http::ResponseParser parser;
  parser.set_request_method(http::method_from(method));
  const http::ParseStatus st = parser.parse(in);
  if (st == http::ParseStatus::kIncomplete && !last) return ExpectVerdict::kWait;
  if (st != http::ParseStatus::kComplete) {
    // Nothing that parses as a response: HAProxy reports a socket error, without words.
    out->status = lb::CheckStatus::kSockErr;
    out->code = 0;
    out->info.clear();
    return ExpectVerdict::kFail;
  }
  const http::ResponseHead& h = parser.head();
  out->code = h.status;
  const std::string reason(h.reason);
  bool found = false;
  switch (r.match) {
    case M::kStatus: found = status_matches(h.status, r.pattern); break;
    case M::kRstatus: found = r.re && r.re->search(std::to_string(h.status)); break;
    case M::kHdr:
    case M::kFhdr: found = header_matches(r, h.headers); break;
    case M::kBody:
    case M::kRbody:
    case M::kBodyLf: {
      // The body as far as it came: whole when its length is reached, its last chunk read, or
      // the server closed (a short body is judged as it is).
      std::string_view raw = in.substr(parser.consumed());
      std::string decoded;
      bool whole = last;
      if (h.body == http::BodyKind::kContentLength) {
        whole = whole || raw.size() >= h.content_length;
        raw = raw.substr(0, static_cast<std::size_t>(std::min<uint64_t>(raw.size(), h.content_length)));
      } else if (h.body == http::BodyKind::kChunked) {
        http::ChunkedDecoder dec;
        whole = whole || http::decode_chunks(raw, dec, &decoded) == http::ChunkEvent::Kind::kDone;
        raw = decoded;
      } else if (h.body == http::BodyKind::kNone) {
        whole = true;
        raw = {};
      }
      if (r.match == M::kRbody) found = r.re && r.re->search(raw);
      else found = raw.find(r.match == M::kBodyLf ? rendered : std::string_view(r.bytes)) !=
                   std::string_view::npos;
      if (!found && !whole) return ExpectVerdict::kWait;
      if (found != r.negate) return ExpectVerdict::kPass;
      out->status = r.error_status_set ? r.error_status : lb::CheckStatus::kL7Rsp;
      out->code = 0;
      out->info = "HTTP content check did not match";
      return ExpectVerdict::kFail;
    }
    default: return ExpectVerdict::kFail;
  }
  if (found != r.negate) return ExpectVerdict::kPass;
  // A status or a field that is not the one wanted: HAProxy reports the status and its reason.
  out->status = r.error_status_set ? r.error_status : lb::CheckStatus::kL7Sts;
  out->info = reason;
  return ExpectVerdict::kFail;
}

}  // namespace sluice::check
