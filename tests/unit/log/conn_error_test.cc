// HAProxy's connection error codes (fc_err, bc_err) for the errno a connection met, with the
// texts and names HAProxy 3.5 gives them.
#include <gtest/gtest.h>

#include <cerrno>

#include "log/conn_error.h"

namespace sluice::log {
namespace {

TEST(ConnError, CodesOfErrno) {
  EXPECT_EQ(conn_error_of_errno(0), ConnError::kNone);
  EXPECT_EQ(static_cast<int>(conn_error_of_errno(ECONNREFUSED)), 47);
  EXPECT_EQ(static_cast<int>(conn_error_of_errno(ECONNRESET)), 48);
  EXPECT_EQ(static_cast<int>(conn_error_of_errno(ENETUNREACH)), 49);
  EXPECT_EQ(static_cast<int>(conn_error_of_errno(EPIPE)), 57);
  EXPECT_EQ(static_cast<int>(conn_error_of_errno(EADDRNOTAVAIL)), 9);
  // An errno HAProxy has no code of its own for.
  EXPECT_EQ(conn_error_of_errno(EHOSTUNREACH), ConnError::kSockErr);
  EXPECT_EQ(static_cast<int>(ConnError::kSockErr), 6);
}

TEST(ConnError, TextsAndNames) {
  EXPECT_EQ(conn_error_text(ConnError::kNone), "Success");
  EXPECT_EQ(conn_error_name(ConnError::kNone), "");
  EXPECT_EQ(conn_error_text(ConnError::kRefused), "ECONNREFUSED returned by OS");
  EXPECT_EQ(conn_error_name(ConnError::kRefused), "EREFUSED");
  EXPECT_EQ(conn_error_text(ConnError::kReset), "ECONNRESET returned by OS");
  EXPECT_EQ(conn_error_name(ConnError::kReset), "ERESET");
  EXPECT_EQ(conn_error_text(ConnError::kNotConn), "ENCONN returned by OS");
  EXPECT_EQ(conn_error_text(ConnError::kSockErr), "General socket error");
  EXPECT_EQ(conn_error_name(ConnError::kSockErr), "SOCK_ERR");
  // A code sluice does not produce (TLS, PROXY protocol) has no text here.
  EXPECT_EQ(conn_error_text(static_cast<ConnError>(26)), "Unknown error");
}

}  // namespace
}  // namespace sluice::log
