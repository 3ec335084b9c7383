// CliSession: line assembly, command splitting, escaping and answer framing (spec 1.2-1.3).
#include <fmt/format.h>

#include "cli/builtin.h"

namespace sluice::cli {
namespace {

constexpr std::string_view kLineTooBig =
    "The command line is too big for the buffer size. Please change 'tune.bufsize' in the "
    "configuration to use a bigger command.\n\n";
constexpr std::string_view kPayloadTooBig =
    "The payload is too big for the CLI (limit: 128 KiB, as tune.cli.max-payload-size).\n\n";
constexpr std::string_view kTooManyWords =
    "Too many arguments. Commands must have at most 64 arguments.\n\n";

// The command whose fixed words are the longest prefix of `words`.
const Command* find_command(const std::vector<std::string>& words) {
  const Command* best = nullptr;
  for (const auto& c : commands()) {
    if (c.words.empty() || c.words.size() > words.size()) continue;
    if (best && best->words.size() >= c.words.size()) continue;
    if (std::equal(c.words.begin(), c.words.end(), words.begin())) best = &c;
  }
  return best;
}

}  // namespace

CliSession::CliSession(Level level, const stats::StatsSource* stats, int thread,
                       stats::ServerControl* control, std::size_t max_line)
    : max_line_(max_line) {
  state_.level = level;
  ctx_.level = level;
  ctx_.stats = stats;
  ctx_.control = control;
  ctx_.thread = thread;
  ctx_.session = &state_;
}

bool CliSession::feed(std::string_view bytes, std::string* out, std::size_t out_limit) {
  if (closing_) return false;
  pending_.append(bytes);
  blocked_ = false;
  std::size_t start = 0;
  auto close = [&] {
    closing_ = true;
    blocked_ = false;
    pending_.clear();
    scanned_ = 0;
    line_cmds_.clear();
    line_next_ = 0;
    return false;
  };
  for (;;) {
    if (waiting_) {
      // Nothing runs before the answer of the command that is waiting for other threads.
      if (!reply_ready_) {
        blocked_ = true;
        break;
      }
      waiting_ = reply_ready_ = false;
      append_answer(std::move(reply_), out);
      reply_.clear();
      if (end_line_after_reply_) {
        end_line_after_reply_ = false;
        line_cmds_.clear();
        line_next_ = 0;
        if (!end_of_line(out)) return close();
      }
      continue;
    }
    // Backpressure: the next command (of this line or of the next one) waits until the
    // client has read enough. Commands of one line are run one at a time for that reason.
    bool line_open = line_next_ < line_cmds_.size();
    std::size_t nl = std::string::npos;
    if (!line_open) {
      nl = pending_.find('\n', std::max(start, scanned_));
      if (nl == std::string::npos) break;
    }
    if (out->size() >= out_limit) {
      blocked_ = true;
      break;
    }
    if (line_open) {
      if (!run_next(out)) return close();
      continue;
    }
    // A line that could not have fit in one buffer is refused even if its LF came in the same
    // read: the limit must not depend on how the kernel split the stream.
    bool too_big = nl - start >= max_line_;
    std::string_view line(pending_.data() + start, nl - start);
    // CRLF clients (telnet, Windows tools) get one answer per line, not an extra empty one.
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = nl + 1;
    if (too_big) {
      *out += kLineTooBig;
      return close();
    }
    if (!process_line(line, out)) return close();
  }
  pending_.erase(0, start);
  if (blocked_) {
    // What is left may start with a complete line: search it again from its start next time.
    scanned_ = 0;
    return true;
  }
  scanned_ = pending_.size();
  if (pending_.size() >= max_line_) {
    *out += kLineTooBig;
    return close();
  }
  return true;
}

bool CliSession::process_line(std::string_view line, std::string* out) {
  if (in_payload_) {
    if (line != payload_pattern_) {
      if (payload_.size() + line.size() + 1 > kMaxPayloadBytes) {
        *out += kPayloadTooBig;
        return false;
      }
      payload_.append(line);
      payload_ += '\n';
      if (state_.mode == Mode::kPrompt) *out += "+ ";
      return true;
    }
    in_payload_ = false;
    ctx_.payload = payload_;
    bool answered = run_command(payload_words_, out);
    ctx_.payload = {};
    payload_.clear();
    payload_words_.clear();
    if (state_.quit) return false;
    if (!answered) {
      end_line_after_reply_ = true;
      return true;
    }
    return end_of_line(out);
  }
  // Split the line into its commands; run_next() runs them one by one.
  line_cmds_.clear();
  line_next_ = 0;
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (!in_word) return;
    words.push_back(std::move(word));
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ';') {
      end_word();
      LineCommand c;
      // `<<[pattern]` as the last word of the line: the next lines are this command's payload.
      if (i == line.size() && !words.empty() && words.back().starts_with("<<") &&
          words.back().size() - 2 <= kMaxPayloadPattern && words.size() <= kMaxWords) {
        c.pattern = words.back().substr(2);
        c.payload = true;
        words.pop_back();
      }
      c.too_many = words.size() > kMaxWords;
      c.words = std::move(words);
      line_cmds_.push_back(std::move(c));
      words.clear();
      continue;
    }
    char c = line[i];
    if (c == '\\') {
      // `\x` is a literal x (escapes `;`, blanks and `\`); a lone trailing `\` is dropped.
      if (i + 1 < line.size()) {
        word += line[++i];
        in_word = true;
      }
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else {
      word += c;
      in_word = true;
    }
  }
  return true;
}

