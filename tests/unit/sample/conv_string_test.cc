// String converters; expected values checked against HAProxy 3.5-dev5 (`return lf-string
// "%[str(...),conv]"`, `-c` for the parse errors) or taken from its manual's examples.
#include <gtest/gtest.h>

#include "sample/expr.h"
#include "sample_support.h"
#include "sample/vars.h"

namespace sluice::sample {
namespace {

using testing::parse_error;

// txn.s="hello", txn.e="", txn.i=42; txn.bin holds `bin` as binary.
std::string run(std::string_view text, std::string_view bin = {}) {
  static VarStore txn(Scope::kTxn);
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  txn.clear();
  auto& n = VarNames::global();
  txn.set(n.find("txn.s"), Sample::string("hello"));
  txn.set(n.find("txn.e"), Sample::string(""));
  txn.set(n.find("txn.i"), Sample::integer(42));
  Sample b = Sample::string(bin);
  b.type = Type::kBin;
  txn.set(n.find("txn.bin"), b);
  Ctx ctx;
  ctx.txn_vars = &txn;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

class ConvString : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    VarRef r;
    std::string err;
    for (const char* v : {"txn.s", "txn.e", "txn.i", "txn.bin"}) VarNames::global().parse(v, &r, &err);
  }
};

TEST_F(ConvString, CaseTrimLengthReverse) {
  EXPECT_EQ(run("str(AbC),lower"), "abc");
  EXPECT_EQ(run("str(AbC),upper"), "ABC");
  EXPECT_EQ(run("str(AbC),lower()"), "abc");
  EXPECT_EQ(run("str(xxabcxx),ltrim(x)"), "abcxx");
  EXPECT_EQ(run("str(xyabcxy),ltrim(xy)"), "abcxy");
  EXPECT_EQ(run("str(xyabcxy),rtrim(xy)"), "xyabc");
  EXPECT_EQ(run("str(xxxx),ltrim(x)"), "");
  EXPECT_EQ(run("str(xxxx),rtrim(x)"), "");
  EXPECT_EQ(run("str(abc),ltrim()"), "abc");
  EXPECT_EQ(run("str(hello),length"), "5");
  EXPECT_EQ(run("str(),length"), "0");
  EXPECT_EQ(run("int(12345),length"), "5");
  EXPECT_EQ(run("str(abcd),cut_crlf"), "abcd");
  EXPECT_EQ(run("var(txn.bin),cut_crlf", "ab\r\ncd"), "ab");
  EXPECT_EQ(run("var(txn.bin),cut_crlf", "ab\ncd"), "ab");
  EXPECT_EQ(run("str(abc),reverse"), "cba");
  EXPECT_EQ(run("str(),reverse"), "");
  EXPECT_EQ(parse_error("str(a),reverse(1)"),
            "invalid arg 1 in converter 'reverse' : expected ')' before '1)'");
  EXPECT_EQ(parse_error("str(a),ltrim(a,b)"),
            "invalid arg 2 in converter 'ltrim' : expected ')' before ',b)'");
  EXPECT_EQ(parse_error("str(a),ltrim"), "ok");
}

TEST_F(ConvString, Bytes) {
  EXPECT_EQ(run("str(abcdef),bytes"), "abcdef");
  EXPECT_EQ(run("str(abcdef),bytes(,1)"), "a");
  EXPECT_EQ(run("str(abcdef),bytes(1)"), "bcdef");
  EXPECT_EQ(run("str(abcdef),bytes(3)"), "def");
  EXPECT_EQ(run("str(abcdef),bytes(6)"), "");
  EXPECT_EQ(run("str(abcdef),bytes(7)"), "");
  EXPECT_EQ(run("str(abcdef),bytes(1,1)"), "b");
  EXPECT_EQ(run("str(abcdef),bytes(1,10)"), "bcdef");
  EXPECT_EQ(run("str(abcdef),bytes(txn.i)"), "");
  EXPECT_EQ(run("str(abcdef),bytes(txn.none)"), "<none>");
  EXPECT_EQ(run("str(abcdef),bytes(1,txn.none)"), "<none>");
  EXPECT_EQ(run("int(258),bytes(6),be2hex"), "0102");   // integers are 8 bytes
  EXPECT_EQ(parse_error("str(a),bytes(1,0)"),
            "invalid args in converter 'bytes' : expects a positive integer");
  EXPECT_EQ(parse_error("str(a),bytes(1,)"),
            "invalid args in converter 'bytes' : expects a positive integer");
  EXPECT_EQ(parse_error("str(a),bytes(-1)"),
            "invalid args in converter 'bytes' : expects a non-negative integer");
  EXPECT_EQ(parse_error("str(a),bytes(x)"),
            "invalid args in converter 'bytes' : expects an integer or a variable name");
  EXPECT_EQ(parse_error("str(a),bytes(1,2,3)"),
            "invalid arg 2 in converter 'bytes' : expected ')' before ',3)'");
}

TEST_F(ConvString, FieldAndWord) {
  // The manual's examples.
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(5,_)"), "f5");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(2,_,0)"), "f2_f3__f5");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(2,_,2)"), "f2_f3");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(-2,_,3)"), "f2_f3_");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(-3,_,0)"), "f1_f2_f3");
  EXPECT_EQ(run("str(f1_f2_f3__f5),word(4,_)"), "f5");
  EXPECT_EQ(run("str(f1_f2_f3__f5),word(2,_,0)"), "f2_f3__f5");
  EXPECT_EQ(run("str(f1_f2_f3__f5),word(2,_,2)"), "f2_f3");
  EXPECT_EQ(run("str(__f1_f2_f3__f5__),word(2,_,0)"), "f2_f3__f5__");
  EXPECT_EQ(run("str(__f1_f2_f3__f5__),word(-2,_,0)"), "__f1_f2_f3");
  EXPECT_EQ(run("str(/images/logo.png),word(-1,/)"), "logo.png");
  // Verified on the binary.
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(4,_)"), "");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(6,_)"), "<none>");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(-5,_)"), "f1");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(-6,_)"), "<none>");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(-2,_,10)"), "f1_f2_f3_");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(2,_,-1)"), "f2_f3__f5");
  EXPECT_EQ(run("str(f1_f2_f3__f5),field(-2,_,-1)"), "f1_f2_f3_");
  EXPECT_EQ(run("str(a.b-c),field(2,.-)"), "b");
  EXPECT_EQ(run("str(a.b-c),field(-1,.-,2)"), "b-c");
  EXPECT_EQ(run("str(),field(1,_)"), "");
  EXPECT_EQ(run("str(),field(2,_)"), "<none>");
  EXPECT_EQ(run("str(),field(-1,_)"), "");
  EXPECT_EQ(run("str(a_b_),field(-1,_)"), "");
  EXPECT_EQ(run("str(a_b_),field(-1,_,2)"), "b_");
  EXPECT_EQ(run("str(_a_b),field(1,_,2)"), "_a");
  EXPECT_EQ(run("str(f1_f2_f3__f5),word(5,_)"), "<none>");
  EXPECT_EQ(run("str(__f1_f2_f3__f5__),word(-2,_,2)"), "f2_f3");
  EXPECT_EQ(run("str(__f1_f2__),word(1,_,10)"), "f1_f2__");
  EXPECT_EQ(run("str(__f1_f2__),word(-1,_,10)"), "__f1_f2");
  EXPECT_EQ(run("str(__f1_f2__),word(-2,_)"), "f1");
  EXPECT_EQ(run("str(__f1_f2__),word(-3,_)"), "<none>");
  EXPECT_EQ(run("str(f1_f2_f3__f5),word(-2,_,-1)"), "f1_f2_f3");
  EXPECT_EQ(run("str(___),word(1,_)"), "<none>");
  EXPECT_EQ(run("str(),word(1,_)"), "<none>");
  EXPECT_EQ(parse_error("str(a),field(0,_)"),
            "invalid args in converter 'field' : Unexpected value 0 for index");
  EXPECT_EQ(parse_error("str(a),word(1,)"),
            "invalid args in converter 'word' : Empty separators list");
  EXPECT_EQ(parse_error("str(a),field"),
            "invalid arg 1 in converter 'field' : expected type 'integer' at position 1, but "
            "got nothing");
  EXPECT_EQ(parse_error("str(a),word(1)"),
            "invalid arg 2 in converter 'word' : missing arguments (got 1/2), type 'string' "
            "expected");
  EXPECT_EQ(parse_error("str(a),field(1,a,x)"),
            "invalid arg 3 in converter 'field' : failed to parse 'x' as type 'integer' at "
            "position 3");
  EXPECT_EQ(parse_error("str(a),field(1,a,1,2)"),
            "invalid arg 3 in converter 'field' : expected ')' before ',2)'");
  EXPECT_EQ(parse_error("str(a),word(1,a"), "invalid arg 2 in converter 'word' : expected ')'");
}

