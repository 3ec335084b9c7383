// `show sess` and `shutdown session` on one worker (cli-and-stats.md 5). The CLI thread asks
// every worker in turn (ServerControlImpl::dump_sessions), so each worker reads only its own
// sessions, on its own thread, and nothing on the connection path changes for it.
#include <sys/socket.h>

#include <fmt/format.h>

#include <algorithm>

#include "base/clock.h"
#include "base/strings.h"
#include "lb/server.h"
#include "proxy/worker.h"

namespace sluice::proxy {
namespace {

const char* sess_proto(const net::SocketAddress& a) {
  switch (a.family()) {
    case AF_INET: return "tcpv4";
    case AF_INET6: return "tcpv6";
    default: return "unix_stream";
  }
}

std::string source(const SessionInfo& i, int special_id) {
  if (i.client.family() == AF_INET || i.client.family() == AF_INET6) return i.client.to_string();
  return fmt::format("unix:{}", special_id);
}

std::string expire(const SessionInfo& i, uint64_t now) {
  if (i.expire_ms == 0) return "";
  if (i.expire_ms <= now) return "<PAST>";
  return base::human_duration((i.expire_ms - now) / 1000);
}

void describe_one(const SessionInfo& i, uintptr_t id, int tid, int special_id, uint64_t now,
                  bool detail, std::string* out) {
  const Proxy* fe = i.listener ? i.listener->proxy : nullptr;
  std::string fe_name = fe ? fe->settings.name : "GLOBAL";
  std::string be_name = i.backend ? i.backend->settings.name : "<NONE>";
  std::string srv_name = i.server ? i.server->name() : "<none>";
  uint64_t age = now > i.accept_ms ? now - i.accept_ms : 0;
  if (!detail) {
    *out += fmt::format(
        "0x{:x}: proto={} src={} fe={} be={} srv={} age={} tid={} state={} reqs={} "
        "req_total={} res_total={} fd={},{} exp={}\n",
        id, sess_proto(i.client), source(i, special_id), fe_name, be_name, srv_name,
        base::human_duration(age / 1000), tid, i.state, i.requests, i.bytes_in, i.bytes_out,
        i.client_fd, i.server_fd, expire(i, now));
    return;
  }
  // The accept date, from the wall clock now less the connection's age.
  uint64_t wall = base::wall_us() - age * 1000;
  *out += fmt::format("0x{:x}: [{}] proto={} source={}\n", id, base::log_date(wall),
                      sess_proto(i.client), source(i, special_id));
  if (fe) {
    *out += fmt::format("  frontend={} (id={} mode={}), listener={} (id={}) addr={}\n", fe_name,
                        fe->settings.id, fe->settings.http ? "http" : "tcp",
                        i.listener->line->settings.name.empty() ? "?"
                                                                : i.listener->line->settings.name,
                        i.listener->id, i.listener->addr.addr.to_string());
  } else {
    *out += "  frontend=GLOBAL (id=0 mode=cli)\n";
  }
  if (i.backend) {
    *out += fmt::format("  backend={} (id={} mode={})\n", be_name, i.backend->settings.id,
                        i.backend->settings.http ? "http" : "tcp");
  } else {
    *out += "  backend=<NONE> (id=-1 mode=-)\n";
  }
  if (i.server) {
    *out += fmt::format("  server={} (id={}) addr={}\n", srv_name, i.server->settings().id,
                        i.server->endpoint().addr.to_string());
  } else {
    *out += "  server=<NONE> (id=-1)\n";
  }
  *out += fmt::format("  thread={} state={} age={} exp={} requests={}\n", tid, i.state,
                      base::human_duration(age / 1000), i.expire_ms ? expire(i, now) : "<NEVER>",
                      i.requests);
  if (!fe) {
    *out += fmt::format("  fd={} read={} written={}\n", i.client_fd, i.bytes_in, i.bytes_out);
    return;
  }
  *out += fmt::format("  client fd={} server fd={}\n", i.client_fd, i.server_fd);
  *out += fmt::format("  req total={} (to the server)\n  res total={} (to the client)\n",
                      i.bytes_in, i.bytes_out);
}

}  // namespace

std::size_t Worker::describe_sessions(uintptr_t id, bool detail, std::string* out) const {
  uint64_t now = loop_.now_ms();
  std::size_t n = 0;
  for (const Session* s : sessions_) {
    auto sid = reinterpret_cast<uintptr_t>(s);
    if (id && sid != id) continue;
    SessionInfo info;
    s->describe(&info);
    describe_one(info, sid, tid(), 0, now, detail, out);
    ++n;
  }
  for (const SpecialConn* c : specials_open_) {
    auto sid = reinterpret_cast<uintptr_t>(c);
    if (id && sid != id) continue;
    SessionInfo info;
    c->describe(&info);
    describe_one(info, sid, tid(), c->listener_id, now, detail, out);
    ++n;
  }
  return n;
}

bool Worker::kill_session(uintptr_t id) {
  // Compared as numbers first: an id typed by an operator is only dereferenced once it is
  // known to be one of this worker's live objects.
  for (Session* s : sessions_) {
    if (reinterpret_cast<uintptr_t>(s) == id) {
      s->kill();
      return true;
    }
  }
  for (SpecialConn* c : specials_open_) {
    if (reinterpret_cast<uintptr_t>(c) == id) {
      c->kill();
      return true;
    }
  }
  return false;
}

void Worker::capture_error(stats::ErrorSnapshot snap) {
  std::size_t at = static_cast<std::size_t>(snap.proxy) * 2 + (snap.response ? 1 : 0);
  if (errors_.size() <= at) errors_.resize(process_.proxies().size() * 2);
  snap.event = process_.next_error_event();
  errors_[at] = std::move(snap);
}

std::vector<stats::ErrorSnapshot> Worker::error_snapshots() const {
  std::vector<stats::ErrorSnapshot> out;
  for (const auto& e : errors_)
    if (e.wall_us) out.push_back(e);
  return out;
}

}  // namespace sluice::proxy
