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
bool g_capture = false;
std::string g_captured;
constexpr std::size_t kMaxCaptured = 64 * 1024;

void emit(const char* label, std::string_view context, std::string_view text, bool shown = true) {
  std::string line = fmt::format("{:<10} ({}) : {}{}\n", label, getpid(), context, text);
  if (g_capture && g_captured.size() + line.size() <= kMaxCaptured) g_captured += line;
  if (!shown) return;
  // fwrite, not fputs: a stray NUL in a message must not cut the rest of it.
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}
}  // namespace

void set_message_options(const MessageOptions& options) { g_options = options; }

int warnings_printed() { return g_warnings; }

void capture_messages(bool on) {
  g_capture = on;
  g_captured.clear();
  g_captured.shrink_to_fit();
}

const std::string& captured_messages() { return g_captured; }

void print(config::Severity severity, std::string_view text, bool config_context) {
  if (severity == config::Severity::kWarning) ++g_warnings;
  if (severity == config::Severity::kDiag) {
    if (!g_options.diag) return;
    ++g_warnings;   // diagnostics count as warnings, as in HAProxy
  }
  const bool shown = !g_options.quiet || g_options.verbose;
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
    emit("[NOTICE]", "", fmt::format("sluice version is {}", base::kVersion), shown);
    emit("[NOTICE]", "", fmt::format("path to executable is {}", g_options.executable), shown);
  }
  emit(label, config_context ? "config : " : "", text, shown);
}

void print(const config::Diagnostic& d) { print(d.severity, d.text, d.in_config_phase); }

}  // namespace sluice::app
