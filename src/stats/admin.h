#pragma once
// The stats page's admin actions (`stats admin if <cond>`): the form a POST carries
// (application/x-www-form-urlencoded: `s=<server>` repeated, `action=<act>`, `b=<backend or
// #id>`) and its application to the servers through the ServerControl the CLI uses, with
// HAProxy 3.5's result codes (the `;st=<CODE>` of the 303 that answers the POST). Pure
// functions: HttpService (stats/http_service.h) calls them, the tests use a fake control.
// Any thread (ServerControl's methods are).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stats/control.h"

namespace sluice::stats {

// HAProxy's <select name=action> values.
enum class AdminAction {
  kReady, kDrain, kMaint,                   // administrative state
  kDisableHealth, kEnableHealth,            // dhlth, ehlth
  kHealthUp, kHealthNolb, kHealthDown,      // hrunn, hnolb, hdown
  kDisableAgent, kEnableAgent,              // dagent, eagent
  kAgentUp, kAgentDown,                     // arunn, adown
  kShutdown,                                // kill the server's sessions
};

struct AdminActionInfo {
  std::string_view value;   // the form's value
  std::string_view label;   // the option's text on HAProxy's page
  AdminAction action;
};

// Every action, in the order of HAProxy's select (the page lists them so).
std::span<const AdminActionInfo> admin_actions();
// The action a form value names (case-sensitive, as HAProxy compares); none if unknown.
std::optional<AdminAction> parse_admin_action(std::string_view value);

// What a POST body says, read as HAProxy 3.5 reads it: the parameters from the last one to
// the first, so that the last `b` and the last `action` win and the others are ignored.
struct AdminForm {
  // `s` values, decoded, in the order HAProxy applies them (the last one in the body first).
  std::vector<std::string> servers;
  std::optional<std::string> backend;   // the last `b`
  std::optional<std::string> action;    // the last `action`, not yet checked
  // A parameter of 2048 bytes or more (HAProxy's key buffer): the answer is ERRP, once what
  // follows it in the body has been applied. The parameters before it are not read.
  bool too_long = false;
};

// Keys and values are percent-decoded, `+` is a space; a parameter without `=` has an empty
// value; unknown keys are ignored. An undecodable parameter (a `%` without two hex digits)
// ends the reading there, without error: only what follows it in the body counts. A decoded
// NUL ends the text, as HAProxy handles C strings.
AdminForm parse_admin_form(std::string_view body);

// The outcome of a POST. kDone: every named server took the action; kNone: nothing to do (no
// server named, no backend or no action, or the action does not apply to any named server);
// kPart: some did; kErrp: invalid parameters (unknown backend or action, too long a
// parameter, or no named server known). kExcd (body too large) and kDeny (no admin rights)
// are decided before any form is read.
enum class AdminStatus { kDone, kNone, kPart, kErrp, kExcd, kDeny };
std::string_view admin_status_code(AdminStatus s);   // "DONE", "NONE", ...

// Applies the form to the servers. A known server that the action does not apply to counts
// neither as changed nor as named (HAProxy's counting): health actions without a health
// check, agent actions without an agent, forced health on a server that tracks another, and
// `shutdown` in a disabled proxy. A server already in the requested state counts as changed.
AdminStatus apply_admin_form(const AdminForm& form, ServerControl& control);

}  // namespace sluice::stats