TEST_F(ConvString, HostPortIifHasCtl) {
  EXPECT_EQ(run("str(WWW.Example.COM:8080),host_only"), "www.example.com");
  EXPECT_EQ(run("str([::1]:80),host_only"), "[::1]");
  EXPECT_EQ(run("str([::1]),host_only"), "[::1]");
  EXPECT_EQ(run("str(a:b:c),host_only"), "a:b");
  EXPECT_EQ(run("str(::1),host_only"), ":");
  EXPECT_EQ(run("str(:80),host_only"), "");
  EXPECT_EQ(run("str(www.example.com:8080),port_only"), "8080");
  EXPECT_EQ(run("str(www.example.com),port_only"), "0");
  EXPECT_EQ(run("str([::1]:80),port_only"), "80");
  EXPECT_EQ(run("str([::1]),port_only"), "0");
  EXPECT_EQ(run("str(a:1:2),port_only"), "2");
  EXPECT_EQ(run("str(a:b),port_only"), "50");            // digits are not checked
  EXPECT_EQ(run("str(a:-1),port_only"), "4294967267");   // in 32 bits
  EXPECT_EQ(run("str(a:99999999999),port_only"), "1215752191");
  EXPECT_EQ(run("bool(1),iif(yes,no)"), "yes");
  EXPECT_EQ(run("int(0),iif(yes,no)"), "no");
  EXPECT_EQ(run("str(abc),iif(yes,no)"), "no");
  EXPECT_EQ(run("str(),iif(yes,no)"), "<none>");
  EXPECT_EQ(parse_error("str(a),iif(a)"),
            "invalid arg 2 in converter 'iif' : missing arguments (got 1/2), type 'string' "
            "expected");
  EXPECT_EQ(parse_error("str(a),iif(a,b,c)"),
            "invalid arg 2 in converter 'iif' : expected ')' before ',c)'");
  EXPECT_EQ(run("var(txn.bin),has_ctl", "ab\tc"), "0");
  EXPECT_EQ(run("var(txn.bin),has_ctl", "ab\x1f" "c"), "1");
  EXPECT_EQ(run("var(txn.bin),has_ctl", "ab\x7f"), "1");
  EXPECT_EQ(run("var(txn.bin),has_ctl", "ab\x80\xff"), "0");
  EXPECT_EQ(run("var(txn.bin),has_ctl(2)", "ab\x01"), "1");
  EXPECT_EQ(run("var(txn.bin),has_ctl(1)", "ab\x01"), "0");
  EXPECT_EQ(run("var(txn.bin),has_ctl(0x200)", "a\tb"), "1");
  EXPECT_EQ(run("var(txn.bin),has_ctl(0x100000000)", "a\x7f"), "1");
  EXPECT_EQ(run("str(abc),has_ctl"), "0");
  EXPECT_EQ(run("int(5),has_ctl"), "1");   // 8 bytes, mostly NUL
  EXPECT_EQ(parse_error("str(a),has_ctl(b)"),
            "invalid args in converter 'has_ctl' : cannot parse value 'b', problem at position "
            "0; expecting an integer value (decimal or hex with '0x' prefix)");
  EXPECT_EQ(parse_error("str(a),has_ctl(-1)"),
            "invalid args in converter 'has_ctl' : unsupported excess bits 0xfffffffe00000000 "
            "in argument value -1");
  EXPECT_EQ(parse_error("str(a),has_ctl(99999999999)"),
            "invalid args in converter 'has_ctl' : unsupported excess bits 0x1600000000 in "
            "argument value 99999999999");
}

