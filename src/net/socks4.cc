#include "net/socks4.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace sluice::net::socks4 {

std::string request(const SocketAddress& dst) {
  if (dst.family() != AF_INET) return {};
  // VN 4, CD 1 (CONNECT), the port and the address in network order, the user id and its NUL.
  std::string r = {4, 1};
  const auto* in = reinterpret_cast<const sockaddr_in*>(dst.sa());
  r.append(reinterpret_cast<const char*>(&in->sin_port), 2);
  r.append(reinterpret_cast<const char*>(&in->sin_addr), 4);
  r += "HAProxy";
  r += '\0';
  return r;
}

const char* failure_text(Failure f) {
  switch (f) {
    case Failure::kNone: return "";
    case Failure::kSend: return "SOCKS4 Proxy write error during handshake";
    case Failure::kRecv: return "SOCKS4 Proxy read error during handshake";
    case Failure::kDeny: return "SOCKS4 Proxy deny the request";
    case Failure::kAbort: return "SOCKS4 Proxy handshake aborted by server";
  }
  return "";
}

Handshake::Step Handshake::advance(int fd) {
  if (step_ == Step::kSend) {
    // 16 bytes: a new connection's buffer takes them whole, or the socket is not writable yet.
    ssize_t n = ::send(fd, req_, sizeof req_, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR || errno == ENOTCONN)) return step_;
    if (n != static_cast<ssize_t>(sizeof req_)) {
      errno_ = n < 0 ? errno : 0;
      failure_ = Failure::kSend;
      return step_ = Step::kFailed;
    }
    step_ = Step::kReceive;
  }
  if (step_ == Step::kReceive) {
    while (got_ < sizeof reply_) {
      ssize_t n = ::recv(fd, reply_ + got_, sizeof reply_ - got_, 0);
      if (n > 0) {
        got_ = static_cast<uint8_t>(got_ + n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return step_;
      // A close before the whole reply reads as HAProxy reports it: a read error.
      errno_ = n < 0 ? errno : 0;
      failure_ = Failure::kRecv;
      return step_ = Step::kFailed;
    }
    if (reply_[0] != 0) {   // not a SOCKS4 reply at all
      failure_ = Failure::kAbort;
      return step_ = Step::kFailed;
    }
    if (static_cast<unsigned char>(reply_[1]) != 90) {
      failure_ = Failure::kDeny;
      return step_ = Step::kFailed;
    }
    step_ = Step::kDone;
  }
  return step_;
}

}  // namespace sluice::net::socks4
