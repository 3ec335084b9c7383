#pragma once
// SOCKS4's CONNECT, as a server's `socks4 <addr>:<port>` uses it: the connection goes to the
// SOCKS4 proxy, which is asked to connect on to the server; the bytes of the session flow once
// it has granted it. The request names an IPv4 destination and the user id "HAProxy" (what
// HAProxy 3.5 sends, so that proxies configured for it accept sluice too); the reply is 8 bytes,
// the second 90 (0x5A) when granted.
//
// Handshake steps (advance(); each returns the step it is at):
//   kSend --the request written--> kReceive --8 bytes, granted--> kDone
//   kSend: nothing written yet (EAGAIN) stays kSend; a failed or partial write -> kFailed
//   kReceive: fewer than 8 bytes stays kReceive; a refusal, an early close or a read error
//     -> kFailed (failure() says which)
// The reply is read without a byte more: what the server sends next stays in the socket.
//
// Thread rule: a Handshake belongs to the connection that runs it (worker-local); request()
// is pure.
#include <cstdint>
#include <cstring>
#include <string>

#include "net/address.h"

namespace sluice::net::socks4 {

// The CONNECT request for `dst`, an IPv4 address and port (kRequestSize bytes); empty for any
// other address, which SOCKS4 cannot name.
inline constexpr std::size_t kRequestSize = 16;
std::string request(const SocketAddress& dst);

// Why a handshake failed, as HAProxy's connection error codes name them (bc_err 39 to 42).
enum class Failure : uint8_t {
  kNone,
  kSend,    // 39 "SOCKS4 Proxy write error during handshake"
  kRecv,    // 40 "SOCKS4 Proxy read error during handshake" (a close before the reply too)
  kDeny,    // 41 "SOCKS4 Proxy deny the request"
  kAbort,   // 42 "SOCKS4 Proxy handshake aborted by server"
};
// HAProxy's text of a failure ("SOCKS4 Proxy deny the request").
const char* failure_text(Failure f);

class Handshake {
 public:
  enum class Step : uint8_t { kSend, kReceive, kDone, kFailed };
  // A destination that is not IPv4 (`set server addr` may give one) fails at the first step.
  explicit Handshake(const SocketAddress& dst) {
    const std::string r = request(dst);
    if (r.size() == kRequestSize) {
      std::memcpy(req_, r.data(), kRequestSize);
    } else {
      step_ = Step::kFailed;
      failure_ = Failure::kAbort;
    }
  }
  // Moves the handshake on over `fd` (a connected, non-blocking socket) as far as it goes now.
  Step advance(int fd);
  Step step() const { return step_; }
  Failure failure() const { return failure_; }
  int sys_errno() const { return errno_; }   // the failed call's errno, 0 when none

 private:
  char req_[kRequestSize] = {};   // no allocation: the handshake is made per connection
  char reply_[8] = {};
  uint8_t got_ = 0;
  Step step_ = Step::kSend;
  Failure failure_ = Failure::kNone;
  int errno_ = 0;
};

}  // namespace sluice::net::socks4
