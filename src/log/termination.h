#pragma once
// How a session or an HTTP transaction ended, as two values: what ended it (HAProxy's SF_ERR_*)
// and where it was then (SF_FINST_*). Sessions record these values and decide counters from
// them; the two letters of a log line's termination state (%ts: "SC", "cD", "--") are written
// only by the log module, when a line is built.
#include <cstdint>
#include <string>

namespace sluice::log {

// The first letter.
enum class Cause : uint8_t {
  kNone,            // '-' a normal end
  kClientClose,     // 'C' the client aborted, closed too early, or failed (SF_ERR_CLICL)
  kClientTimeout,   // 'c' timeout client / http-request / http-keep-alive (SF_ERR_CLITO)
  kServerClose,     // 'S' the server refused, aborted, failed or sent garbage (SF_ERR_SRVCL)
  kServerTimeout,   // 's' timeout connect / server / queue (SF_ERR_SRVTO)
  kProxy,           // 'P' the proxy decided: a deny, a bad request, a rule (SF_ERR_PRXCOND)
  kResource,        // 'R' out of memory, descriptors or ports (SF_ERR_RESOURCE)
  kInternal,        // 'I' a bug or an impossible state (SF_ERR_INTERNAL)
  kDown,            // 'D' the server went down and shutdown-sessions killed it (SF_ERR_DOWN)
  kUp,              // 'U' a backup went back to a server that came up (SF_ERR_UP)
  kKilled,          // 'K' killed by an operator or a hard stop (SF_ERR_KILLED)
  kLocal,           // 'L' answered by sluice itself (SF_ERR_LOCAL)
};

// The second letter.
enum class FinalState : uint8_t {
  kNone,      // '-' the session ended normally, or before any of these
  kRequest,   // 'R' waiting for the client's request (or its head)
  kQueue,     // 'Q' waiting in a queue for a server slot
  kConnect,   // 'C' connecting to the server
  kHeaders,   // 'H' waiting for, or reading, the server's response head
  kData,      // 'D' moving data (a body, a tunnel, a TCP relay)
  kLast,      // 'L' sending the last bytes to the client
  kTarpit,    // 'T' tarpitted
};

struct Termination {
  Cause cause = Cause::kNone;
  FinalState state = FinalState::kNone;

  constexpr bool operator==(const Termination&) const = default;
  constexpr bool ended_normally() const { return cause == Cause::kNone; }
  constexpr bool client_side() const {
    return cause == Cause::kClientClose || cause == Cause::kClientTimeout;
  }
  constexpr bool server_side() const {
    return cause == Cause::kServerClose || cause == Cause::kServerTimeout;
  }
};

char cause_letter(Cause c);
char state_letter(FinalState s);
// The two letters, as %ts writes them.
std::string letters(Termination t);
// Appends the two letters to `out`.
void append_letters(std::string& out, Termination t);

}  // namespace sluice::log
