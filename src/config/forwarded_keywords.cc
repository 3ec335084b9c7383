// `option forwarded` (RFC 7239's Forwarded header) and `option originalto` (the connection's
// destination address in a header), with HAProxy 3.5's syntax and messages. The expressions of
// `option forwarded` are compiled once the whole configuration is read
// (Parser::compile_forwarded), as HAProxy resolves them at check time.
#include <fmt/format.h>

#include <tuple>

#include "config/proxy_keywords.h"
#include "sample/expr.h"

namespace sluice::config::proxy_kw {

void option_forwarded(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  if (l.prefix != Prefix::kNone) {
    no_extra(l, 2);
    px.forwarded = ForwardedConfig{};
    return;
  }
  ForwardedConfig fw;
  fw.enabled = true;
  fw.loc = l.loc;
  using Part = ForwardedConfig::Part;
  struct Param {
    std::string_view name;
    ForwardedConfig::Item ForwardedConfig::*item;
  };
  static constexpr Param kParams[] = {
      {"host", &ForwardedConfig::host},       {"by", &ForwardedConfig::by},
      {"by_port", &ForwardedConfig::by_port}, {"for", &ForwardedConfig::for_},
      {"for_port", &ForwardedConfig::for_port},
  };
  if (l.args.size() == 2) {
    // No parameter: HAProxy's defaults, proto and for.
    fw.proto = true;
    fw.for_.part = Part::kAuto;
  }
  for (std::size_t i = 2; i < l.args.size(); ++i) {
    const std::string& w = l.args[i];
    if (w == "proto") {
      fw.proto = true;
      continue;
    }
    const Param* found = nullptr;
    bool expr = false;
    for (const auto& pm : kParams) {
      if (w == pm.name) found = &pm;
      if (w == fmt::format("{}-expr", pm.name)) {
        found = &pm;
        expr = true;
      }
    }
    if (!found)
      throw ConfigError{l.where + "'option forwarded' only supports optional values: 'proto', "
                                  "'host', 'host-expr', 'by', 'by-expr', 'by_port', "
                                  "'by_port-expr', 'for', 'for-expr', 'for_port' and "
                                  "'for_port-expr'."};
    ForwardedConfig::Item& item = fw.*(found->item);
    if (!expr) {
      item = {Part::kAuto, "", nullptr};
      continue;
    }
    if (i + 1 >= l.args.size() || l.args[i + 1].empty())
      throw ConfigError{fmt::format("{}'{}' expects <expr> as argument.",
                                    l.where.substr(0, l.where.size() - 3) + ": ", w)};
    item = {Part::kExpr, l.args[i + 1], nullptr};
    ++i;
  }
  // A port alone says nothing: HAProxy warns and leaves it out.
  for (auto [port, node, pname, nname] :
       {std::tuple{&ForwardedConfig::by_port, &ForwardedConfig::by, "by_port", "by"},
        std::tuple{&ForwardedConfig::for_port, &ForwardedConfig::for_, "for_port", "for"}}) {
    if ((fw.*port).part == Part::kOff || (fw.*node).part != Part::kOff) continue;
    p.warning(fmt::format("{}'option forwarded' : '{}-expr' will be ignored because both '{}' "
                          "and '{}-expr' are unset", l.where, pname, nname, nname));
    fw.*port = {};
  }
  px.forwarded = std::move(fw);
}

void option_originalto(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  if (l.prefix != Prefix::kNone) {
    no_extra(l, 2);
    px.originalto = OriginalToConfig{};
    return;
  }
  OriginalToConfig ot;
  ot.enabled = true;
  for (std::size_t i = 2; i < l.args.size();) {
    const std::string& w = l.args[i];
    if (w == "except") {
      ot.has_except = true;
      ot.except = except_network(l, i + 1, "originalto");
      i += 2;
    } else if (w == "header") {
      if (i + 1 >= l.args.size() || l.args[i + 1].empty())
        throw ConfigError{l.where + "'option originalto header' expects <header_name> as "
                                    "argument."};
      ot.header = l.args[i + 1];
      i += 2;
    } else {
      throw ConfigError{l.where + "'option originalto' only supports optional values: 'except' "
                                  "and 'header'."};
    }
  }
  px.originalto = std::move(ot);
}

}  // namespace sluice::config::proxy_kw

namespace sluice::config {

void Parser::compile_forwarded(ProxyConfig& p) {
  if (!p.forwarded.enabled || !(p.caps & ProxyConfig::kBackend)) return;
  ForwardedConfig& fw = p.forwarded;
  for (ForwardedConfig::Item* item : {&fw.host, &fw.by, &fw.by_port, &fw.for_, &fw.for_port}) {
    if (item->part != ForwardedConfig::Part::kExpr) continue;
    const std::string where = fmt::format("{} '{}' [{}:{}]: ", type_word(p), p.name, fw.loc.file,
                                          fw.loc.line);
    // Evaluated with the request, after the backend's rules.
    item->expr = compile_expr(p, item->text, "'option forwarded' expression", where,
                              sample::kAtHttpRequest | sample::kUseBackend);
  }
}

}  // namespace sluice::config
