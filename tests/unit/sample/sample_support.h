#pragma once
// Shared by the sample language's unit tests.
#include <string>
#include <string_view>

#include "sample/expr.h"

namespace sluice::sample::testing {

// The parse error of `text` as HAProxy words it (without location), or "ok".
inline std::string parse_error(std::string_view text) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  return r.ok() ? std::string("ok") : r.error().message;
}

// Evaluates "req.body<conv>" (conv: ",json_query(...)...") with `body` as the request body:
// its text, "<none>" when there is no sample, or "parse error: <message>".
inline std::string on_body(std::string_view body, std::string_view conv) {
  ParseCtx pc;
  auto r = Expr::parse("req.body" + std::string(conv), pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  Ctx ctx;
  ctx.avail = kAtHttpRequest;
  ctx.req.body = body;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

// The type of that sample, Type::kAny when there is none (or it does not parse).
inline Type type_on_body(std::string_view body, std::string_view conv) {
  ParseCtx pc;
  auto r = Expr::parse("req.body" + std::string(conv), pc);
  Ctx ctx;
  ctx.avail = kAtHttpRequest;
  ctx.req.body = body;
  Sample s;
  if (!r.ok() || !r->eval(ctx, s)) return Type::kAny;
  return s.type;
}

}  // namespace sluice::sample::testing
