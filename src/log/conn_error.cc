#include "log/conn_error.h"

#include <cerrno>

namespace sluice::log {

namespace {
struct Entry {
  int err;
  ConnError code;
  std::string_view text;
  std::string_view name;
};
// HAProxy 3.5's texts and names, checked with its fc_err_str / bc_err_str / *_err_name.
constexpr Entry kEntries[] = {
    {ECONNREFUSED, ConnError::kRefused, "ECONNREFUSED returned by OS", "EREFUSED"},
    {ECONNRESET, ConnError::kReset, "ECONNRESET returned by OS", "ERESET"},
    {ENETUNREACH, ConnError::kUnreach, "ENETUNREACH returned by OS", "EUNREACH"},
    {ENOMEM, ConnError::kNoMem, "ENOMEM returned by OS", "ENOMEM"},
    {EBADF, ConnError::kBadF, "EBADF returned by OS", "EBADF"},
    {EFAULT, ConnError::kFault, "EFAULT returned by OS", "EFAULT"},
    {EINVAL, ConnError::kInval, "EINVAL returned by OS", "EINVAL"},
    {ENOTCONN, ConnError::kNotConn, "ENCONN returned by OS", "ENCONN"},
    {ENOTSOCK, ConnError::kNotSock, "ENSOCK returned by OS", "ENSOCK"},
    {ENOBUFS, ConnError::kNoBufs, "ENOBUFS returned by OS", "ENOBUFS"},
    {EPIPE, ConnError::kPipe, "EPIPE returned by OS", "EPIPE"},
    {EADDRNOTAVAIL, ConnError::kFreePorts, "no free ports", "FREE_PORTS"},
    {EADDRINUSE, ConnError::kAddrInUse, "local address already in use", "ADDR_INUSE"},
};
}  // namespace

ConnError conn_error_of_errno(int err) {
  if (err == 0) return ConnError::kNone;
  for (const Entry& e : kEntries)
    if (e.err == err) return e.code;
  return ConnError::kSockErr;
}

namespace {
struct PrxEntry {
  ConnError code;
  std::string_view text;
  std::string_view name;
};
constexpr PrxEntry kPrx[] = {
    {ConnError::kPrxEmpty, "Connection closed while waiting for PROXY protocol header",
     "PRX_EMPTY"},
    {ConnError::kPrxAbort, "Connection error while waiting for PROXY protocol header",
     "PRX_ABORT"},
    {ConnError::kPrxTimeout, "Timeout while waiting for PROXY protocol header", "PRX_TIMEOUT"},
    {ConnError::kPrxTruncated, "Truncated PROXY protocol header received", "PRX_TRUNCATED"},
    {ConnError::kPrxNotHdr, "Received something which does not look like a PROXY protocol header",
     "PRX_NOT_HDR"},
    {ConnError::kPrxBadHdr, "Received an invalid PROXY protocol header", "PRX_BAD_HDR"},
    {ConnError::kPrxBadProto, "Received an unhandled protocol in the PROXY protocol header",
     "PRX_BAD_PROTO"},
};
}  // namespace

std::string_view conn_error_text(ConnError c) {
  if (c == ConnError::kNone) return "Success";
  for (const PrxEntry& e : kPrx)
    if (e.code == c) return e.text;
  if (c == ConnError::kSockErr) return "General socket error";
  for (const Entry& e : kEntries)
    if (e.code == c) return e.text;
  return "Unknown error";
}

std::string_view conn_error_name(ConnError c) {
  if (c == ConnError::kNone) return "";
  for (const PrxEntry& e : kPrx)
    if (e.code == c) return e.name;
  if (c == ConnError::kSockErr) return "SOCK_ERR";
  for (const Entry& e : kEntries)
    if (e.code == c) return e.name;
  return "";
}

}  // namespace sluice::log
