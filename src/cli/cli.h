#pragma once
// The stats socket protocol (HAProxy's CLI; spec cli-and-stats.md section 1) as a pure state
// machine: bytes in, bytes out, "close now" out. The runtime owns the socket and feeds it.
// One CliSession per connection; worker-local.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/model.h"
#include "stats/snapshot.h"

namespace sluice::cli {

using Level = config::CliLevel;

// Context a command runs with.
struct CommandContext {
  Level level = Level::kOperator;
  int thread = 1;                       // 1-based thread running the command
  const stats::StatsSource* stats = nullptr;
};

// Declared in tables next to the code that owns the command (see commands.cc); later modules
// (lb, check) add their own through register_command().
struct Command {
  std::vector<std::string> words;       // fixed leading words: {"show", "info"}
  std::string usage;                    // "show info [desc|json|typed|float]*"
  std::string help;                     // "report information about the running process"
  Level level = Level::kUser;
  // Gets all words of the command line (words[0] is the first keyword); appends its answer to
  // *out. Need not end the answer with LF; the session normalises framing.
  std::function<void(const CommandContext&, const std::vector<std::string>&, std::string* out)> run;
};

void register_command(Command command);
const std::vector<Command>& commands();

class CliSession {
 public:
  CliSession(Level level, const stats::StatsSource* stats, int thread);

  // Feeds received bytes; appends what must be sent to *out. Returns false when the
  // connection must be closed once *out has been sent (non-interactive mode, quit, errors).
  bool feed(std::string_view bytes, std::string* out);

  // The client closed its write side: anything still buffered without LF is discarded.
  bool interactive() const { return mode_ != Mode::kNonInteractive; }
  // Idle timeout of this connection, changed by `set timeout cli`.
  uint32_t idle_timeout_ms(uint32_t configured) const {
    return timeout_override_ms_ ? timeout_override_ms_ : configured;
  }

 private:
  enum class Mode { kNonInteractive, kInteractive, kPrompt };
  Mode mode_ = Mode::kNonInteractive;
  bool timed_ = false;
  bool closing_ = false;
  uint32_t timeout_override_ms_ = 0;
  CommandContext ctx_;
  std::string pending_;   // bytes of an incomplete line
  // ... the implementation may add private members
};

}  // namespace sluice::cli
