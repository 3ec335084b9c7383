#include "base/strings.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::base {
namespace {

// RFC 4648 section 10 vectors, and what must be refused (the stats page's Basic credentials).
TEST(Base64, Decodes) {
  std::string out;
  for (auto [enc, dec] : {std::pair{"", ""}, {"Zg==", "f"}, {"Zm8=", "fo"}, {"Zm9v", "foo"},
                          {"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"},
                          {"YWRtaW46c2VjcmV0", "admin:secret"}, {"+/+/", "\xfb\xff\xbf"}}) {
    EXPECT_TRUE(base64_decode(enc, &out)) << enc;
    EXPECT_EQ(out, dec) << enc;
  }
  for (auto bad : {"Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9v!", "Zm=v", "Zm9v\n"})
    EXPECT_FALSE(base64_decode(bad, &out)) << bad;
}

}  // namespace
}  // namespace sluice::base
