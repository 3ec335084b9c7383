// A TLS connection's handshake, reads and writes (net/tls.h).
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/ssl.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "net/tls.h"

namespace sluice::net::tls {

namespace {

int g_max_record = 0;   // tune.ssl.maxrecord

// The SSL ex_data slot keeping the OpenSSL error code that broke a connection (ssl_fc_err).
int error_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

void keep_error(SSL* s) {
  if (unsigned long code = ERR_peek_error())
    SSL_set_ex_data(s, error_index(), reinterpret_cast<void*>(static_cast<uintptr_t>(code)));
}

// What an OpenSSL call that returned `ret` <= 0 means for the transport.
IoResult failure(SSL* s, int ret) {
  const int e = SSL_get_error(s, ret);
  switch (e) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      return {0, IoStatus::kAgain, 0};
    case SSL_ERROR_ZERO_RETURN:   // close_notify, or a FIN (SSL_OP_IGNORE_UNEXPECTED_EOF)
      return {0, IoStatus::kEof, 0};
    case SSL_ERROR_SYSCALL: {
      const int err = errno;
      ERR_clear_error();
      if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return {0, IoStatus::kAgain, 0};
      SSL_set_quiet_shutdown(s, 1);   // no close_notify after a fatal error
      return {0, IoStatus::kError, err ? err : EPIPE};
    }
    default:
      keep_error(s);
      ERR_clear_error();
      SSL_set_quiet_shutdown(s, 1);
      return {0, IoStatus::kError, EPROTO};
  }
}

}  // namespace

Step handshake(SSL* s) {
  errno = 0;
  const int r = SSL_do_handshake(s);
  if (r == 1) return Step::kDone;
  const int e = SSL_get_error(s, r);
  switch (e) {
    case SSL_ERROR_WANT_READ: return Step::kWantRead;
    case SSL_ERROR_WANT_WRITE: return Step::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      ERR_clear_error();
      return Step::kClosed;
    case SSL_ERROR_SYSCALL: {
      const int err = errno;
      ERR_clear_error();
      if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return Step::kWantRead;
      if (err == 0) return Step::kClosed;   // the peer's FIN in the middle of it
      errno = err;
      return Step::kFailed;
    }
    default:
      keep_error(s);
      ERR_clear_error();
      errno = 0;
      return Step::kFailed;
  }
}

unsigned long last_error(SSL* s) {
  return static_cast<unsigned long>(reinterpret_cast<uintptr_t>(SSL_get_ex_data(s, error_index())));
}

std::string_view error_reason(unsigned long code) {
  const char* r = ERR_reason_error_string(code);
  return r ? std::string_view(r) : std::string_view();
}

IoResult recv(SSL* s, char* dst, std::size_t room) {
  std::size_t got = 0;
  while (got < room) {
    std::size_t n = 0;
    errno = 0;
    const int r = SSL_read_ex(s, dst + got, room - got, &n);
    if (r == 1) {
      got += n;
      continue;
    }
    IoResult f = failure(s, r);
    // Bytes first; the end or the error is reported by the next call, which meets it again.
    if (got > 0) return {got, IoStatus::kOk, 0};
    return f;
  }
  return {got, IoStatus::kOk, 0};
}

void set_max_record(int bytes) { g_max_record = bytes > 0 ? bytes : 0; }

IoResult send(SSL* s, const char* src, std::size_t len) {
  if (len == 0) return {0, IoStatus::kOk, 0};
  std::size_t sent = 0;
  while (sent < len) {
    std::size_t n = 0;
    errno = 0;
    std::size_t chunk = len - sent;
    if (g_max_record > 0 && chunk > static_cast<std::size_t>(g_max_record)) [[unlikely]]
      chunk = static_cast<std::size_t>(g_max_record);
    const int r = SSL_write_ex(s, src + sent, chunk, &n);
    if (r == 1) {
      sent += n;
      continue;
    }
    IoResult f = failure(s, r);
    if (sent > 0 && f.status == IoStatus::kAgain) return {sent, IoStatus::kOk, 0};
    if (f.status == IoStatus::kEof) f = {0, IoStatus::kError, EPIPE};
    if (sent > 0 && f.status == IoStatus::kError) return {sent, IoStatus::kOk, 0};
    return f;
  }
  return {sent, IoStatus::kOk, 0};
}

