// Value formats: literal text, %[fetch] items, the log-format aliases, %% and errors.
#include <gtest/gtest.h>

#include "rules_support.h"

namespace sluice::rules {
namespace {

using testing::Msg;

std::string render(const std::string& text, Msg& m) {
  auto f = ValueFormat::parse(text);
  EXPECT_TRUE(f.ok()) << text << ": " << (f.ok() ? "" : f.error().message);
  if (!f.ok()) return "<error>";
  std::string out;
  f->render(m.view(), out);
  return out;
}

std::string error(const std::string& text) {
  auto f = ValueFormat::parse(text);
  return f.ok() ? "" : f.error().message;
}

TEST(ValueFormat, Literal) {
  Msg m;
  auto f = ValueFormat::parse("plain text");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->is_literal());
  EXPECT_EQ(render("plain text", m), "plain text");
  EXPECT_EQ(render("100%%", m), "100%");
  EXPECT_TRUE(ValueFormat::parse("100%%")->is_literal());
  EXPECT_TRUE(ValueFormat::parse("")->is_literal());
  EXPECT_FALSE(ValueFormat::parse("%[src]")->is_literal());
}

TEST(ValueFormat, Fetches) {
  Msg m;
  m.method = "POST";
  m.target = "/a/b?x=1&y=2";
  m.fields = {{"Host", "h.example"}, {"X-A", "1, 2"}, {"X-A", "3"}};
  EXPECT_EQ(render("%[src]", m), "10.1.2.3");
  EXPECT_EQ(render("%ci:%cp", m), "10.1.2.3:40000");
  EXPECT_EQ(render("%[dst_port]/%fp", m), "8080/8080");
  EXPECT_EQ(render("%[src_port]", m), "40000");
  EXPECT_EQ(render("%[dst]", m), "127.0.0.1");
  EXPECT_EQ(render("%[method] %[path] %[query]", m), "POST /a/b x=1&y=2");
  EXPECT_EQ(render("%[url]", m), "/a/b?x=1&y=2");
  EXPECT_EQ(render("https://%[base]", m), "https://h.example/a/b");
  EXPECT_EQ(render("<%[hdr(host)]>", m), "<h.example>");
  // hdr() in a format is the last value; occurrences select another.
  EXPECT_EQ(render("%[hdr(x-a)]", m), "3");
  EXPECT_EQ(render("%[req.hdr(x-a,1)]", m), "1");
  EXPECT_EQ(render("%[req.fhdr(x-a,1)]", m), "1, 2");
  EXPECT_EQ(render("%[hdr(x-none)]", m), "");
  EXPECT_EQ(render("%[url_param(y)]", m), "2");
  EXPECT_EQ(render("%[url_param(z)]", m), "");
  EXPECT_EQ(render("%[req.ver]", m), "1.1");
  m.status = 503;
  m.res_fields = {{"Server", "s1"}};
  EXPECT_EQ(render("%[status] from %[res.hdr(server)]", m), "503 from s1");
  m.src = testing::addr("::1", 5);
  EXPECT_EQ(render("%[src]", m), "::1");
}

// Every log-format alias stands in a value, as in HAProxy: rendered from what the stream
// knows at that point, with nothing (not a log line's '-') for what is absent.
TEST(ValueFormat, LogFormatAliases) {
  Msg m;
  m.method = "GET";
  m.target = "/a/b?x=1";
  m.src = testing::addr("127.0.0.1", 4000);
  EXPECT_FALSE(ValueFormat::parse("%b")->is_literal());
  EXPECT_EQ(render("%HM %HP %HQ %HU", m), "GET /a/b ?x=1 /a/b?x=1");
  EXPECT_EQ(render("ci=%{+Q}ci cp=%{+X}cp", m), "ci=\"127.0.0.1\" cp=0FA0");
  // No backend, server, status or server connection yet: HAProxy's request-time values.
  EXPECT_EQ(render("s=%s ST=%ST si=%si sp=%sp x=%[req.hdr(nope)]y", m),
            "s=<NOSRV> ST=-1 si= sp= x=y");
  EXPECT_EQ(render("ts=%ts tsc=%tsc rc=%rc", m), "ts=-- tsc=---- rc=0");
  // Spaces are text in a value: kept as written.
  EXPECT_EQ(render("%HM  %HP", m), "GET  /a/b");
  EXPECT_NE(error("%{+Q"), "");   // the log-format parser's own message
}

TEST(ValueFormat, Errors) {
  EXPECT_EQ(error("%[src"), "missing ']' after 'src'");
  EXPECT_NE(error("%[foo]").find("unknown fetch method 'foo'"), std::string::npos);
  EXPECT_EQ(error("%[req.cook(a)]"), "");
  EXPECT_EQ(error("%[path_beg]"), "failed to parse sample expression <path_beg]> : unknown fetch method 'path_beg'");
  EXPECT_EQ(error("%[path,lower]"), "");
  EXPECT_EQ(error("%[src,lower x]"), "expected ']' after 'src,lower', but found ' '");
  EXPECT_EQ(error("%b"), "");
  EXPECT_EQ(error("%Ts%ms"), "");
  EXPECT_EQ(error("%{+Q}r"), "");
  EXPECT_NE(error("%zz").find("no such format alias 'zz'"), std::string::npos);
  EXPECT_EQ(error("50%"), "truncated line after '%'");
  EXPECT_EQ(error("%[]"), "failed to parse sample expression <]> : missing fetch method");
  EXPECT_EQ(error("%1"), "unexpected alias name near '1' at position 1 line : '%1'. Maybe you want "
                         "to write a single '%', use the syntax '%%'");
}

}  // namespace
}  // namespace sluice::rules
