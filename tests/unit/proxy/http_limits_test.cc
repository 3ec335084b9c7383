// proxy::http_limits(): tune.bufsize, tune.maxrewrite and tune.http.maxhdr as parser limits.
#include <gtest/gtest.h>

#include "proxy/http_limits.h"

namespace sluice::proxy {
namespace {

TEST(HttpLimits, Defaults) {
  ProcessSettings ps;
  http::Limits l = http_limits(ps);
  EXPECT_EQ(l.max_request_line, 16382u);
  EXPECT_EQ(l.max_head, 16384u - 1024u);
  EXPECT_EQ(l.max_fields, 100u);   // maxhdr 101 counts the start line
}

TEST(HttpLimits, Tuned) {
  ProcessSettings ps;
  ps.bufsize = 8192;
  ps.maxrewrite = 2048;
  ps.http_maxhdr = 5;
  http::Limits l = http_limits(ps);
  EXPECT_EQ(l.max_head, 8192u - 2048u);
  EXPECT_EQ(l.max_fields, 4u);
  ps.http_maxhdr = 1;
  EXPECT_EQ(http_limits(ps).max_fields, 0u);
  ps.maxrewrite = 0;
  EXPECT_EQ(http_limits(ps).max_head, 8192u);
}

}  // namespace
}  // namespace sluice::proxy
