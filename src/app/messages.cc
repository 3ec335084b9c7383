#include "app/messages.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "base/version.h"

namespace sluice::app {

namespace {
MessageOptions g_options;
bool g_banner_done = false;
int g_warnings = 0;

void emit(const char* label, std::string_view context, std::string_view text) {
  std::string line = fmt::format("{:<10} ({}) : {}{}\n", label, getpid(), context, text);
  // fwrite, not fputs: a stray NUL in a message must not cut the rest of it.
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}
}  // namespace

void set_message_options(const MessageOptions& options) { g_options = options; }

int warnings_printed() { return g_warnings; }

void print(config::Severity severity, std::string_view text, bool config_context) {
  if (severity == config::Severity::kWarning) ++g_warnings;
  if (severity == config::Severity::kDiag) {
    if (!g_options.diag) return;
    ++g_warnings;   // diagnostics count as warnings, as in HAProxy
  }
  if (g_options.quiet && !g_options.verbose) return;
  const char* label = "[NOTICE]";
  switch (severity) {
    case config::Severity::kAlert: label = "[ALERT]"; break;
    case config::Severity::kWarning: label = "[WARNING]"; break;
    case config::Severity::kNotice: label = "[NOTICE]"; break;
    case config::Severity::kDiag: label = "[DIAG]"; break;
  }
  if (!g_banner_done &&
      (severity == config::Severity::kAlert || severity == config::Severity::kWarning)) {
    g_banner_done = true;
    emit("[NOTICE]", "", fmt::format("sluice version is {}", base::kVersion));
    emit("[NOTICE]", "", fmt::format("path to executable is {}", g_options.executable));
  }
  emit(label, config_context ? "config : " : "", text);
}

void print(const config::Diagnostic& d) { print(d.severity, d.text, d.in_config_phase); }

}  // namespace sluice::app
