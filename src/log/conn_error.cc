#include "log/conn_error.h"

#include <cerrno>

namespace sluice::log {

namespace {
struct Entry {
  ConnError code;
  int err;   // the errno it stands for; 0: none (the PROXY protocol's, a general error)
  std::string_view text;
  std::string_view name;
};
// HAProxy 3.5's texts and names, checked with its fc_err_str / bc_err_str / *_err_name.
constexpr Entry kEntries[] = {
    {ConnError::kSockErr, 0, "General socket error", "SOCK_ERR"},
    {ConnError::kFreePorts, EADDRNOTAVAIL, "no free ports", "FREE_PORTS"},
    {ConnError::kAddrInUse, EADDRINUSE, "local address already in use", "ADDR_INUSE"},
    {ConnError::kPrxEmpty, 0, "Connection closed while waiting for PROXY protocol header",
     "PRX_EMPTY"},
    {ConnError::kPrxAbort, 0, "Connection error while waiting for PROXY protocol header",
     "PRX_ABORT"},
    {ConnError::kPrxTimeout, 0, "Timeout while waiting for PROXY protocol header", "PRX_TIMEOUT"},
    {ConnError::kPrxTruncated, 0, "Truncated PROXY protocol header received", "PRX_TRUNCATED"},
    {ConnError::kPrxNotHdr, 0,
     "Received something which does not look like a PROXY protocol header", "PRX_NOT_HDR"},
    {ConnError::kPrxBadHdr, 0, "Received an invalid PROXY protocol header", "PRX_BAD_HDR"},
    {ConnError::kPrxBadProto, 0, "Received an unhandled protocol in the PROXY protocol header",
     "PRX_BAD_PROTO"},
    {ConnError::kSslEmpty, 0, "Connection closed during SSL handshake", "SSL_EMPTY"},
    {ConnError::kSslAbort, 0, "Connection error during SSL handshake", "SSL_ABORT"},
    {ConnError::kSslTimeout, 0, "Timeout during SSL handshake", "SSL_TIMEOUT"},
    {ConnError::kSslNoMem, 0, "Out of memory when initializing an SSL connection", "SSL_NO_MEM"},
    {ConnError::kSslCaFail, 0, "SSL client CA chain cannot be verified", "SSL_CA_FAIL"},
    {ConnError::kSslCrtFail, 0, "SSL client certificate not trusted", "SSL_CRT_FAIL"},
    {ConnError::kSslHandshake, 0, "SSL handshake failure", "SSL_HANDSHAKE"},
    {ConnError::kSocks4Send, 0, "SOCKS4 Proxy write error during handshake", "SOCKS4_SEND"},
    {ConnError::kSocks4Recv, 0, "SOCKS4 Proxy read error during handshake", "SOCKS4_RECV"},
    {ConnError::kSocks4Deny, 0, "SOCKS4 Proxy deny the request", "SOCKS4_DENY"},
    {ConnError::kSocks4Abort, 0, "SOCKS4 Proxy handshake aborted by server", "SOCKS4_ABORT"},
    {ConnError::kRefused, ECONNREFUSED, "ECONNREFUSED returned by OS", "EREFUSED"},
    {ConnError::kReset, ECONNRESET, "ECONNRESET returned by OS", "ERESET"},
    {ConnError::kUnreach, ENETUNREACH, "ENETUNREACH returned by OS", "EUNREACH"},
    {ConnError::kNoMem, ENOMEM, "ENOMEM returned by OS", "ENOMEM"},
    {ConnError::kBadF, EBADF, "EBADF returned by OS", "EBADF"},
    {ConnError::kFault, EFAULT, "EFAULT returned by OS", "EFAULT"},
    {ConnError::kInval, EINVAL, "EINVAL returned by OS", "EINVAL"},
    {ConnError::kNotConn, ENOTCONN, "ENCONN returned by OS", "ENCONN"},
    {ConnError::kNotSock, ENOTSOCK, "ENSOCK returned by OS", "ENSOCK"},
    {ConnError::kNoBufs, ENOBUFS, "ENOBUFS returned by OS", "ENOBUFS"},
    {ConnError::kPipe, EPIPE, "EPIPE returned by OS", "EPIPE"},
};

const Entry* entry(ConnError c) {
  for (const Entry& e : kEntries)
    if (e.code == c) return &e;
  return nullptr;
}
}  // namespace

ConnError conn_error_of_errno(int err) {
  if (err == 0) return ConnError::kNone;
  for (const Entry& e : kEntries)
    if (e.err == err) return e.code;
  return ConnError::kSockErr;
}

std::string_view conn_error_text(ConnError c) {
  if (c == ConnError::kNone) return "Success";
  const Entry* e = entry(c);
  return e ? e->text : "Unknown error";
}

std::string_view conn_error_name(ConnError c) {
  const Entry* e = entry(c);
  return e ? e->name : "";
}

}  // namespace sluice::log