IoResult sendv(SSL* s, const iovec* parts, int n) {
  std::size_t total = 0;
  for (int i = 0; i < n; ++i) {
    const auto* p = static_cast<const char*>(parts[i].iov_base);
    IoResult r = send(s, p, parts[i].iov_len);
    if (r.status != IoStatus::kOk) {
      if (total > 0) return {total, IoStatus::kOk, 0};
      return r;
    }
    total += r.n;
    if (r.n < parts[i].iov_len) break;   // the socket is full
  }
  return {total, IoStatus::kOk, 0};
}

void shutdown(SSL* s) {
  // One close_notify, without waiting for the peer's: the socket's FIN follows. Not twice,
  // and not after a fatal error (quiet shutdown then only sets the flags).
  if (SSL_get_shutdown(s) & SSL_SENT_SHUTDOWN) return;
  if (SSL_shutdown(s) < 0) ERR_clear_error();
}

namespace {
std::atomic<uint64_t> g_live{0};
std::atomic<uint64_t> g_total{0};
}  // namespace

void count_new_connection() {
  g_live.fetch_add(1, std::memory_order_relaxed);
  g_total.fetch_add(1, std::memory_order_relaxed);
}
uint64_t live_connections() { return g_live.load(std::memory_order_relaxed); }
uint64_t total_connections() { return g_total.load(std::memory_order_relaxed); }

void free(SSL* s) {
  g_live.fetch_sub(1, std::memory_order_relaxed);
  // A connection freed without close_notify (a reset, or the peer's FIN first) would take its
  // session out of the cache and make it unresumable: quietly mark it shut, as HAProxy's quiet
  // shutdown does, so that the session still serves. A fatal alert already removed its own.
  if (SSL_is_init_finished(s) && !(SSL_get_shutdown(s) & SSL_SENT_SHUTDOWN)) {
    SSL_set_quiet_shutdown(s, 1);
    if (SSL_shutdown(s) < 0) ERR_clear_error();
  }
  SSL_free(s);
}

// Decrypted bytes, or record bytes read ahead and not decrypted yet.
bool pending(SSL* s) { return SSL_has_pending(s) == 1; }

std::string_view protocol(SSL* s) { return SSL_get_version(s); }

std::string_view curve(SSL* s) {
  const int nid = SSL_get_negotiated_group(s);
  if (nid <= 0 || (nid & TLSEXT_nid_unknown)) return {};
  const char* name = OBJ_nid2sn(nid);
  return name ? std::string_view(name) : std::string_view();
}

std::string_view cipher(SSL* s) {
  const char* c = SSL_get_cipher_name(s);
  return c ? c : "";
}

std::string_view sni(SSL* s) {
  const char* n = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
  return n ? n : "";
}

std::string_view alpn(SSL* s) {
  const unsigned char* p = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(s, &p, &len);
  return p ? std::string_view(reinterpret_cast<const char*>(p), len) : std::string_view();
}

bool session_reused(SSL* s) { return SSL_session_reused(s) == 1; }

int cipher_bits(SSL* s, int* alg_bits) {
  int alg = 0;
  const int used = SSL_get_cipher_bits(s, &alg);
  if (alg_bits) *alg_bits = alg;
  return used;
}

bool has_peer_cert(SSL* s) {
  X509* x = SSL_get0_peer_certificate(s);
  return x != nullptr;
}

long verify_result(SSL* s) { return SSL_get_verify_result(s); }

}  // namespace sluice::net::tls
