// json_query; expected values from HAProxy 3.5-dev5 (`return lf-string "%[...]"` on the same
// input), HAProxy's documented examples first.
#include <gtest/gtest.h>

#include <string>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

using testing::on_body;
using testing::parse_error;
using testing::type_on_body;

TEST(ConvJson, DocumentedExamples) {
  constexpr std::string_view kDoc =
      R"({"my_string_val":"Hello","my_int_val":1,"my_bool_val":true,"my_float_val":3.14,)"
      R"("my_null_val":null,"my_array":["manage-account","manage-account-links","view-profile"],)"
      R"("my_obj":{"x":"y"}})";
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_string_val')"), "Hello");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_int_val','int')"), "1");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_bool_val')"), "1");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_float_val')"), "3.14");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_array')"),
            R"(["manage-account","manage-account-links","view-profile"])");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_array[1]')"), "manage-account-links");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_null_val')"), "<none>");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_obj')"), "<none>");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.my_obj.x')"), "y");
  EXPECT_EQ(on_body(kDoc, ",json_query('$.missing')"), "<none>");
}

TEST(ConvJson, Types) {
  EXPECT_EQ(type_on_body(R"({"a":true})", ",json_query('$.a')"), Type::kBool);
  EXPECT_EQ(type_on_body(R"({"a":1})", ",json_query('$.a','int')"), Type::kSint);
  EXPECT_EQ(type_on_body(R"({"a":1})", ",json_query('$.a')"), Type::kStr);
  EXPECT_EQ(type_on_body(R"({"a":"s"})", ",json_query('$.a')"), Type::kStr);
  // Known only at run time, as HAProxy's "any".
  ParseCtx pc;
  EXPECT_EQ(Expr::parse("req.body,json_query('$.a')", pc)->type(), Type::kAny);
}

TEST(ConvJson, Numbers) {
  EXPECT_EQ(on_body(R"({"a":-12.5})", ",json_query('$.a')"), "-12.5");
  EXPECT_EQ(on_body(R"({"a":-12.5})", ",json_query('$.a',int)"), "-12");
  EXPECT_EQ(on_body(R"({"a":1.5e3})", ",json_query('$.a')"), "1500");
  EXPECT_EQ(on_body(R"({"a":1.5e3})", ",json_query('$.a',int)"), "1");
  EXPECT_EQ(on_body(R"({"a":1e300})", ",json_query('$.a')"), "1e+300");
  EXPECT_EQ(on_body(R"({"a":1e400})", ",json_query('$.a')"), "inf");
  EXPECT_EQ(on_body(R"({"a":0.1234567})", ",json_query('$.a')"), "0.123457");
  EXPECT_EQ(on_body(R"({"a":010})", ",json_query('$.a')"), "10");
  EXPECT_EQ(on_body(R"({"a":010})", ",json_query('$.a',int)"), "8");   // strtoll, base 0
  EXPECT_EQ(on_body(R"({"a":-})", ",json_query('$.a')"), "0");
  EXPECT_EQ(on_body(R"({"a":9007199254740993})", ",json_query('$.a')"), "9.0072e+15");
  EXPECT_EQ(on_body(R"({"a":9007199254740993})", ",json_query('$.a',int)"), "<none>");
  EXPECT_EQ(on_body(R"({"a":9007199254740991})", ",json_query('$.a',int)"),
            "9007199254740991");
  EXPECT_EQ(on_body(R"({"b":1.})", ",json_query('$.b')"), "0");
  EXPECT_EQ(on_body(R"({"b":0x1F})", ",json_query('$.b')"), "0");
  EXPECT_EQ(on_body(R"({"b":0x1F})", ",json_query('$.b',int)"), "31");
}

TEST(ConvJson, Strings) {
  EXPECT_EQ(on_body(R"({"a":"x\"y\\z"})", ",json_query('$.a')"), "x\"y\\z");
  EXPECT_EQ(on_body(R"({"a":"x\ny"})", ",json_query('$.a')"), "x\ny");
  EXPECT_EQ(on_body(R"({"a":"x\/y"})", ",json_query('$.a')"), "<none>");
  EXPECT_EQ(on_body(R"({"a":"x\u0041y"})", ",json_query('$.a')"), "xAy");
  EXPECT_EQ(on_body(R"({"a":"x\u00e9y"})", ",json_query('$.a')"), "x\xe9y");
  EXPECT_EQ(on_body(R"({"a":"x\u0141y"})", ",json_query('$.a')"), "<none>");
  EXPECT_EQ(on_body(R"({"b":"\u00zz"})", ",json_query('$.b'),hex"), "33");
  EXPECT_EQ(on_body(R"({"b":"\u00A@"})", ",json_query('$.b'),hex"), "E9");
  EXPECT_EQ(on_body(R"({"b":"a\u0000b"})", ",json_query('$.b'),hex"), "610062");
  EXPECT_EQ(on_body(R"({"b":"\u004"})", ",json_query('$.b')"), "<none>");
  EXPECT_EQ(on_body(R"({"b":""})", ",json_query('$.b'),length"), "0");
  EXPECT_EQ(on_body(R"({"b":"tab\t\b\f\r"})", ",json_query('$.b')"), "tab\t\b\f\r");
}

