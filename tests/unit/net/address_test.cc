// HAProxy address syntax (configuration spec section 4).
#include "net/address.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace sluice::net {
namespace {

class AddressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // No DNS in unit tests: one fake name.
    set_host_resolver([](const std::string& host, int family, SocketAddress* out) {
      if (host != "backend.test" || family == AF_INET6) return false;
      *out = SocketAddress::ipv4(0x0a000005, 0);
      return true;
    });
  }
  void TearDown() override { set_host_resolver(nullptr); }

  static std::string bind_error(std::string_view t) {
    auto r = parse_bind_address(t);
    return r.ok() ? "ok" : r.error().message;
  }
  static std::string server_error(std::string_view t) {
    auto r = parse_server_address(t);
    return r.ok() ? "ok" : r.error().message;
  }
};

TEST_F(AddressTest, BindForms) {
  auto r = parse_bind_address(":80");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].addr.to_string(), "0.0.0.0:80");
  EXPECT_TRUE((*r)[0].addr.is_any());
  EXPECT_EQ((*r)[0].text, ":80");
  EXPECT_EQ(parse_bind_address("*:81")->at(0).addr.to_string(), "0.0.0.0:81");
  EXPECT_EQ(parse_bind_address(":::80")->at(0).addr.to_string(), "[::]:80");
  EXPECT_EQ(parse_bind_address("[::1]:80")->at(0).addr.to_string(), "[::1]:80");
  EXPECT_EQ(parse_bind_address("ipv6@:80")->at(0).addr.to_string(), "[::]:80");
  EXPECT_EQ(parse_bind_address("ipv4@127.0.0.1:80")->at(0).addr.to_string(), "127.0.0.1:80");
  EXPECT_EQ(parse_bind_address("tcp@127.0.0.1:80")->at(0).addr.to_string(), "127.0.0.1:80");
  EXPECT_EQ(parse_bind_address("backend.test:80")->at(0).addr.to_string(), "10.0.0.5:80");
}

TEST_F(AddressTest, BindRangesAndLists) {
  auto r = parse_bind_address("127.0.0.1:1-2,:3");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].addr.port(), 1);
  EXPECT_EQ((*r)[1].addr.port(), 2);
  EXPECT_EQ((*r)[2].addr.to_string(), "0.0.0.0:3");
  EXPECT_EQ((*r)[0].text, "127.0.0.1:1-2");
  EXPECT_EQ(bind_error("127.0.0.1:18092-18090"), "invalid port range '18092-18090'");
}

TEST_F(AddressTest, BindErrors) {
  EXPECT_EQ(bind_error("127.0.0.1"), "missing port specification in '127.0.0.1'");
  EXPECT_EQ(bind_error("127.0.0.1:"), "missing port specification in '127.0.0.1:'");
  EXPECT_EQ(bind_error("[::1]"), "missing port specification in '[::1]'");
  EXPECT_EQ(bind_error("127.0.0.1:0"), "invalid port '0'");
  EXPECT_EQ(bind_error("127.0.0.1:70000"), "invalid port '70000'");
  EXPECT_EQ(bind_error("127.0.0.1:80x"), "invalid character 'x' in port number '80x' in '127.0.0.1:80x'");
  EXPECT_EQ(bind_error("127.0.0.1:+1"), "port offset not permitted here in '127.0.0.1:+1'");
  EXPECT_EQ(bind_error("::80"), "invalid address: ':' in '::80'");
  EXPECT_EQ(bind_error("nosuchhost.invalid:18090"),
            "invalid address: 'nosuchhost.invalid' in 'nosuchhost.invalid:18090'");
  EXPECT_EQ(bind_error("udp@:80"), "dgram-type address not acceptable in 'udp@:80'");
  EXPECT_EQ(bind_error("ipv4@[::1]:80"), "invalid address: '::1' in 'ipv4@[::1]:80'");
  EXPECT_EQ(bind_error("/" + std::string(100, 'a')),
            "socket path '/" + std::string(100, 'a') + "' too long (max 97)");
}

TEST_F(AddressTest, BindUnix) {
  auto r = parse_bind_address("/tmp/x.sock");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].kind, ListenAddress::Kind::kUnix);
  EXPECT_EQ((*r)[0].addr.to_string(), "unix:/tmp/x.sock");
  EXPECT_EQ((*r)[0].addr.host_string(), "/tmp/x.sock");
  EXPECT_EQ((*r)[0].addr.port(), 0);
  EXPECT_EQ(parse_bind_address("unix@rel.sock")->at(0).addr.host_string(), "rel.sock");
}

