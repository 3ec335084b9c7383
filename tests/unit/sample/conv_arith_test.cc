// Arithmetic, bitwise and binary-format converters; expected values checked against HAProxy
// 3.5-dev5 (`return lf-string "%[int(5),add(3)]"` and `-c` for the parse errors).
#include <gtest/gtest.h>

#include "sample/expr.h"
#include "sample_support.h"
#include "sample/vars.h"

namespace sluice::sample {
namespace {

using testing::parse_error;

// The expression's text, "<none>" when it yields no sample. txn.three=3, txn.s="hello",
// txn.neg=-1, and txn.bin the bytes of `bin_hex` (HAProxy's bin(<hex>), a fetch of another
// file).
std::string run(std::string_view text, std::string_view bin_hex = {}) {
  static VarStore txn(Scope::kTxn);
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  txn.clear();
  txn.set(VarNames::global().find("txn.three"), Sample::integer(3));
  txn.set(VarNames::global().find("txn.s"), Sample::string("hello"));
  txn.set(VarNames::global().find("txn.neg"), Sample::integer(-1));
  std::string bytes;
  for (std::size_t i = 0; i + 1 < bin_hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(std::string(bin_hex.substr(i, 2)), nullptr, 16));
  Sample b = Sample::string(bytes);
  b.type = Type::kBin;
  txn.set(VarNames::global().find("txn.bin"), b);
  Ctx ctx;
  ctx.txn_vars = &txn;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

class ConvArith : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    VarRef r;
    std::string err;
    for (const char* n : {"txn.three", "txn.s", "txn.neg", "txn.bin"}) VarNames::global().parse(n, &r, &err);
  }
};

TEST_F(ConvArith, OperatorsTakeAnIntegerOrAVariable) {
  EXPECT_EQ(run("int(5),add(3)"), "8");
  EXPECT_EQ(run("int(5),add(txn.three)"), "8");
  EXPECT_EQ(run("int(5),add(txn.none)"), "<none>");
  EXPECT_EQ(run("int(5),add(txn.s)"), "5");   // "hello" reads as 0
  EXPECT_EQ(run("int(5),add(-3)"), "2");
  EXPECT_EQ(run("int(5),add(+3)"), "8");
  EXPECT_EQ(run("int(1),add"), "1");          // no value is 0
  EXPECT_EQ(run("int(1),add()"), "1");
  EXPECT_EQ(run("int(5),sub(3)"), "2");
  EXPECT_EQ(run("int(5),sub(txn.neg)"), "6");
  EXPECT_EQ(run("int(6),mul(txn.three)"), "18");
  EXPECT_EQ(run("int(-7),div(2)"), "-3");
  EXPECT_EQ(run("int(-7),mod(2)"), "-1");
  EXPECT_EQ(run("int(6),and(3)"), "2");
  EXPECT_EQ(run("int(6),or(3)"), "7");
  EXPECT_EQ(run("int(6),xor(3)"), "5");
  EXPECT_EQ(run("str(12x),add(1)"), "13");
  EXPECT_EQ(run("str(),add(1)"), "<none>");
}

TEST_F(ConvArith, ResultsSaturate) {
  EXPECT_EQ(run("int(9223372036854775807),add(1)"), "9223372036854775807");
  EXPECT_EQ(run("int(-9223372036854775808),sub(1)"), "-9223372036854775808");
  EXPECT_EQ(run("int(9223372036854775807),mul(2)"), "9223372036854775807");
  EXPECT_EQ(run("int(-9223372036854775807),mul(2)"), "-9223372036854775808");
  EXPECT_EQ(run("int(5),div(0)"), "9223372036854775807");
  EXPECT_EQ(run("int(-5),div(0)"), "9223372036854775807");
  EXPECT_EQ(run("int(5),mod(0)"), "0");
  EXPECT_EQ(run("int(-9223372036854775808),div(-1)"), "9223372036854775807");
  EXPECT_EQ(run("int(-9223372036854775808),mod(-1)"), "0");
  EXPECT_EQ(run("int(-9223372036854775808),neg"), "9223372036854775807");
  EXPECT_EQ(run("int(1),add(99999999999999999999)"), "9223372036854775807");
  EXPECT_EQ(run("int(1),add(-99999999999999999999)"), "-9223372036854775807");
}

TEST_F(ConvArith, UnaryAndTests) {
  EXPECT_EQ(run("int(5),neg"), "-5");
  EXPECT_EQ(run("int(5),cpl"), "-6");
  EXPECT_EQ(run("int(5),not"), "0");
  EXPECT_EQ(run("int(0),not"), "1");
  EXPECT_EQ(run("int(5),odd"), "1");
  EXPECT_EQ(run("int(5),even"), "0");
  EXPECT_EQ(run("int(5),bool"), "1");
  ParseCtx pc;
  EXPECT_EQ(Expr::parse("int(5),odd", pc)->type(), Type::kBool);
  EXPECT_EQ(Expr::parse("int(5),neg", pc)->type(), Type::kSint);
}

TEST_F(ConvArith, ReportsHaproxyParseErrors) {
  EXPECT_EQ(parse_error("int(1),add(x)"),
            "invalid args in converter 'add' : expects an integer or a variable name");
  EXPECT_EQ(parse_error("int(1),add(1x)"),
            "invalid args in converter 'add' : expects an integer or a variable name");
  EXPECT_EQ(parse_error("int(1),add(0x10)"),
            "invalid args in converter 'add' : expects an integer or a variable name");
  EXPECT_EQ(parse_error("int(1),add(txn.)"),
            "invalid args in converter 'add' : expects an integer or a variable name");
  EXPECT_EQ(parse_error("int(1),add(1,2)"),
            "invalid arg 2 in converter 'add' : expected ')' before ',2)'");
  EXPECT_EQ(parse_error("int(1),add(1"), "invalid arg 2 in converter 'add' : expected ')'");
  EXPECT_EQ(parse_error("int(1),bool(1)"),
            "invalid arg 1 in converter 'bool' : expected ')' before '1)'");
}

TEST_F(ConvArith, BinaryForms) {
  // The manual's examples.
  EXPECT_EQ(run("var(txn.bin),be2dec(:,2)", "01020304050607"), "258:772:1286:7");
  EXPECT_EQ(run("var(txn.bin),be2dec(-,2,1)", "01020304050607"), "258-772-1286");
  EXPECT_EQ(run("var(txn.bin),be2dec(,2,1)", "01020304050607"), "2587721286");
  EXPECT_EQ(run("var(txn.bin),be2dec(.,1)", "7f000001"), "127.0.0.1");
  EXPECT_EQ(run("var(txn.bin),be2hex", "01020304050607"), "01020304050607");
  EXPECT_EQ(run("var(txn.bin),be2hex(:,2)", "01020304050607"), "0102:0304:0506:07");
  EXPECT_EQ(run("var(txn.bin),be2hex(--,2,1)", "01020304050607"), "0102--0304--0506");
  EXPECT_EQ(run("var(txn.bin),be2hex(,3,1)", "0102030405060708"), "010203040506");
  // Verified on the binary.
  EXPECT_EQ(run("var(txn.bin),be2dec(.,8)", "ffffffffffffffff"), "18446744073709551615");
  EXPECT_EQ(run("var(txn.bin),be2dec(:,2,1)", "01"), "");
  EXPECT_EQ(run("int(1),be2dec(:,4)"), "0:1");
  EXPECT_EQ(run("var(txn.bin),le2dec(:,2)", "01020304050607"), "513:1027:1541:7");
  EXPECT_EQ(run("var(txn.bin),le2dec(.,4)", "7f000001"), "16777343");
  EXPECT_EQ(run("var(txn.bin),be2hex", "ff0a"), "FF0A");
  EXPECT_EQ(run("var(txn.bin),be2hex(,2,1)", "010203"), "0102");
  EXPECT_EQ(run("var(txn.bin),be2hex(,0)", "0102"), "0102");
  EXPECT_EQ(run("int(-1),htonl,be2hex"), "FFFFFFFF");
  EXPECT_EQ(run("int(4294967297),htonl,be2hex"), "00000001");
  EXPECT_EQ(parse_error("str(),be2dec"),
            "invalid args in converter 'be2dec' : chunk_size out of [1..8] range (0)");
  EXPECT_EQ(parse_error("str(),be2dec(:,9)"),
            "invalid args in converter 'be2dec' : chunk_size out of [1..8] range (9)");
  EXPECT_EQ(parse_error("str(),le2dec(:,-1)"),
            "invalid args in converter 'le2dec' : chunk_size out of [1..8] range (-1)");
  EXPECT_EQ(parse_error("str(),be2dec(:,1,2)"),
            "invalid args in converter 'be2dec' : Unsupported truncate value (2)");
  EXPECT_EQ(parse_error("str(),be2dec(:,x)"),
            "invalid arg 2 in converter 'be2dec' : failed to parse 'x' as type 'integer' at "
            "position 2");
  EXPECT_EQ(parse_error("str(),be2hex(:)"),
            "invalid args in converter 'be2hex' : chunk_size needs to be positive (0)");
  EXPECT_EQ(parse_error("str(),be2hex(:,1,2)"),
            "invalid args in converter 'be2hex' : Unsupported truncate value (2)");
  EXPECT_EQ(parse_error("str(),be2hex(,-1)"), "ok");
}

}  // namespace
}  // namespace sluice::sample