TEST(ConvJson, PathsAndContainers) {
  EXPECT_EQ(on_body(R"({"a":[1, "two" ,{"b":3}]})", ",json_query('$.a')"),
            R"([1, "two" ,{"b":3}])");
  EXPECT_EQ(on_body(R"({"a":[1, "two" ,{"b":3}]})", ",json_query('$.a[2].b')"), "3");
  EXPECT_EQ(on_body(R"({"a":[]})", ",json_query('$.a')"), "[]");
  EXPECT_EQ(on_body(R"({"a":{}})", ",json_query('$.a')"), "<none>");
  EXPECT_EQ(on_body(R"({"a":[[1,2],[3]],"b":"s"})", ",json_query('$.a[0][0]')"), "1");
  EXPECT_EQ(on_body(R"({"a" :[ [ 5 ] ] , "b" : true })", ",json_query('$.a[0][0]')"), "5");
  EXPECT_EQ(on_body(R"({"b":[1,{"x":[2]},"]"]})", ",json_query('$.b')"),
            R"([1,{"x":[2]},"]"])");
  EXPECT_EQ(on_body(R"(  {  "a" : { "b" : "deep" } })", ",json_query('$.a.b')"), "deep");
  EXPECT_EQ(on_body(R"({"x":{"a":5},"a":6})", ",json_query('$.a')"), "6");
  EXPECT_EQ(on_body(R"({"a":1,"a":2})", ",json_query('$.a')"), "1");
  EXPECT_EQ(on_body(R"({"a.b":7})", R"(,json_query('$.a\.b'))"), "7");
  EXPECT_EQ(on_body("[1,2,3]", ",json_query('$')"), "[1,2,3]");
  EXPECT_EQ(on_body("7", ",json_query('$')"), "7");
  EXPECT_EQ(on_body(R"("str")", ",json_query('$')"), "str");
  EXPECT_EQ(on_body(R"({"a":1})", ",json_query('$')"), "<none>");
  EXPECT_EQ(on_body(R"({"a":1})", ",json_query('a')"), "<none>");   // no '$'
  // 20 levels of nesting are fine, 21 are a malformed document.
  std::string ok = R"({"a":)" + std::string(19, '[') + "1" + std::string(19, ']') + "}";
  std::string deep = R"({"a":)" + std::string(20, '[') + "1" + std::string(20, ']') + "}";
  EXPECT_EQ(on_body(ok, ",json_query('$.a')"), ok.substr(5, ok.size() - 6));
  EXPECT_EQ(on_body(deep, ",json_query('$.a')"), "<none>");
}

TEST(ConvJson, MalformedInputs) {
  // The scan stops at the value: what follows it is never read.
  EXPECT_EQ(on_body(R"({"a":1 garbage)", ",json_query('$.a')"), "1");
  EXPECT_EQ(on_body(R"({"a":1}xx)", ",json_query('$.a')"), "1");
  EXPECT_EQ(on_body(R"({"a":[1,2)", ",json_query('$.a[1]')"), "2");
  EXPECT_EQ(on_body(R"({"b":truex})", ",json_query('$.b')"), "1");
  EXPECT_EQ(on_body(R"({"a":[1,2)", ",json_query('$.a')"), "<none>");
  EXPECT_EQ(on_body(R"({"b":tru})", ",json_query('$.b')"), "<none>");
  EXPECT_EQ(on_body(R"({"b":"ab\"})", ",json_query('$.b')"), "<none>");
  for (std::string_view bad : {"", "{", "}", "]", "[", "{\"a\"", "{\"a\":", "{\"a\" 1}", "{1:2}",
                               "[,]", "{\"b\":1,,}", "\"", "-", "nul", "{\"a\":[}]}",
                               "{\"a\":\"x\0y\"}", "\\u00", "[[[[[[[[[[[[[[[[[[[[[[[[[[[["}) {
    EXPECT_EQ(on_body(bad, ",json_query('$.a')"), "<none>") << bad;
    EXPECT_EQ(on_body(bad, ",json_query('$.a[3].b',int)"), "<none>") << bad;
  }
  // Odd paths never read outside themselves.
  for (std::string_view path : {"$[", "$[0", "$[99", "$.", "$.a\\", "$..", "$[x]", "$[-1]"})
    on_body(R"({"a":[1,[2]],"":3})", ",json_query('" + std::string(path) + "')");
}

TEST(ConvJson, ParseErrors) {
  EXPECT_EQ(parse_error("req.body,json_query"),
            "invalid args in converter 'json_query' : json_path must not be empty");
  EXPECT_EQ(parse_error("req.body,json_query('')"),
            "invalid args in converter 'json_query' : json_path must not be empty");
  EXPECT_EQ(parse_error("req.body,json_query($.a,str)"),
            "invalid args in converter 'json_query' : output_type only supports \"int\" as "
            "argument");
  EXPECT_EQ(parse_error("json_query($.a)"), "unknown fetch method 'json_query'");
  EXPECT_EQ(parse_error("int(1),json_query($.a)"), "ok");
}

}  // namespace
}  // namespace sluice::sample