TEST_F(ConvString, ConcatAddItem) {
  EXPECT_EQ(run("str(abc),concat(<,txn.s,>)"), "abc<hello>");
  EXPECT_EQ(run("str(abc),concat(<,txn.none,>)"), "abc<>");
  EXPECT_EQ(run("str(abc),concat(<)"), "abc<");
  EXPECT_EQ(run("str(abc),concat(,txn.i)"), "abc42");
  EXPECT_EQ(run("str(abc),concat(,,x)"), "abcx");
  EXPECT_EQ(run("str(abc),concat"), "abc");
  EXPECT_EQ(run("int(5),concat(x)"), "5x");
  EXPECT_EQ(run("str(abc),add_item(':',txn.s,x)"), "abc:hellox");
  EXPECT_EQ(run("str(),add_item(':',txn.s,x)"), "hellox");
  EXPECT_EQ(run("str(abc),add_item(':',txn.none,x)"), "abc:x");
  EXPECT_EQ(run("str(abc),add_item(':',txn.none)"), "abc");
  EXPECT_EQ(run("str(abc),add_item(':',txn.e)"), "abc");
  EXPECT_EQ(run("str(abc),add_item(':',,x)"), "abc:x");
  EXPECT_EQ(run("str(),add_item(':',,x)"), "x");
  EXPECT_EQ(run("str(abc),add_item(':',txn.i)"), "abc:42");
  EXPECT_EQ(run("str(abc),add_item(':',txn.e,x)"), "abc:x");
  EXPECT_EQ(run("str(),add_item(':',txn.none)"), "");
  EXPECT_EQ(parse_error("str(a),concat(a,foo.bar)"),
            "invalid args in converter 'concat' : failed to register variable name 'foo.bar'");
  EXPECT_EQ(parse_error("str(a),add_item(x)"),
            "invalid arg 2 in converter 'add_item' : missing arguments (got 1/2), type "
            "'string' expected");
  EXPECT_EQ(parse_error("str(a),add_item(x,)"),
            "invalid args in converter 'add_item' : one of the optional arguments has to be "
            "nonempty");
  EXPECT_EQ(parse_error("str(a),add_item(x,,y)"), "ok");
}

