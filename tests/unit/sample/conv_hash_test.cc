// Hash converters; expected values from HAProxy 3.5-dev5 (`return lf-string
// "%[str(...),conv]"`, `-c` for the parse errors).
#include <gtest/gtest.h>

#include "sample/expr.h"
#include "sample_support.h"
#include "sample/vars.h"

namespace sluice::sample {
namespace {

using testing::parse_error;

// txn.key="bXlfa2V5" (base64 of "my_key"), txn.bad="!!!"
std::string run(std::string_view text) {
  static VarStore txn(Scope::kTxn);
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  txn.clear();
  auto& n = VarNames::global();
  txn.set(n.find("txn.key"), Sample::string("bXlfa2V5"));
  txn.set(n.find("txn.bad"), Sample::string("!!!"));
  Ctx ctx;
  ctx.txn_vars = &txn;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

class ConvHash : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    VarRef r;
    std::string err;
    for (const char* v : {"txn.key", "txn.bad"}) VarNames::global().parse(v, &r, &err);
  }
};

constexpr const char* kLong = "str(abcdefghijklmnopqrstuvwxyz0123456789)";

TEST_F(ConvHash, Crc) {
  EXPECT_EQ(run("str(abc),crc32"), "891568578");
  EXPECT_EQ(run("str(abc),crc32(1)"), "930845320");
  EXPECT_EQ(run("str(),crc32"), "0");
  EXPECT_EQ(run(std::string(kLong) + ",crc32"), "3754357371");
  EXPECT_EQ(run("str(abc),crc32c"), "910901175");
  EXPECT_EQ(run("str(abc),crc32c(1)"), "1285784220");
  EXPECT_EQ(parse_error("str(a),crc32(x)"),
            "invalid arg 1 in converter 'crc32' : failed to parse 'x' as type 'integer' at "
            "position 1");
}

TEST_F(ConvHash, DjbSdbmWt6) {
  EXPECT_EQ(run("str(abc),djb2"), "193485963");
  EXPECT_EQ(run("str(abc),djb2(1)"), "2235766107");
  EXPECT_EQ(run("str(),djb2"), "5381");
  EXPECT_EQ(run(std::string(kLong) + ",djb2(1)"), "1066946750");
  EXPECT_EQ(run("str(abc),sdbm"), "807794786");
  EXPECT_EQ(run("str(abc),sdbm(1)"), "659243622");
  EXPECT_EQ(run(std::string(kLong) + ",sdbm(1)"), "93046920");
  EXPECT_EQ(run("str(abc),wt6"), "2483038440");
  EXPECT_EQ(run("str(abc),wt6(1)"), "266135527");
  EXPECT_EQ(run("str(),wt6"), "4187620192");
  EXPECT_EQ(run(std::string(kLong) + ",wt6"), "955643270");
  // An integer is hashed as its 8 bytes in network order.
  EXPECT_EQ(run("int(5),wt6"), "3126901852");
}

TEST_F(ConvHash, Xxh) {
  EXPECT_EQ(run("str(abc),xxh3"), "8696274497037089104");
  EXPECT_EQ(run("str(abc),xxh3(5)"), "6167986026487092235");
  EXPECT_EQ(run("str(abc),xxh3(-1)"), "2962310483463817673");
  EXPECT_EQ(run("str(abc),xxh32"), "852579327");
  EXPECT_EQ(run("str(abc),xxh32(5)"), "1562728233");
  EXPECT_EQ(run("str(abc),xxh32(4294967297)"), "2856167679");   // the seed's low 32 bits
  EXPECT_EQ(run("str(abc),xxh64"), "4952883123889572249");
  EXPECT_EQ(run("str(abc),xxh64(5)"), "-1753195980308443340");
  EXPECT_EQ(run(std::string(kLong) + ",xxh64"), "7273945407305660262");
}

TEST_F(ConvHash, Digests) {
  EXPECT_EQ(run("str(abc),sha1,hex"), "A9993E364706816ABA3E25717850C26C9CD0D89D");
  EXPECT_EQ(run("str(abc),sha1,base64"), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
  EXPECT_EQ(run("str(abc),sha2,hex"),
            "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
  EXPECT_EQ(run("str(abc),sha2(256),hex"),
            "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
  EXPECT_EQ(run("str(abc),sha2(224),hex"),
            "23097D223405D8228642A477BDA255B32AADBCE4BDA0B3F7E36C9DA7");
  EXPECT_EQ(run("str(abc),sha2(384),hex"),
            "CB00753F45A35E8BB5A03D699AC65007272C32AB0EDED1631A8B605A43FF5BED8086072BA1E7CC2358"
            "BAECA134C825A7");
  EXPECT_EQ(run("str(abc),sha2(512),hex"),
            "DDAF35A193617ABACC417349AE20413112E6FA4E89A97EA20A9EEEE64B55D39A2192992A274FC1A836"
            "BA3C23A3FEEBBD454D4423643CE80E2A9AC94FA54CA49F");
  EXPECT_EQ(parse_error("str(a),sha2(100)"),
            "invalid args in converter 'sha2' : Unsupported number of bits: '100'");
  EXPECT_EQ(parse_error("str(a),sha2(0)"),
            "invalid args in converter 'sha2' : Unsupported number of bits: '0'");
  EXPECT_EQ(run("str(abc),digest(md5),hex"), "900150983CD24FB0D6963F7D28E17F72");
  EXPECT_EQ(run("str(abc),digest(SHA256),hex"),
            "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
  EXPECT_EQ(run("str(abc),digest(sha3-256),hex"),
            "3A985DA74FE225B2045C172D6BD390BD855F086E3E9D525B46BFE24511431532");
  EXPECT_EQ(parse_error("str(a),digest(foo)"),
            "invalid args in converter 'digest' : algorithm must be a valid OpenSSL message "
            "digest name.");
  EXPECT_EQ(parse_error("str(a),digest"),
            "invalid args in converter 'digest' : algorithm must be a valid OpenSSL message "
            "digest name.");
}

TEST_F(ConvHash, Hmac) {
  EXPECT_EQ(run("str(abc),hmac(sha256,bXlfa2V5),hex"),
            "6F4C08AA161F0A79E9223FAAF40CCB1DAB19E3CF244F294C05E050BA30912A04");
  // A variable holds the base64 key.
  EXPECT_EQ(run("str(abc),hmac(sha256,txn.key),hex"),
            "6F4C08AA161F0A79E9223FAAF40CCB1DAB19E3CF244F294C05E050BA30912A04");
  EXPECT_EQ(run("str(abc),hmac(sha256,),hex"),
            "FD7ADB152C05EF80DCCF50A1FA4C05D5A3EC6DA95575FC312AE7C5D091836351");
  EXPECT_EQ(run("str(abc),hmac(md5,txn.nokey),hex"), "<none>");
  EXPECT_EQ(run("str(abc),hmac(md5,txn.bad),hex"), "<none>");
  EXPECT_EQ(parse_error("str(a),hmac(foo,abc)"),
            "invalid args in converter 'hmac' : algorithm must be a valid OpenSSL message "
            "digest name.");
  EXPECT_EQ(parse_error("str(a),hmac(sha256,!!!)"),
            "invalid args in converter 'hmac' : failed to parse key : argument needs to be "
            "base64 encoded, and can either be a string or a variable");
  EXPECT_EQ(parse_error("str(a),hmac(sha256)"),
            "invalid arg 2 in converter 'hmac' : missing arguments (got 1/2), type 'string' "
            "expected");
}

}  // namespace
}  // namespace sluice::sample
