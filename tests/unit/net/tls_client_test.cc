// ClientContext (net/tls.h): handshakes with a ServerContext over a socket pair, the name
// check, and the session a SessionSlot keeps (resumed towards the same name only).
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "net/tls.h"

namespace sluice::net::tls {
namespace {

// A self-signed ECDSA certificate for `names` (its own CA), written with its key to `path`.
void write_cert(const std::string& path, const std::string& names) {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  ASSERT_NE(key, nullptr);
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, key);
  X509_NAME* n = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("srv.test"), -1, -1, 0);
  X509_set_issuer_name(x, n);
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, x, x, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, names},
                            std::pair{NID_basic_constraints, std::string("critical,CA:TRUE")}}) {
    X509_EXTENSION* e = X509V3_EXT_conf_nid(nullptr, &v3, nid, value.c_str());
    ASSERT_NE(e, nullptr);
    X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
  }
  ASSERT_GT(X509_sign(x, key, EVP_sha256()), 0);
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  PEM_write_X509(f, x);
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  X509_free(x);
  EVP_PKEY_free(key);
}

class TlsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice-tls-client-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    pem_ = (dir_ / "srv.pem").string();
    write_cert(pem_, "DNS:srv.test,DNS:alt.test");
    BindOptions b;
    b.crts.push_back({pem_, nullptr, {}, {}, 0});
    auto sc = ServerContext::make(b);
    ASSERT_TRUE(sc.ok()) << sc.error().message;
    server_ = sc.value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<ClientContext> client(ClientOptions o) {
    o.ca_file = pem_;
    auto cc = ClientContext::make(o);
    EXPECT_TRUE(cc.ok()) << cc.error().message;
    return cc.ok() ? cc.value() : nullptr;
  }

  // One connection: the handshake on both ends, then a few bytes from the server that the
  // client reads (TLS 1.3 session tickets come with them). Whether it was resumed; false
  // with *failed set when the handshake failed.
  bool connect(const ClientContext& cc, std::string_view sni, SessionSlot* slot, bool* failed) {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    ssl_st* c = cc.new_conn(sv[0], sni, slot);
    ssl_st* s = server_->new_conn(sv[1]);
    bool c_done = false, s_done = false;
    *failed = false;
    for (int i = 0; i < 100 && !(c_done && s_done) && !*failed; ++i) {
      if (!c_done) {
        Step st = handshake(c);
        c_done = st == Step::kDone;
        *failed = st == Step::kFailed || st == Step::kClosed;
      }
      if (!s_done && !*failed) {
        Step st = handshake(s);
        s_done = st == Step::kDone;
        if (st == Step::kFailed || st == Step::kClosed) *failed = true;
      }
    }
    bool resumed = false;
    if (!*failed) {
      EXPECT_TRUE(c_done && s_done);
      EXPECT_EQ(send(s, "hello", 5).n, 5u);
      char buf[16];
      IoResult r{};
      for (int i = 0; i < 10 && r.n == 0; ++i) r = recv(c, buf, sizeof buf);
      EXPECT_EQ(std::string(buf, r.n), "hello");
      resumed = session_reused(c);
      EXPECT_EQ(resumed, session_reused(s));
    } else if (!c_done) {
      // Let the client see the server's alert (or the server the client's).
      handshake(s);
    }
    free(c);
    free(s);
    close(sv[0]);
    close(sv[1]);
    return resumed;
  }

  std::filesystem::path dir_;
  std::string pem_;
  std::shared_ptr<ServerContext> server_;
};

TEST_F(TlsClientTest, VerifiesTheNameAndResumesTowardsTheSameNameOnly) {
  auto cc = client({});
  ASSERT_TRUE(cc);
  SessionSlot slot;
  bool failed = false;
  EXPECT_FALSE(connect(*cc, "srv.test", &slot, &failed));
  ASSERT_FALSE(failed);
  ASSERT_NE(slot.session, nullptr);
  EXPECT_EQ(slot.sni, "srv.test");
  EXPECT_TRUE(connect(*cc, "srv.test", &slot, &failed));
  // Another name the certificate carries: verified, but not resumed.
  EXPECT_FALSE(connect(*cc, "alt.test", &slot, &failed));
  EXPECT_FALSE(failed);
  EXPECT_EQ(slot.sni, "alt.test");
  // A name it does not carry: the handshake fails.
  connect(*cc, "other.test", &slot, &failed);
  EXPECT_TRUE(failed);
}

TEST_F(TlsClientTest, TheSniWinsOverVerifyhostAndVerifyNoneChecksNothing) {
  ClientOptions o;
  o.verifyhost = "nothere.test";
  auto strict = client(o);
  ASSERT_TRUE(strict);
  bool failed = false;
  connect(*strict, "srv.test", nullptr, &failed);
  EXPECT_FALSE(failed);
  connect(*strict, "", nullptr, &failed);
  EXPECT_TRUE(failed);
  o.verify = false;
  auto lax = client(o);
  ASSERT_TRUE(lax);
  connect(*lax, "", nullptr, &failed);
  EXPECT_FALSE(failed);
}

TEST_F(TlsClientTest, NoReuseKeepsNoSession) {
  ClientOptions o;
  o.reuse = false;
  auto cc = client(o);
  ASSERT_TRUE(cc);
  SessionSlot slot;
  bool failed = false;
  EXPECT_FALSE(connect(*cc, "srv.test", &slot, &failed));
  EXPECT_FALSE(failed);
  EXPECT_EQ(slot.session, nullptr);
  EXPECT_FALSE(connect(*cc, "srv.test", &slot, &failed));
}

TEST_F(TlsClientTest, BadOptionsAreErrorsWithHaproxysWords) {
  ClientOptions o;
  o.ca_file = pem_;
  o.ciphers = "NOPE";
  auto cc = ClientContext::make(o);
  ASSERT_FALSE(cc.ok());
  EXPECT_EQ(cc.error().message, "unable to set SSL cipher list to 'NOPE'.");
  o.ciphers.clear();
  o.crt = (dir_ / "missing.pem").string();
  cc = ClientContext::make(o);
  ASSERT_FALSE(cc.ok());
  EXPECT_NE(cc.error().message.find("unable to stat SSL certificate from file"), std::string::npos);
}

}  // namespace
}  // namespace sluice::net::tls
