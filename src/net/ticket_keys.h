#pragma once
// TLS session ticket keys from a file (`bind ... tls-ticket-keys <file>`), as HAProxy keeps
// them: a file of base64 keys (48 bytes: AES-128, or 80 bytes: AES-256; a 16-byte name, the
// AES key, then the HMAC-SHA256 key), at least three, the last three kept in a ring. The
// next-to-last seals new tickets; all three open them, and a ticket opened with another key
// than the sealing one is renewed. `set ssl tls-key` adds a key: it becomes the last, and the
// one before it seals. Every bind line that names the file shares its ring, so that sessions
// resume across lines and across processes (reloads, other instances) given the same file.
//
// Thread rule: the ring is read by the ticket callback on any worker and written by the CLI,
// under its mutex (a few dozen bytes copied per ticket).
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

struct ssl_ctx_st;
struct ssl_st;
struct evp_cipher_ctx_st;
struct evp_mac_ctx_st;

namespace sluice::net::tls {

class TicketKeys {
 public:
  static constexpr int kRing = 3;
  // The file's keys, loaded once per file name (the same object for every line that names
  // it); errors are HAProxy's ("please supply at least 3 keys in the tls-tickets-file").
  static base::Result<std::shared_ptr<TicketKeys>> load(const std::string& path);
  // The files loaded, in the order of their ids (`show tls-keys`); an expired entry is null.
  static std::vector<std::shared_ptr<TicketKeys>> all();

  const std::string& path() const { return path_; }
  // Makes `ctx` seal and open its tickets with this ring.
  void install(ssl_ctx_st* ctx) const;
  // `set ssl tls-key`: a base64 key of the ring's size; false (with HAProxy's reason).
  bool add(std::string_view base64, std::string* why);
  // The keys in base64, from the oldest (open only) through the sealing one to the newest.
  std::vector<std::string> shown() const;

 private:
  struct Key {
    std::array<unsigned char, 80> raw{};   // name, AES key, HMAC key
    std::string base64;
  };
  static int on_ticket(ssl_st* s, unsigned char* name, unsigned char* iv,
                       evp_cipher_ctx_st* cipher, evp_mac_ctx_st* mac, int enc);
  std::string path_;
  std::size_t size_ = 80;   // 48 or 80
  mutable std::mutex mu_;
  Key ring_[kRing];
  int seal_ = 0;            // the ring's sealing key
};

}  // namespace sluice::net::tls