TEST_F(ConvString, Compare) {
  EXPECT_EQ(run("str(hello),strcmp(txn.s)"), "0");
  EXPECT_EQ(run("str(hell),strcmp(txn.s)"), "-1");
  EXPECT_EQ(run("str(helloo),strcmp(txn.s)"), "1");
  EXPECT_EQ(run("str(a),strcmp(txn.s)"), "-7");
  EXPECT_EQ(run("str(z),strcmp(txn.s)"), "18");
  EXPECT_EQ(run("str(),strcmp(txn.s)"), "-1");
  EXPECT_EQ(run("str(hello),strcmp(txn.none)"), "<none>");
  EXPECT_EQ(run("int(42),strcmp(txn.i)"), "0");
  EXPECT_EQ(run("str(hello),secure_memcmp(txn.s)"), "1");
  EXPECT_EQ(run("str(hellp),secure_memcmp(txn.s)"), "0");
  EXPECT_EQ(run("str(hell),secure_memcmp(txn.s)"), "0");
  EXPECT_EQ(run("str(hello),secure_memcmp(txn.none)"), "<none>");
  EXPECT_EQ(run("str(42),secure_memcmp(txn.i)"), "0");   // the integer is 8 bytes
  EXPECT_EQ(run("str(),secure_memcmp(txn.e)"), "1");
  EXPECT_EQ(parse_error("str(a),strcmp"),
            "invalid args in converter 'strcmp' : missing variable name");
  EXPECT_EQ(parse_error("str(a),secure_memcmp(x)"),
            "invalid args in converter 'secure_memcmp' : failed to register variable name 'x'");
}

