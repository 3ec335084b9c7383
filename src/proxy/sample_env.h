#pragma once
// What the sample language asks the proxy about (sample::Env): the names and ids of the
// frontend, backend, server and listener of an evaluation, server counts and connections,
// whether the process stops, the worker's thread. Built on the stack where rules run (the
// transaction fills in the backend and server as it picks them); worker-local.
#include <string_view>

#include "proxy/process.h"
#include "proxy/stream_times.h"
#include "sample/context.h"

namespace lb {}

namespace sluice::log {
struct Record;
}

namespace sluice::proxy {

class BackendLeg;


class ProxyEnv final : public sample::Env {
 public:
  ProxyEnv(const Process& p, int thread, const Listener* l, const Proxy& fe)
      : p_(p), thread_(thread), l_(l), fe_(fe) {}
  // The backend and the server, as the transaction learns them.
  const Proxy* be = nullptr;
  const lb::Server* srv = nullptr;
  // The stream whose rules run (its timers and byte counts), null for none; `response_side`:
  // response rules.
  const StreamTimes* stream = nullptr;
  bool response_side = false;
  // A log line's record: its timers and byte counts are the stream's final ones.
  const log::Record* rec = nullptr;

  std::string_view frontend_name() const override { return fe_.settings.name; }
  int frontend_id() const override { return fe_.settings.id; }
  std::string_view backend_name() const override;
  int backend_id() const override { return be ? be->settings.id : 0; }
  std::string_view server_name() const override;
  int server_id() const override;
  std::string_view listener_name() const override;
  int listener_id() const override { return l_ ? l_->id : 0; }
  int nbsrv(std::string_view backend) const override;
  int be_conn(std::string_view backend) const override;
  int fe_conn(std::string_view frontend) const override;
  int srv_conn(std::string_view backend, std::string_view server) const override;
  bool stopping() const override;
  int thread_id() const override;
  ssl_st* client_tls() const override { return stream ? stream->client_tls() : nullptr; }
  ssl_st* server_tls() const override { return stream ? stream->server_tls() : nullptr; }
  bool proxy_stat(ProxyStat s, std::string_view proxy, std::string_view server,
                  int64_t* out) const override;
  bool text(TextQuery q, std::string_view* out) const override;
  const net::pp::Header* proxy_header() const override {
    return stream ? stream->proxy_header() : nullptr;
  }
  bool query(Query q, int64_t* out) const override;

 private:
  // A proxy by name (empty: the current backend, or frontend when `frontend`); null if none.
  const Proxy* proxy_named(std::string_view name, bool frontend) const;
  const lb::Server* server_named(const Proxy* be, std::string_view name) const;

  const Process& p_;
  int thread_;   // 0-based
  const Listener* l_;
  const Proxy& fe_;
  mutable char term_[2] = {'-', '-'};   // txn.sess_term_state's text of a log line
};

// What a stream's backend leg answers: txn.conn_retries and txn.redispatched, and once its
// server connection is up bc.timer.connect and the bc_* state of that connection (`http`: an
// HTTP/1 connection; `reused`: taken from the idle pool). False for other questions.
bool leg_query(const BackendLeg& leg, bool http, bool reused, sample::Env::Query q, int64_t* out);

}  // namespace sluice::proxy
