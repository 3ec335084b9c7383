// The HTTP transaction without a wire: heads parsed by the test are handed to HttpTxn as a mux
// would hand them, and what it decides (forward or a local answer, the edited head, counters,
// the record) is read back. No connection is made: the transaction needs none.
#include "proxy/http_txn.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/forward.h"
#include "http/http.h"
#include "proxy_fixture.h"
#include "rules/rules.h"

namespace sluice::proxy {
namespace {

using fixture::kLoopback;
using fixture::ProxyHarness;
using fixture::server_at;

// The session a transaction's backend leg belongs to (the leg queues it on a full server).
class OwnerStub : public Session {
 public:
  void start() override {}
  void abort(const char*) override {}
  bool retry_from_queue() override { return true; }
  bool uses_server(const lb::Server*) const override { return false; }
  void describe(SessionInfo*) const override {}
  void on_timer(core::Timer&) override {}
};

rules::HttpRule rule(const std::vector<std::string>& words, rules::RuleSide side) {
  rules::AclRegistry acls;
  auto r = rules::parse_http_rule(words, side, acls);
  EXPECT_TRUE(r.ok()) << words[0];
  return std::move(r.value());
}

class HttpTxnTest : public ::testing::Test {
 protected:
  // A `listen` proxy whose server is never connected to: the transaction only picks.
  void build(const std::function<void(ProxySettings&)>& tune = {}) {
    ASSERT_TRUE(h_.build(true, {server_at("s1", 1, 1)}, tune));
    txn_ = std::make_unique<HttpTxn>(h_.w(), *h_.w().process().listeners()[0], owner_, client_);
  }

  // Parses `bytes` as a request head and prepares the server's head as the H1 mux does.
  HttpTxn::Next request(std::string_view bytes) {
    parser_.reset();
    EXPECT_EQ(parser_.parse(bytes), http::ParseStatus::kComplete);
    const http::RequestHead& head = parser_.head();
    edit_ = rules::HeadEdit{};
    edit_.headers = head.headers;
    edit_.method = head.method;
    edit_.target = http::normalize_target(head, edit_.storage);
    http::rewrite_request_fields(head, edit_.headers, edit_.storage);
    return txn_->on_request(head, edit_, codecs_);
  }

  HttpTxn::Next response(std::string_view bytes) {
    res_parser_.reset();
    EXPECT_EQ(res_parser_.parse(bytes), http::ParseStatus::kComplete);
    const http::ResponseHead& head = res_parser_.head();
    res_edit_ = rules::HeadEdit{};
    res_edit_.headers = head.headers;
    return txn_->on_response(head, res_edit_, codecs_);
  }

  std::string field(const rules::HeadEdit& e, std::string_view name) const {
    for (const auto& h : e.headers)
      if (http::iequals(h.name, name)) return std::string(h.value);
    return "<none>";
  }

