// Placeholder translation unit so the module builds before its implementation lands.
#include "rules/rules.h"

namespace sluice::rules {
std::string_view path_of(std::string_view t) { return t.substr(0, t.find('?')); }
bool Condition::eval(const RequestView&) const { return groups_.empty() && !unless_; }
bool Network::contains(const net::SocketAddress&) const { return false; }
Verdict apply_rules(const std::vector<HttpRule>&, RuleSide, HeadEdit&, RequestView) { return {}; }
}  // namespace sluice::rules
