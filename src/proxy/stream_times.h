#pragma once
#include <cstdint>
#include <string_view>

#include "sample/context.h"

struct ssl_st;

namespace sluice::proxy {

// The stream whose rules run (an HTTP transaction, a TCP session), for the timer and
// byte-count fetches: sample::Env::Query's kTxnTotalMs to kResBytesOut, answered on demand as
// HAProxy answers them before the end (log::stream_query). `response_side`: response rules.
class StreamTimes {
 public:
  virtual bool stream_query(sample::Env::Query q, bool response_side, int64_t* out) const = 0;
  // Its texts: txn.sess_term_state ("--" until it ends), last_rule_file and last_entity.
  virtual bool stream_text(sample::Env::TextQuery q, std::string_view* out) const = 0;
  // The PROXY protocol header the connection began with, null for none.
  virtual const net::pp::Header* proxy_header() const = 0;
  // The process-wide stream number (%rt, txn.id32), taken on first use.
  virtual uint64_t stream_number() const = 0;
  // When the client connection was accepted (monotonic ms): fc.timer.total counts from it.
  virtual uint64_t accept_ms() const = 0;
  // The client connection's TLS connection (bind ... ssl), null for a plain one.
  virtual ssl_st* client_tls() const { return nullptr; }
  // The server connection's (server ... ssl), null for a plain one or none.
  virtual ssl_st* server_tls() const { return nullptr; }

 protected:
  ~StreamTimes() = default;
};

}  // namespace sluice::proxy