TEST_F(AddressTest, BindInheritedFd) {
  EXPECT_EQ(bind_error("fd@99"), "cannot use file descriptor '99' : Bad file descriptor.");
  EXPECT_EQ(bind_error("fd@x"), "cannot use file descriptor 'x' : Bad file descriptor.");
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  EXPECT_EQ(bind_error("fd@" + std::to_string(pipefd[0])),
            "cannot use file descriptor '" + std::to_string(pipefd[0]) + "' : Socket operation on non-socket.");
  close(pipefd[0]);
  close(pipefd[1]);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  EXPECT_NE(bind_error("fd@" + std::to_string(s)), "ok");   // not listening yet
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  ASSERT_EQ(listen(s, 1), 0);
  auto r = parse_bind_address("fd@" + std::to_string(s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].kind, ListenAddress::Kind::kInheritedFd);
  EXPECT_EQ((*r)[0].fd, s);
  close(s);
}

TEST_F(AddressTest, ServerForms) {
  auto r = parse_server_address("127.0.0.1:80");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->addr.to_string(), "127.0.0.1:80");
  EXPECT_FALSE(r->port_mapped);
  r = parse_server_address("127.0.0.1");
  EXPECT_TRUE(r->port_mapped);
  EXPECT_EQ(r->port_offset, 0);
  EXPECT_TRUE(parse_server_address("127.0.0.1:")->port_mapped);
  EXPECT_TRUE(parse_server_address("127.0.0.1:0")->port_mapped);
  r = parse_server_address("127.0.0.1:+1000");
  EXPECT_TRUE(r->port_mapped);
  EXPECT_EQ(r->port_offset, 1000);
  EXPECT_EQ(parse_server_address("127.0.0.1:-5")->port_offset, -5);
  EXPECT_EQ(parse_server_address("[::1]:8080")->addr.to_string(), "[::1]:8080");
  EXPECT_EQ(parse_server_address("[::1]")->addr.host_string(), "::1");
  EXPECT_EQ(parse_server_address("backend.test:81")->addr.to_string(), "10.0.0.5:81");
  EXPECT_EQ(parse_server_address("/var/run/app.sock")->addr.to_string(), "unix:/var/run/app.sock");
}

TEST_F(AddressTest, ServerErrors) {
  EXPECT_EQ(server_error("127.0.0.1:8000-8001"), "port range not permitted here in '127.0.0.1:8000-8001'");
  EXPECT_EQ(server_error("fd@3"), "a file descriptor is not acceptable here in 'fd@3'");
  EXPECT_EQ(server_error("udp@1.2.3.4:5"), "unsupported transport for server address in 'tcp' backend.");
  // Unbracketed ::1 is host ':' port 1, as in HAProxy; sluice resolves it now.
  EXPECT_EQ(server_error("::1"), "could not resolve address ':'.");
  EXPECT_EQ(server_error("ipv6@::1"), "could not resolve address ':'.");
  EXPECT_EQ(server_error("nosuch.test:80"), "could not resolve address 'nosuch.test'.");
  EXPECT_EQ(server_error("1.2.3.4:8o"), "invalid character 'o' in port number '8o' in '1.2.3.4:8o'");
}

TEST_F(AddressTest, LogAddresses) {
  EXPECT_EQ(parse_log_address("127.0.0.1")->to_string(), "127.0.0.1:514");
  EXPECT_EQ(parse_log_address("127.0.0.1:0")->to_string(), "127.0.0.1:514");
  EXPECT_EQ(parse_log_address("127.0.0.1:1514")->to_string(), "127.0.0.1:1514");
  EXPECT_EQ(parse_log_address(":514")->to_string(), "0.0.0.0:514");
  EXPECT_EQ(parse_log_address("udp@[::1]:600")->to_string(), "[::1]:600");
  EXPECT_EQ(parse_log_address("/dev/log")->family(), AF_UNIX);
  EXPECT_EQ(parse_log_address("unix@/dev/log")->host_string(), "/dev/log");
  EXPECT_FALSE(parse_log_address("tcp@1.2.3.4:514").ok());
  EXPECT_FALSE(parse_log_address("nosuch.test").ok());
}

TEST_F(AddressTest, SocketAddressHelpers) {
  auto a = SocketAddress::ipv4(0x7f000001, 80);
  EXPECT_EQ(a.to_string(), "127.0.0.1:80");
  EXPECT_EQ(a.host_string(), "127.0.0.1");
  EXPECT_EQ(a.port(), 80);
  EXPECT_FALSE(a.is_any());
  auto b = a;
  EXPECT_TRUE(a == b);
  b.set_port(81);
  EXPECT_FALSE(a == b);
  EXPECT_EQ(b.port(), 81);
  auto u = SocketAddress::unix_path("/x");
  ASSERT_TRUE(u.ok());
  u->set_port(5);
  EXPECT_EQ(u->port(), 0);
  EXPECT_TRUE(*u == *SocketAddress::unix_path("/x"));
  EXPECT_FALSE(*u == a);
  EXPECT_FALSE(SocketAddress::unix_path(std::string(200, 'a')).ok());
  auto c = SocketAddress::from_sockaddr(a.sa(), a.len);
  EXPECT_TRUE(c == a);
}

}  // namespace
}  // namespace sluice::net