TEST_F(ConvString, Language) {
  auto lang = [](std::string_view header, std::string_view args) {
    return run("var(txn.bin),language(" + std::string(args) + ")", header);
  };
  EXPECT_EQ(lang("fr-FR;q=0.8,en;q=0.9,es", "es;fr;en"), "es");
  EXPECT_EQ(lang("fr-FR;q=0.8,en;q=0.9", "es;fr;en"), "en");
  EXPECT_EQ(lang("fr-FR;q=0.8,en;q=0.7", "es;fr;en"), "fr");
  EXPECT_EQ(lang("fr-FR;q=0.8,en;q=0.7", "es;fr-FR;en"), "fr-FR");
  EXPECT_EQ(lang("de", "es;fr,xx"), "xx");
  EXPECT_EQ(lang("de", "es;fr"), "<none>");
  EXPECT_EQ(lang("en;q=0", "en;fr,dflt"), "dflt");
  EXPECT_EQ(lang("EN", "en;fr"), "<none>");
  EXPECT_EQ(lang(" en , fr;q=0.5", "fr;en"), "en");
  EXPECT_EQ(lang("fr;q=0.5,en;q=0.5", "en;fr"), "fr");
  EXPECT_EQ(lang("en;q=0.333,fr;q=0.334", "en;fr"), "fr");
  EXPECT_EQ(lang("en;q=0.3333,fr;q=0.3334", "en;fr"), "en");
  EXPECT_EQ(lang("en-GB", "en;en-GB"), "en");
  EXPECT_EQ(lang("en-GB", "en-GB;en"), "en-GB");
  EXPECT_EQ(lang("en", "en-GB"), "<none>");
  EXPECT_EQ(lang("enx", "en"), "<none>");
  EXPECT_EQ(lang("*", "en"), "<none>");
  EXPECT_EQ(lang("en;Q=0.3,fr;q=0.5", "en;fr"), "en");
  EXPECT_EQ(lang("en;foo=1;q=0.3,fr;q=0.5", "en;fr"), "en");
  EXPECT_EQ(lang("en;q = 0.6,fr;q=0.5", "en;fr"), "en");
  EXPECT_EQ(lang("en;q=0.3;foo=1,fr;q=0.5", "en;fr"), "fr");
  EXPECT_EQ(lang("en;q=.3,fr;q=0.5", "en;fr"), "en");
  EXPECT_EQ(lang("en;q=0.3,fr;q=1.5", "en;fr"), "fr");
  EXPECT_EQ(lang("en;q=0.3,fr;q=00.5", "en;fr"), "en");
  EXPECT_EQ(lang("en;q=0,fr", "fr;en"), "<none>");   // HAProxy's q reader eats the ','
  EXPECT_EQ(lang("xx;q=0,en", "en"), "en");
  EXPECT_EQ(lang("fr  x", "fr"), "<none>");
  EXPECT_EQ(lang("fr;q=0.001", "fr,d"), "fr");
  EXPECT_EQ(lang("en;q=0.0009", "fr;en,d"), "d");
  EXPECT_EQ(lang("", "en,d"), "d");
  EXPECT_EQ(lang("en", ",d"), "d");
  EXPECT_EQ(lang("fr", ";fr"), "fr");
}