bool CliSession::run_next(std::string* out) {
  LineCommand& c = line_cmds_[line_next_++];
  bool last = line_next_ == line_cmds_.size();
  if (c.payload) {
    // Always the last command of its line; the line ends when the payload does.
    payload_pattern_ = std::move(c.pattern);
    payload_words_ = std::move(c.words);
    in_payload_ = true;
    line_cmds_.clear();
    line_next_ = 0;
    if (state_.mode == Mode::kPrompt) *out += "+ ";
    return true;
  }
  if (c.too_many) {
    *out += kTooManyWords;
  } else {
    bool answered = run_command(c.words, out);
    if (state_.quit) return false;
    if (!answered) {
      end_line_after_reply_ = last;
      return true;
    }
  }
  if (!last) return true;
  line_cmds_.clear();
  line_next_ = 0;
  return end_of_line(out);
}

bool CliSession::end_of_line(std::string* out) {
  // The default mode answers one line only.
  if (state_.mode == Mode::kNonInteractive) return false;
  if (state_.mode == Mode::kPrompt) append_prompt(out);
  return true;
}

bool CliSession::run_command(const std::vector<std::string>& words, std::string* out) {
  ctx_.level = state_.level;
  std::string answer;
  if (!words.empty()) {
    const Command* c = find_command(words);
    if (!c) {
      answer = help_text(words, true, state_.experimental);
    } else if (c->level > state_.level) {
      answer = "Permission denied\n";
    } else if (c->experimental && !state_.experimental) {
      answer = "This command is restricted to experimental mode only.\n";
    } else if (c->run_later) {
      waiting_ = true;
      reply_ready_ = false;
      std::weak_ptr<CliSession*> weak = self_;
      in_command_ = true;
      c->run_later(ctx_, words, [weak](std::string a) {
        auto self = weak.lock();
        if (!self) return;
        CliSession* s = *self;
        if (!s->waiting_ || s->reply_ready_) return;   // answered twice: keep the first
        s->reply_ = std::move(a);
        s->reply_ready_ = true;
        // Answered inside run_later (an error found at once): feed() goes on by itself.
        if (s->on_reply_ && !s->in_command_) s->on_reply_();
      });
      in_command_ = false;
      return false;
    } else if (c->run) {
      c->run(ctx_, words, &answer);
    }
  }
  // quit closes at once: nothing after it, not even the terminator.
  if (state_.quit) return true;
  append_answer(std::move(answer), out);
  return true;
}

void CliSession::append_answer(std::string answer, std::string* out) const {
  // Exactly one LF ends a message, then the empty line that ends every answer.
  while (!answer.empty() && answer.back() == '\n') answer.pop_back();
  // An empty line inside an answer would end it early for every client (rule 2 of the spec):
  // give it one space, as HAProxy's own multi-line dumps do.
  for (std::size_t p = answer.find("\n\n"); p != std::string::npos; p = answer.find("\n\n", p))
    answer.insert(++p, 1, ' ');
  if (!answer.empty() && answer.front() == '\n') answer.insert(0, 1, ' ');
  if (!answer.empty()) {
    *out += answer;
    *out += '\n';
  }
  *out += '\n';
}

void CliSession::append_prompt(std::string* out) const {
  if (!state_.timed) {
    *out += "> ";
    return;
  }
  uint64_t up = ctx_.stats ? ctx_.stats->process().uptime_s : 0;
  *out += fmt::format("[{}:{:02}:{:02}:{:02}]> ", up / 86400, (up / 3600) % 24, (up / 60) % 60,
                      up % 60);
}

}  // namespace sluice::cli
