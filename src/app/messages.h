#pragma once
// Operator messages in HAProxy's shape:
//   [ALERT]    (1234) : config : parsing [f.cfg:3] : unknown keyword 'foo' in 'global' section
// Main thread only.
#include <string>
#include <string_view>

#include "config/loader.h"

namespace sluice::app {

struct MessageOptions {
  bool quiet = false;     // -q
  bool verbose = false;   // -V (overrides -q)
  bool diag = false;      // -dD
  std::string executable;
};

void set_message_options(const MessageOptions& options);
void print(config::Severity severity, std::string_view text, bool config_context = false);
void print(const config::Diagnostic& d);
inline void alert(std::string_view text) { print(config::Severity::kAlert, text); }
inline void warning(std::string_view text) { print(config::Severity::kWarning, text); }
inline void notice(std::string_view text) { print(config::Severity::kNotice, text); }

int warnings_printed();

// The master of master-worker mode keeps the messages of its start (or reload) for the master
// CLI's `show startup-logs` and `reload` answers: every message from now on, quiet or not.
void capture_messages(bool on = true);
const std::string& captured_messages();

}  // namespace sluice::app
