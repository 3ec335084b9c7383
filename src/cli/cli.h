#pragma once
// The stats socket protocol (HAProxy's CLI) as a pure state machine: bytes in, bytes out,
// "close now" out. The runtime owns the socket and feeds it. One CliSession per connection;
// worker-local.
//
// The connection's mode (SessionState::mode), changed by `prompt` (cmd_prompt()):
//
//   kNonInteractive (start) --`prompt`, `prompt p`, `prompt timed`--> kPrompt
//   kNonInteractive --`prompt i`--> kInteractive --`prompt p`--> kPrompt
//   kPrompt --`prompt`, `prompt n`--> kNonInteractive;  kPrompt --`prompt i`--> kInteractive
//   kInteractive --`prompt n`--> kNonInteractive
//   kNonInteractive: end_of_line() after the first line's last command -> closed.
//
// What feed() does with the input, in any mode:
//
//   reading lines --process_line(): a line ending in `<<`--> collecting a payload (in_payload_)
//     --the end pattern (an empty line by default)--> the command runs (run_command()) ->
//     reading lines
//   reading lines --run_command() of a run_later command--> waiting (waiting()) --its reply
//     (set_on_reply(), then feed())--> reading lines, the rest of the line's commands next
//   reading lines --out_limit reached--> blocked (blocked()) --feed() after a drain--> reading
//   any --`quit` (cmd_quit()), a line over tune.bufsize, a payload too large, end_of_line() in
//     kNonInteractive--> closed (closing_: feed() returns false and produces nothing more)
//
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/model.h"
#include "stats/control.h"
#include "stats/snapshot.h"

namespace sluice::cli {

using Level = config::CliLevel;

// "admin", "operator" or "user", as `show cli level` prints it. Any thread.
const char* level_name(Level level);

// How a connection answers. The connection starts non-interactive: it answers one input
// line, then closes; interactive keeps it open without a prompt; prompt adds "> ".
enum class Mode { kNonInteractive, kInteractive, kPrompt };

// Per-connection state that the session commands (prompt, quit, user, operator, set timeout
// cli) change. It lives in the CliSession; commands reach it through CommandContext::session so
// that these commands are ordinary table entries (listed by help, matched by fuzzy search)
// rather than special cases in the parser. Worker-local, like the session.
struct SessionState {
  Level level = Level::kOperator;
  Mode mode = Mode::kNonInteractive;
  bool timed = false;                   // prompt shows the uptime
  bool quit = false;                    // close at once, nothing more is sent
  uint32_t timeout_override_ms = 0;     // `set timeout cli`; 0 = the configured one
  bool expert = false;                  // `expert-mode on` (admin)
  bool experimental = false;            // `experimental-mode on` (admin): experimental commands
};

// Context a command runs with.
struct CommandContext {
  Level level = Level::kOperator;
  int thread = 1;                       // 1-based thread running the command
  const stats::StatsSource* stats = nullptr;
  stats::ServerControl* control = nullptr;   // null: management commands change nothing
  SessionState* session = nullptr;      // null when a command runs outside a session (tests)
  std::string_view payload;             // lines after a `<<` word, LF-terminated; else empty
};

// The answer of a command that answers later (Command::run_later). Call it once, on the
// session's thread; calling it after the session is gone does nothing.
using Reply = std::function<void(std::string answer)>;

// Declared in tables next to the code that owns the command (see commands.cc); later modules
// (lb, check) add their own through register_command().
struct Command {
  std::vector<std::string> words;       // fixed leading words: {"show", "info"}
  // "show info [desc|json|typed|float]*". Empty: hidden from `help` and from the suggestions
  // of an unknown command (help, prompt and quit are printed by fixed lines instead).
  std::string usage;
  std::string help;                     // "report information about the running process"
  Level level = Level::kUser;
  // Gets all words of the command line (words[0] is the first keyword); appends its answer to
  // *out. Need not end the answer with LF; the session normalises framing.
  std::function<void(const CommandContext&, const std::vector<std::string>&, std::string* out)> run;
  // Instead of `run`, for commands whose answer comes from other threads (`show sess` asks
  // every worker): the session runs nothing more until `reply` is called, later, on its
  // thread. A command that finds an error at once may call `reply` before returning.
  std::function<void(const CommandContext&, const std::vector<std::string>&, Reply reply)>
      run_later = nullptr;
  // HAProxy's ACCESS_EXPERIMENTAL: runs only after `experimental-mode on`, and `help` lists it
  // only then.
  bool experimental = false;
};

// Adds a command, or replaces the one with the same words. Main thread, before any CliSession
// exists (start-up); the table is read without locking afterwards.
void register_command(Command command);
// Built-in commands first, then registered ones in registration order. Any thread once
// start-up is over.
const std::vector<Command>& commands();

// `show cli sockets`: the stats sockets as `<family>@<address>` with their level, in
// configuration order. Main thread, at start-up (like register_command()).
void set_cli_sockets(std::vector<std::pair<std::string, Level>> sockets);

// Byte limits of the protocol. A command line (with its LF) must fit in one buffer, as in
// HAProxy with tune.bufsize (kMaxLineBytes is its default; CliSession takes the configured
// one); a payload is capped like tune.cli.max-payload-size.
inline constexpr std::size_t kMaxLineBytes = 16384;
inline constexpr std::size_t kMaxPayloadBytes = 128 * 1024;
inline constexpr std::size_t kMaxWords = 64;
inline constexpr std::size_t kMaxPayloadPattern = 64;

class CliSession {
 public:
  // `stats` and `control` (may be null) must outlive the session. Worker-local.
  // `max_line` is tune.bufsize: the longest command line, its LF included.
  CliSession(Level level, const stats::StatsSource* stats, int thread,
             stats::ServerControl* control = nullptr, std::size_t max_line = kMaxLineBytes);
  CliSession(const CliSession&) = delete;
  CliSession& operator=(const CliSession&) = delete;

