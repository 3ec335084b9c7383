#pragma once
// What the config tests share: run the loader on a text and look at its diagnostics.
#include <stdexcept>
#include <string>
#include <vector>

#include "config/loader.h"

namespace sluice::config::testing {

struct Run {
  LoadResult r;
  std::vector<Diagnostic> diags;
  std::string all() const {
    std::string s;
    for (const auto& d : diags) s += d.text + "\n";
    return s;
  }
  // A diagnostic with exactly this text.
  bool has(const std::string& text) const {
    for (const auto& d : diags)
      if (d.text == text) return true;
    return false;
  }
  bool contains(const std::string& part) const { return all().find(part) != std::string::npos; }
  const GlobalConfig& global() const { return r.model->global; }
};

// The parsed proxy named `name` (throws when there is none).
inline const ProxyConfig& proxy(const Run& r, const std::string& name) {
  for (const auto& p : r.r.model->proxies)
    if (p.name == name) return p;
  throw std::runtime_error("no proxy " + name);
}

// The three timeouts that keep a proxy free of the missing-timeout warnings.
inline constexpr const char* kTimeouts =
    "  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n";

// Loads `text` as the file "f.cfg".
inline Run parse(const std::string& text, bool diag = false) {
  Run run;
  LoadOptions o;
  o.diag = diag;
  run.r = load_text(text, "f.cfg", o, [&](const Diagnostic& d) { run.diags.push_back(d); });
  return run;
}

}  // namespace sluice::config::testing
