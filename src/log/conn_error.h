#pragma once
// HAProxy's connection error codes (its CO_ER_* numbering, which fc_err and bc_err return and
// logs carry), for the errors sluice can meet on a plain TCP connection: the errno of a failed
// connect, read or write, a PROXY protocol header that never came right, a SOCKS4 proxy's
// handshake, a TLS handshake that failed.
#include <cstdint>
#include <string_view>

namespace sluice::log {

enum class ConnError : uint8_t {
  kNone = 0,
  kSockErr = 6,      // any other socket error
  kFreePorts = 9,    // EADDRNOTAVAIL: no free local port
  kAddrInUse = 10,   // EADDRINUSE
  // A PROXY protocol header (bind ... accept-proxy) that never came right.
  kPrxEmpty = 11,       // the connection closed before any byte
  kPrxAbort = 12,       // the connection failed while waiting
  kPrxTimeout = 13,     // timeout client while waiting
  kPrxTruncated = 14,
  kPrxNotHdr = 15,
  kPrxBadHdr = 16,
  kPrxBadProto = 17,
  // A client's TLS handshake (bind ... ssl) that did not complete.
  kSslEmpty = 18,       // the connection closed during the handshake
  kSslAbort = 19,       // the connection failed during the handshake
  kSslTimeout = 20,     // timeout client during the handshake
  kSslNoMem = 22,       // no TLS connection could be allocated
  kSslCaFail = 24,      // the client's certificate chain could not be verified
  kSslCrtFail = 25,     // the client's certificate is not trusted
  kSslHandshake = 28,   // a protocol error
  // A server's SOCKS4 proxy (`socks4`) that did not let the connection through.
  kSocks4Send = 39,
  kSocks4Recv = 40,
  kSocks4Deny = 41,
  kSocks4Abort = 42,
  kRefused = 47,     // ECONNREFUSED
  kReset = 48,       // ECONNRESET
  kUnreach = 49,     // ENETUNREACH
  kNoMem = 50,       // ENOMEM
  kBadF = 51,        // EBADF
  kFault = 52,       // EFAULT
  kInval = 53,       // EINVAL
  kNotConn = 54,     // ENOTCONN
  kNotSock = 55,     // ENOTSOCK
  kNoBufs = 56,      // ENOBUFS
  kPipe = 57,        // EPIPE
};

// The code of a failed system call's errno (0: none).
ConnError conn_error_of_errno(int err);
// fc_err_str / bc_err_str: "Success" for none, "ECONNREFUSED returned by OS", ...
std::string_view conn_error_text(ConnError e);
// fc_err_name / bc_err_name: "" for none, "EREFUSED", ...
std::string_view conn_error_name(ConnError e);

}  // namespace sluice::log