  ProxyHarness h_;
  OwnerStub owner_;
  net::SocketAddress client_ = net::SocketAddress::ipv4(0x0a000001, 40000);   // 10.0.0.1
  std::unique_ptr<HttpTxn> txn_;
  http::RequestParser parser_;
  http::ResponseParser res_parser_;
  rules::HeadEdit edit_, res_edit_;
  HttpCodecs codecs_{http::Limits{}, http::Limits{}};
};

TEST_F(HttpTxnTest, ARequestWithoutRulesIsForwardedToTheProxysOwnBackend) {
  build();
  EXPECT_EQ(request("GET /a HTTP/1.1\r\nhost: x\r\n\r\n"), HttpTxn::Next::kForward);
  EXPECT_EQ(txn_->backend(), &h_.px());
  EXPECT_EQ(txn_->method(), http::Method::kGet);
  EXPECT_TRUE(txn_->http11());
  EXPECT_EQ(h_.fc().req_tot.get(), 1u);
  EXPECT_EQ(h_.bc().req_tot.get(), 1u);
  EXPECT_EQ(txn_->status, -1);   // nothing answered yet
  txn_->release_backend();
  EXPECT_EQ(txn_->backend(), nullptr);
}

TEST_F(HttpTxnTest, DenyIsAnsweredLocallyWithA403AndCounted) {
  build([](ProxySettings& p) {
    p.h.request_rules.push_back(rule({"deny"}, rules::RuleSide::kRequest));
  });
  EXPECT_EQ(request("GET / HTTP/1.1\r\n\r\n"), HttpTxn::Next::kReply);
  LocalReply& r = codecs_.reply;
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.term, (log::Termination{log::Cause::kProxy, log::FinalState::kRequest}));
  EXPECT_TRUE(r.skip_body);
  EXPECT_EQ(r.bytes.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << r.bytes;
  EXPECT_EQ(txn_->backend(), nullptr);
  EXPECT_EQ(h_.fc().dreq.get(), 1u);
  txn_->replied(r.status, r.term);
  EXPECT_EQ(txn_->status, 403);
  EXPECT_EQ(h_.fc().hrsp[3].get(), 1u);   // 4xx
}

TEST_F(HttpTxnTest, ReturnAndRedirectCarryTheirOwnMessages) {
  build([](ProxySettings& p) {
    p.h.request_rules.push_back(rule({"return", "status", "200", "content-type", "text/plain",
                                      "string", "hi", "if", "{", "path", "/r", "}"},
                                     rules::RuleSide::kRequest));
    p.h.request_rules.push_back(
        rule({"redirect", "location", "/new", "code", "301"}, rules::RuleSide::kRequest));
  });
  ASSERT_EQ(request("GET /r HTTP/1.1\r\n\r\n"), HttpTxn::Next::kReply);
  EXPECT_EQ(codecs_.reply.status, 200);
  EXPECT_NE(codecs_.reply.bytes.find("content-type: text/plain\r\n"), std::string::npos);
  EXPECT_EQ(codecs_.reply.bytes.substr(codecs_.reply.bytes.size() - 2), "hi");

  ASSERT_EQ(request("GET /other HTTP/1.1\r\n\r\n"), HttpTxn::Next::kReply);
  const std::string& b = codecs_.reply.bytes;
  EXPECT_EQ(b.rfind("HTTP/1.1 301 ", 0), 0u) << b;
  EXPECT_NE(b.find("location: /new\r\n"), std::string::npos);
  // A permanent redirect stays cacheable.
  EXPECT_EQ(b.find("cache-control"), std::string::npos);
  EXPECT_EQ(h_.fc().intercepted.get(), 2u);
}

TEST_F(HttpTxnTest, ForwardforIsAppendedAfterTheRulesUnlessTheClientIsExcepted) {
  build([](ProxySettings& p) {
    p.h.forwardfor.enabled = true;
    p.h.request_rules.push_back(
        rule({"set-header", "x-forwarded-for", "spoofed"}, rules::RuleSide::kRequest));
  });
  ASSERT_EQ(request("GET / HTTP/1.1\r\n\r\n"), HttpTxn::Next::kForward);
  std::vector<std::string> xff;
  for (const auto& f : edit_.headers)
    if (http::iequals(f.name, "x-forwarded-for")) xff.emplace_back(f.value);
  EXPECT_EQ(xff, (std::vector<std::string>{"spoofed", "10.0.0.1"}));
  txn_->release_backend();

  h_.px().settings.h.forwardfor.has_except = true;
  h_.px().settings.h.forwardfor.except = rules::parse_network("10.0.0.0/8").value();
  ASSERT_EQ(request("GET / HTTP/1.1\r\n\r\n"), HttpTxn::Next::kForward);
  int n = 0;
  for (const auto& f : edit_.headers) n += http::iequals(f.name, "x-forwarded-for");
  EXPECT_EQ(n, 1);   // the rule's only
}

TEST_F(HttpTxnTest, ErrorRepliesPreferTheErrorfileAndCloseAfter400And408) {
  build([](ProxySettings& p) {
    p.h.errorfiles.emplace_back(503, "HTTP/1.1 503 Busy\r\ncontent-length: 0\r\n\r\n");
  });
  LocalReply r = txn_->error_reply(503, {log::Cause::kServerClose, log::FinalState::kConnect},
                                   false);
  EXPECT_EQ(r.bytes, "HTTP/1.1 503 Busy\r\ncontent-length: 0\r\n\r\n");
  EXPECT_FALSE(r.close_after);
  r = txn_->error_reply(400, {log::Cause::kProxy, log::FinalState::kRequest}, false);
  EXPECT_EQ(r.bytes, http::error_page(400));
  EXPECT_TRUE(r.close_after);
  EXPECT_TRUE(txn_->error_reply(408, {}, false).close_after);
  EXPECT_FALSE(txn_->error_reply(502, {}, false).close_after);
}

TEST_F(HttpTxnTest, MonitorUriIsAnsweredBeforeAnyRuleAndNotLogged) {
  build([](ProxySettings& p) {
    p.h.monitor_uri = "/health";
    p.h.request_rules.push_back(rule({"deny"}, rules::RuleSide::kRequest));
  });
  ASSERT_EQ(request("GET /health HTTP/1.1\r\n\r\n"), HttpTxn::Next::kReply);
  EXPECT_EQ(codecs_.reply.status, 200);
  EXPECT_TRUE(txn_->logged);
  EXPECT_EQ(h_.fc().dreq.get(), 0u);
}

TEST_F(HttpTxnTest, ResponseRulesEditTheHeadOrAnswerInstead) {
  build([](ProxySettings& p) {
    p.h.response_rules.push_back(
        rule({"set-header", "x-via", "sluice"}, rules::RuleSide::kResponse));
    p.h.response_rules.push_back(
        rule({"deny", "if", "{", "status", "500", "}"}, rules::RuleSide::kResponse));
  });
  ASSERT_EQ(request("GET / HTTP/1.1\r\n\r\n"), HttpTxn::Next::kForward);
  ASSERT_TRUE(txn_->has_response_rules());
  txn_->keep_request(edit_, codecs_);
  // A response comes from the server the leg picked (its row counts what it sent).
  ASSERT_EQ(txn_->leg().pick(&codecs_.lb_key), BackendLeg::PickResult::kPicked);
  EXPECT_EQ(response("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"), HttpTxn::Next::kForward);
  EXPECT_EQ(field(res_edit_, "x-via"), "sluice");
  EXPECT_GT(txn_->t_response_ms, 0u);

  EXPECT_EQ(response("HTTP/1.1 500 Oops\r\ncontent-length: 0\r\n\r\n"), HttpTxn::Next::kReply);
  EXPECT_EQ(codecs_.reply.status, 502);
  EXPECT_EQ(h_.bc().dresp.get(), 1u);
}

TEST_F(HttpTxnTest, NextRequestForgetsTheRecordOfTheLastOne) {
  build();
  ASSERT_EQ(request("HEAD / HTTP/1.0\r\n\r\n"), HttpTxn::Next::kForward);
  EXPECT_EQ(txn_->method(), http::Method::kHead);
  EXPECT_FALSE(txn_->http11());
  txn_->status = 200;
  txn_->bytes_out = 42;
  txn_->release_backend();
  txn_->next_request(h_.loop().now_ms());
  EXPECT_EQ(txn_->status, -1);
  EXPECT_EQ(txn_->bytes_out, 0u);
  EXPECT_EQ(txn_->t_first_byte_ms, 0u);
  EXPECT_EQ(txn_->method(), http::Method::kGet);
  EXPECT_TRUE(txn_->req_line.empty());
}

}  // namespace
}  // namespace sluice::proxy