  // Feeds received bytes; appends what must be sent to *out. Returns false when the
  // connection must be closed once *out has been sent (non-interactive mode, quit, errors);
  // later calls then return false and produce nothing. Bytes without a final LF wait in the
  // session: when the client closes its write side, the runtime just drops them (a command
  // runs only after its LF).
  // Output backpressure (HAProxy parses the next command only when its output
  // buffer has room): no further command starts once out->size() reaches `out_limit`. The
  // remaining complete lines wait in the session (blocked() is then true) until the runtime,
  // having sent enough, calls feed() again, with no new bytes if it likes. Worker-local.
  bool feed(std::string_view bytes, std::string* out, std::size_t out_limit = SIZE_MAX);
  // Complete lines wait for output room: the runtime must not read more input (that would
  // only pile up here) and must call feed() again once the output has drained. Worker-local.
  bool blocked() const { return blocked_; }
  // A command is waiting for its answer from other threads (Command::run_later): the runtime
  // must not call feed() until `on_reply` (set_on_reply) has run. Worker-local.
  bool waiting() const { return waiting_ && !reply_ready_; }
  // Called on the session's thread when a waited-for answer arrives; the runtime then calls
  // feed() (with no new bytes) to send it and go on. Worker-local.
  void set_on_reply(std::function<void()> fn) { on_reply_ = std::move(fn); }

  // False in the default mode, where the connection closes after the first line. Worker-local.
  bool interactive() const { return state_.mode != Mode::kNonInteractive; }
  // Idle timeout of this connection, changed by `set timeout cli`. Worker-local.
  uint32_t idle_timeout_ms(uint32_t configured) const {
    return state_.timeout_override_ms ? state_.timeout_override_ms : configured;
  }

 private:
  // Takes one complete line (LF and a CR before it removed): adds a payload line, or splits
  // the line into line_cmds_. False: close the connection.
  bool process_line(std::string_view line, std::string* out);
  // Runs the next command of line_cmds_, and ends the line after its last one. False: close.
  bool run_next(std::string* out);
  // After the last command of an input line: close (default mode) or prompt.
  bool end_of_line(std::string* out);
  // Runs one command and appends its answer and the terminator. False: the command answers
  // later (waiting_), and whatever follows it waits.
  bool run_command(const std::vector<std::string>& words, std::string* out);
  // Appends a command's answer with the protocol's framing.
  void append_answer(std::string answer, std::string* out) const;
  void append_prompt(std::string* out) const;

  SessionState state_;
  bool closing_ = false;
  bool blocked_ = false;
  // A run_later command: waiting for its answer (reply_ready_ once it came, in reply_). The
  // line ends after it when it was the last command of its line (end_line_after_reply_).
  bool waiting_ = false;
  bool reply_ready_ = false;
  bool end_line_after_reply_ = false;
  bool in_command_ = false;   // inside run_later: a reply given now must not call on_reply_
  std::string reply_;
  std::function<void()> on_reply_;
  // Replies hold a weak reference: one arriving after the session is gone does nothing.
  std::shared_ptr<CliSession*> self_ = std::make_shared<CliSession*>(this);
  std::size_t max_line_;
  CommandContext ctx_;
  std::string pending_;           // bytes of an incomplete line
  std::size_t scanned_ = 0;       // bytes of pending_ already known to hold no LF
  // The commands of the line being run (split at `;`) and the next one to run.
  struct LineCommand {
    std::vector<std::string> words;
    bool too_many = false;        // more than kMaxWords words: answered with an error
    bool payload = false;         // ends with `<<[pattern]`: waits for its payload
    std::string pattern;
  };
  std::vector<LineCommand> line_cmds_;
  std::size_t line_next_ = 0;
  // A `<<` payload being collected: the command waiting for it and its end pattern.
  bool in_payload_ = false;
  std::vector<std::string> payload_words_;
  std::string payload_pattern_;
  std::string payload_;
};

}  // namespace sluice::cli
