// http-after-response: the last rules every response goes through, the server's (after the
// http-response rules, before its head is written) and sluice's own answers (error pages,
// redirects, `return`, a response rule's deny), as HAProxy runs them. The backend's rules
// first, then the frontend's; `allow` stops the list it is in.
#include <string>
#include <string_view>

#include "http/http.h"
#include "proxy/http_txn.h"

namespace sluice::proxy {

rules::RequestView HttpTxn::view_of_response(int code, rules::HeadEdit& edit,
                                             HttpCodecs* codecs, ProxyEnv& env) {
  rules::RequestView view;
  env.be = be_;
  env.srv = be_ ? leg_.server() : nullptr;
  env.stream = this;
  env.response_side = true;
  view.env = &env;
  view.avail = sample::kAtHttpResponse;
  attach_vars(view, codecs);
  view.src = &client_;
  view.dst_port = local_port();
  view.dst = local_addr();
  view.captures = captures();
  view.res.status = code;
  if (be_ && leg_.connected_ms()) {   // the server connection (bc_*, %si, %bi)
    view.srv_dst = leg_.target();
    view.srv_src = leg_.source();
    view.srv_fd = server_fd;
  }
  if (have_req_copy_ && codecs) {
    view.req.method = codecs->req_copy.method;
    view.req.target = codecs->req_copy.target;
    view.req.headers = &codecs->req_copy.headers;
  }
  received_line(view.req);   // kept when a log line or unique id may show it
  view.res.headers = &edit.headers;
  view.res.body = res_body_;
  view.res.body_final = res_body_whole_;
  return view;
}

void HttpTxn::after_response(int code, rules::HeadEdit& edit, HttpCodecs* codecs) {
  if (!has_after_response_rules()) return;
  ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
  rules::RequestView view = view_of_response(code, edit, codecs, env);
  const Proxy* be = be_ ? be_ : &fe_;
  const Proxy* second = be == &fe_ ? nullptr : &fe_;
  for (const Proxy* px : {be, second}) {
    if (!px || px->settings.h.after_response_rules.empty()) continue;
    if (edit.status) view.res.status = edit.status;
    run_rules(px->settings.h.after_response_rules, rules::RuleSide::kAfterResponse, edit, view);
  }
}

int HttpTxn::after_response_local(std::string& bytes, HttpCodecs* codecs) {
  if (!has_after_response_rules()) return 0;
  const std::size_t end = bytes.find("\r\n\r\n");
  if (end == std::string::npos) return 0;   // an empty errorfile: nothing is sent
  // The head of sluice's own message: "HTTP/1.x <code> <reason>" and its fields, one per line.
  std::string_view head(bytes.data(), end);
  std::size_t eol = head.find("\r\n");
  std::string_view start = head.substr(0, eol);
  std::size_t sp1 = start.find(' ');
  if (sp1 == std::string_view::npos) return 0;
  std::string_view version = start.substr(0, sp1);
  std::string_view rest = start.substr(sp1 + 1);
  std::size_t sp2 = rest.find(' ');
  std::string_view code = rest.substr(0, sp2);
  std::string_view reason = sp2 == std::string_view::npos ? std::string_view() : rest.substr(sp2 + 1);
  int old_status = 0;
  for (char c : code) old_status = old_status * 10 + (c - '0');
  rules::HeadEdit edit;
  std::string_view fields = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
  while (!fields.empty()) {
    std::size_t e = fields.find("\r\n");
    std::string_view line = fields.substr(0, e);
    fields = e == std::string_view::npos ? std::string_view() : fields.substr(e + 2);
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    edit.headers.push_back({line.substr(0, colon), value});
  }
  const std::size_t count = edit.headers.size();
  after_response(old_status, edit, codecs);
  if (!edit.changed && !edit.status && edit.headers.size() == count) return 0;
  std::string out;
  out.reserve(bytes.size() + 64);
  out.append(version);
  out += ' ';
  if (edit.status) {
    out += std::to_string(edit.status);
    out += ' ';
    out.append(edit.reason.empty() ? http::default_reason(edit.status) : edit.reason);
  } else {
    out.append(code);
    out += ' ';
    out.append(reason);
  }
  out += "\r\n";
  for (const auto& h : edit.headers) {
    // Names lowercase, as HAProxy writes HTTP/1 heads it builds.
    for (char c : h.name) out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    out += ": ";
    out.append(h.value);
    out += "\r\n";
  }
  out += "\r\n";
  out.append(bytes, end + 4, std::string::npos);
  bytes = std::move(out);
  return edit.status;
}

}  // namespace sluice::proxy