TEST_F(ConvString, Regsub) {
  EXPECT_EQ(run("str(aaa/bbb//c),regsub('/+','/','g')"), "aaa/bbb/c");
  EXPECT_EQ(run("str(aaa/bbb//c),regsub('/+','/')"), "aaa/bbb//c");
  EXPECT_EQ(run(R"(str(FooBar12),regsub("(foo|bar)([0-9]+)?","\\2\\1",i))"), "FooBar12");
  EXPECT_EQ(run(R"(str(FooBar12),regsub("(foo|bar)([0-9]+)?","\\2\\1",gi))"), "Foo12Bar");
  EXPECT_EQ(run("str(abc),regsub('x*','-','g')"), "-a-b-c-");
  EXPECT_EQ(run("str(abc),regsub('b*','-','g')"), "-a--c-");
  EXPECT_EQ(run("str(abc),regsub('^','>')"), ">abc");
  EXPECT_EQ(run("str(aXbXc),regsub('^a|X','_','g')"), "__b_c");
  // HAProxy 3.5's outputs: `g` never re-anchors `^`, each round sees only the rest of the input,
  // and an empty match at the end adds the replacement once more.
  EXPECT_EQ(run("str(aaa),regsub('^a','X','g')"), "Xaa");
  EXPECT_EQ(run("str(baaac),regsub('a*','X','g')"), "XbXXcX");
  EXPECT_EQ(run("str(baaac),regsub('a*','X')"), "Xbaaac");
  EXPECT_EQ(run("str(abc),regsub('$','X','g')"), "abcXX");
  EXPECT_EQ(run("str(abc),regsub('c$','X','g')"), "abX");
  EXPECT_EQ(run("str(abc),regsub('(?=c)','X','g')"), "abXXc");
  EXPECT_EQ(run("str(abc),regsub('^','X','g')"), "Xabc");
  EXPECT_EQ(run("str(abab),regsub('\\bab','X','g')"), "XX");
  EXPECT_EQ(run("str(aXbX),regsub('(?<=X)b','Y','g')"), "aXYX");
  EXPECT_EQ(run("str(abc),regsub('\\Gb','X','g')"), "abc");
  EXPECT_EQ(run("str(aa),regsub('a|','X','g')"), "XXX");
  EXPECT_EQ(run("str(aaa),regsub('a','','g')"), "");
  EXPECT_EQ(run("str(bbb),regsub('b*?','X','g')"), "XbXbXbX");
  EXPECT_EQ(run("str(a1b22c333),regsub('[0-9]+','<\\0>','g')"), "a<1>b<22>c<333>");
  EXPECT_EQ(run("str(ABCb),regsub('b','x','gi')"), "AxCx");
  EXPECT_EQ(run("str(),regsub('^','X','g')"), "X");
  EXPECT_EQ(parse_error("str(a),regsub('(',b)"),
            "invalid args in converter 'regsub' : error in regex '(' in arg 1 of conversion "
            "keyword 'regsub' : regex '(' is invalid (error=missing closing parenthesis, "
            "erroffset=1)");
  EXPECT_EQ(parse_error("str(a),regsub(a,b,x)"),
            "invalid args in converter 'regsub' : invalid regex flag 'x', only 'i' and 'g' are "
            "supported");
  EXPECT_EQ(parse_error("str(a),regsub(a)"),
            "invalid arg 2 in converter 'regsub' : missing arguments (got 1/2), type 'string' "
            "expected");
  EXPECT_EQ(parse_error("str(a),regsub(a,b,gg)"), "ok");
  EXPECT_NE(parse_error("str(a),regsub('(',b)"), "ok");
}

}  // namespace
}  // namespace sluice::sample
