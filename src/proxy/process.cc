#include "proxy/process.h"

#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "base/clock.h"
#include "net/reuseport_migration.h"
#include "net/reuseport_steering.h"
#include "net/socket.h"
#include "net/tls.h"
#include "proxy/worker.h"

namespace sluice::proxy {

namespace {
std::mutex g_exit_mu;
std::condition_variable g_exit_cv;
}  // namespace

bool Process::ssl_conn_room() const {
  return settings_.max_ssl_conn <= 0 ||
         net::tls::live_connections() < static_cast<uint64_t>(settings_.max_ssl_conn);
}

Process::Process(ProcessSettings settings)
    : settings_(std::move(settings)),
      actconn_(settings_.maxconn),
      accept_rate_(settings_.max_conn_rate),
      ssl_rate_(settings_.max_ssl_rate) {
  start_wall_s_ = base::wall_us() / 1000000;
  start_mono_ms_ = base::monotonic_ms();
}

Process::~Process() {
  stop_now();
  join();
  for (auto& l : listeners_) net::close_socket(l->fd);
  for (auto& s : specials_) net::close_socket(s->fd);
}

Proxy& Process::add_proxy(ProxySettings settings) {
  auto p = std::make_unique<Proxy>();
  p->index = static_cast<int>(proxies_.size());
  p->settings = std::move(settings);
  p->feconn.set_limit(p->settings.maxconn);
  for (const auto& r : p->settings.h.response_rules)
    if (r.action == rules::HttpRule::Action::kWaitForBody) p->response_waits = true;
  if (p->settings.backend) {
    p->server_base = total_servers_;
    p->backend = std::make_unique<lb::Backend>(p->settings.name, p->settings.servers, p->settings.balance);
    // A server that comes up or gets more weight can take sessions waiting in the queue.
    p->backend->set_on_change([this, px = p.get()] { server_slot_freed(*px); });
    for (auto& s : p->backend->servers()) {
      servers_.push_back(s.get());
      idle_pooled_.emplace_back(0);
    }
    total_servers_ += static_cast<int>(p->backend->servers().size());
  }
  for (auto& b : p->settings.binds) p->bind_lines.push_back(std::make_unique<BindLine>(b));
  if (p->settings.h.stats.enabled && !p->settings.h.stats_admin.empty())
    stats_admin_.push_back(p.get());
  for (int side = 0; side < 2; ++side) {
    if (!(side ? p->settings.frontend : p->settings.backend)) continue;
    auto& v = by_name_[side];
    auto at = std::upper_bound(v.begin(), v.end(), std::string_view(p->settings.name),
                               [](std::string_view n, const Proxy* q) { return n < q->settings.name; });
    v.insert(at, p.get());
  }
  proxies_.push_back(std::move(p));
  return *proxies_.back();
}

Proxy* Process::proxy_named(std::string_view name, bool frontend) const {
  const auto& v = by_name_[frontend ? 1 : 0];
  auto at = std::lower_bound(v.begin(), v.end(), name,
                             [](const Proxy* q, std::string_view n) { return q->settings.name < n; });
  return at != v.end() && (*at)->settings.name == name ? *at : nullptr;
}

base::Result<void> Process::bind_all() {
  bool any_buffers = false;
  // The first wait-for-body rule of a proxy's http-request rules, or null.
  auto wait_rule = [](const Proxy& px) -> const rules::HttpRule* {
    for (const auto& r : px.settings.h.request_rules)
      if (r.action == rules::HttpRule::Action::kWaitForBody) return &r;
    return nullptr;
  };
  const rules::HttpRule* any_wait = nullptr;
  for (const auto& p : proxies_) {
    any_buffers = any_buffers || p->settings.h.buffer_request;
    if (!any_wait) any_wait = wait_rule(*p);
  }
  for (auto& p : proxies_) {
    int t = p->settings.default_backend;
    if (t >= 0) {
      p->target = proxies_[static_cast<std::size_t>(t)].get();
    } else if (p->settings.frontend && p->settings.backend) {
      p->target = p.get();   // a listen section serves itself
    }
    if (p->settings.frontend && any_buffers) {
      bool buffers = p->settings.h.buffer_request || (p->target && p->target->settings.h.buffer_request);
      for (const auto& u : p->settings.use_backends)
        buffers = buffers || u.dynamic ||
                  proxies_[static_cast<std::size_t>(u.backend)]->settings.h.buffer_request;
      p->buffer_bodies = buffers;
    }
    if (p->settings.frontend && any_wait) {
      const rules::HttpRule* w = wait_rule(*p);
      if (!w && p->target) w = wait_rule(*p->target);
      for (const auto& u : p->settings.use_backends)
        if (!w) w = u.dynamic ? any_wait : wait_rule(*proxies_[static_cast<std::size_t>(u.backend)]);
      if (w) {
        p->body_wait_ms = std::max<uint32_t>(w->wait_ms, 1);
        p->body_wait_at_least = w->wait_at_least;
      }
    }
    if (!p->settings.frontend) continue;
    // Listener ids are deterministic: a bind line's `id` goes to its first socket
    // and the next ids to its further sockets, in (address, shard) order; two lines whose
    // blocks overlap are an error. Lines without an `id` take the lowest ids no line claimed.
    auto sockets_of = [&](const BindSettings& bs) {
      int n = 0;
      for (std::size_t ai = 0; ai < bs.addrs.size(); ++ai)
        n += ai < bs.shards.size() && !bs.shards[ai].empty() ? static_cast<int>(bs.shards[ai].size()) : 1;
      return n;
    };
    std::map<int, const BindSettings*> claimed;
    for (auto& line : p->bind_lines) {
      const BindSettings& bs = line->settings;
      if (bs.id <= 0) continue;
      int n = sockets_of(bs);
      for (int id = bs.id; id < bs.id + n; ++id) {
        auto [it, fresh] = claimed.emplace(id, &bs);
        if (!fresh) {
          const BindSettings& other = *it->second;
          return base::Error::text(fmt::format(
              "Binding [{}:{}] for {} {}: listener id {} is also given to a socket of the bind "
              "line at [{}:{}], whose `id {}` numbers its sockets {}..{} (a line's id goes to "
              "its first socket, the next ids to its other shards).",
              bs.file, bs.line, p->settings.type, p->settings.name, id, other.file, other.line,
              other.id, other.id, other.id + sockets_of(other) - 1));
        }
      }
    }
    int auto_id = 1;
    for (auto& line : p->bind_lines) {
      const BindSettings& bs = line->settings;
      int next_id = bs.id;
      for (std::size_t ai = 0; ai < bs.addrs.size(); ++ai) {
        const auto& a = bs.addrs[ai];
        std::vector<std::vector<int>> shards;
        if (ai < bs.shards.size() && !bs.shards[ai].empty()) shards = bs.shards[ai];
        if (shards.empty()) {
          shards.emplace_back();
          for (int tid = 1; tid <= nbthread(); ++tid) shards.back().push_back(tid);
        }
        bool fell_back = ai < bs.fell_back.size() && bs.fell_back[ai];
        std::vector<Listener*> siblings;
        for (std::size_t si = 0; si < shards.size(); ++si) {
          net::ListenOptions opts;
          opts.backlog = bs.backlog;
          opts.unix_mode = bs.unix_mode;
          opts.reuseport = settings_.reuseport;
          const int taken = take_inherited(a, bs.backlog);
          base::Result<int> fd = taken >= 0 ? base::Result<int>(taken) : net::open_listener(a, opts);
          if (!fd.ok()) {
            base::Error e = fd.error();
            e.message = fmt::format("Binding [{}:{}] for {} {}: {} [{}]", bs.file, bs.line,
                                    p->settings.type, p->settings.name, e.message, a.text);
            return e;
          }
          auto l = std::make_unique<Listener>();
          l->fd = *fd;
          l->taken_over = taken >= 0;
          l->proxy = p.get();
          l->line = line.get();
          l->addr = a;
          if (bs.id > 0) {
            l->id = next_id++;
          } else {
            while (claimed.count(auto_id)) ++auto_id;
            l->id = auto_id++;
          }
          l->shard = static_cast<int>(si);
          l->shard_count = static_cast<int>(shards.size());
          l->fell_back = fell_back;
          set_threads(*l, shards[si]);
          struct stat st{};
          if (fstat(l->fd, &st) == 0) l->inode = st.st_ino;
          if (p->settings.http && a.kind != net::ListenAddress::Kind::kUnix) {
            // HTTP answers are often written in two parts (a head, then a body that arrives
            // later); Nagle would hold the second behind the client's delayed ACK. Accepted
            // sockets inherit the option from the listener: no system call per connection.
            net::set_nodelay(l->fd);
          }
          // option tcp-smart-accept (HTTP mode's default): TCP_QUICKACK off on the listener, as
          // HAProxy sets it.
          if (p->settings.smart_accept && a.kind != net::ListenAddress::Kind::kUnix)
            net::set_quickack_off(l->fd);
          // bind ... tfo: TCP Fast Open, a queue of pending TFO requests as long as the backlog.
          if (bs.tfo && a.kind != net::ListenAddress::Kind::kUnix)
            net::set_fastopen(l->fd, bs.backlog);
          // tune.rcvbuf.client / tune.sndbuf.client: accepted sockets inherit the listener's.
          net::set_socket_buffers(l->fd, settings_.cli_rcvbuf, settings_.cli_sndbuf);
          if (a.kind == net::ListenAddress::Kind::kInet) {
            l->port = a.addr.port();
          } else if (a.kind == net::ListenAddress::Kind::kInheritedFd) {
            net::SocketAddress local;
            if (net::local_address(l->fd, &local)) {
              l->port = local.port();
              if (local.family() != AF_UNIX) l->addr.addr = local;
            }
          }
          siblings.push_back(l.get());
          listeners_.push_back(std::move(l));
        }
        if (ai < bs.steering.size() && !bs.steering[ai].empty() && siblings.size() > 1) {
          // After every shard's listen(): the program's answer indexes the reuseport group's
          // sockets in the order they joined it.
          auto r = net::attach_cpu_steering(siblings[0]->fd,
                                            net::build_cpu_steering_program(bs.steering[ai]));
          if (!r.ok()) {
            steering_warnings_.push_back(fmt::format(
                "{} '{}': cannot attach the CPU steering program to {} ({}); the kernel's hash "
                "distributes connections over its {} sockets instead.",
                p->settings.type, p->settings.name, a.text, r.error().message, siblings.size()));
          } else {
            for (Listener* l : siblings) l->steered = true;
          }
        }
        if (a.kind == net::ListenAddress::Kind::kInet && settings_.reuseport && !siblings.empty() &&
            !siblings[0]->steered) {
          // A reload's old process closes its sockets after this one bound: with the program
          // its queued connections move here instead of being reset (net/reuseport_migration.h).
          // Without CAP_BPF the kernel resets them as it always did; nothing else changes.
          (void)net::attach_reuseport_migration(siblings[0]->fd);
        }
      }
    }
  }
  net::release_reuseport_migration();
  // -x: what the old process listened on and this configuration does not is left to it.
  if (!keep_unused_inherited_) close_inherited();
  return {};
}

void Process::close_inherited() {
  for (int fd : inherited_) net::close_socket(fd);
  inherited_.clear();
}

int Process::take_inherited(const net::ListenAddress& a, int backlog) {
  if (inherited_.empty() || a.kind == net::ListenAddress::Kind::kInheritedFd) return -1;
  for (std::size_t i = 0; i < inherited_.size(); ++i) {
    const int fd = inherited_[i];
    net::SocketAddress local;
    if (!net::local_address(fd, &local)) continue;
    bool same = false;
    if (a.kind == net::ListenAddress::Kind::kUnix) {
      // open_listener() binds a UNIX path as "<path>.<pid>.tmp" and renames it into place: the
      // kernel still names the socket by the temporary path.
      std::string path = local.family() == AF_UNIX ? local.host_string() : std::string();
      const std::string want = a.addr.host_string();
      same = path.size() > want.size() && path.starts_with(want) && path.ends_with(".tmp") &&
             path[want.size()] == '.';
      same = same || path == want;
    } else {
      same = local == a.addr;
    }
    if (!same) continue;
    inherited_.erase(inherited_.begin() + static_cast<std::ptrdiff_t>(i));
    // Listening already; this configuration's backlog applies from now on.
    net::resume_listening(fd, backlog > 0 ? backlog : SOMAXCONN);
    return fd;
  }
  return -1;
}

void Process::unbind_all() {
  for (auto& l : listeners_) {
    if (l->taken_over) inherited_.push_back(l->fd);   // -x: kept for the next bind_all()
    else if (l->addr.kind != net::ListenAddress::Kind::kInheritedFd) net::close_socket(l->fd);
  }
  listeners_.clear();
  steering_warnings_.clear();
}

void Process::set_threads(Listener& l, const std::vector<int>& threads) {
  l.threads = threads;
  l.position.assign(static_cast<std::size_t>(nbthread()), -1);
  for (std::size_t i = 0; i < threads.size(); ++i) {
    int t = threads[i];
    l.position[static_cast<std::size_t>(t - 1)] = static_cast<int>(i);
    int g = group_of(t);
    if (std::find(l.groups.begin(), l.groups.end(), g) == l.groups.end()) l.groups.push_back(g);
  }
  std::sort(l.groups.begin(), l.groups.end());
  l.given = std::make_unique<std::atomic<int>[]>(threads.size());
}

int Process::group_of(int thread) const {
  const auto& tg = settings_.thread_group;
  if (thread >= 1 && static_cast<std::size_t>(thread) <= tg.size())
    return tg[static_cast<std::size_t>(thread - 1)];
  return 1;
}

void Process::add_special_listener(int fd, int maxconn, SpecialAccept on_accept, bool channel) {
  auto s = std::make_unique<SpecialListener>();
  s->fd = fd;
  s->channel = channel;
  s->maxconn = maxconn > 0 ? maxconn : 10;
  s->on_accept = std::move(on_accept);
  specials_.push_back(std::move(s));
}

void Process::start() {
  int n = nbthread();
  for (int i = 0; i < n; ++i) workers_.push_back(std::make_unique<Worker>(*this, i));
  running_workers_.store(n);
  for (auto& w : workers_) w->start();
}

void Process::stop_now() {
  stopping_.store(true, std::memory_order_release);
  for (auto& w : workers_) w->request_stop();
}

void Process::soft_stop() {
  // The listeners are shut down by the workers (Worker::request_soft_stop()): shutdown()
  // resets every connection still in a socket's backlog, so the last thread of each shard
  // takes what waits there first. The descriptors stay valid (they are closed when the
  // process object goes away), so no thread can accept on a reused descriptor number.
  for (auto& l : listeners_)
    l->soft_stop_left.store(static_cast<int>(l->threads.size()), std::memory_order_relaxed);
  // After the counts: a worker that sees `stopping` (through its posted task) sees them.
  stopping_.store(true, std::memory_order_release);
  for (auto& w : workers_) w->request_soft_stop();
}

void Process::pause_listeners() {
  if (stopping() || listeners_paused_) return;
  listeners_paused_ = true;
  for (auto& w : workers_) w->request_listeners_paused(true);
  for (auto& l : listeners_)
    net::pause_listening(l->fd);
}

void Process::resume_listeners() {
  if (stopping() || !listeners_paused_) return;
  listeners_paused_ = false;
  // A shut-down TCP listener is still bound: listen() again puts it back (in its reuseport
  // group too). Before the workers watch it again, so that they never see it closed.
  for (auto& l : listeners_) {
    // A frontend disabled or shut down from the CLI stays so.
    if (l->proxy->fe_open()) relisten(*l);
  }
  for (auto& w : workers_) w->request_listeners_paused(false);
}

void Process::relisten(Listener& l) {
  // A shut-down TCP listener is still bound: listen() again puts it back (in its reuseport
  // group too). A unix one was never shut down (that cannot be undone): only unwatched.
  net::resume_listening(l.fd, l.line->settings.backlog);
}

Process::FrontendChange Process::pause_frontend(Proxy& px) {
  int was = Proxy::kFeOpen;
  if (!px.fe_state.compare_exchange_strong(was, Proxy::kFePaused, std::memory_order_acq_rel))
    return was == Proxy::kFePaused ? FrontendChange::kAlready : FrontendChange::kWasStopped;
  // The kernel refuses new connections at once (HAProxy pauses its listeners the same way);
  // the workers then stop watching them.
  for (auto& l : listeners_)
    if (l->proxy == &px) net::pause_listening(l->fd);
  for (auto& w : workers_) w->request_refresh_watches();
  return FrontendChange::kOk;
}

Process::FrontendChange Process::resume_frontend(Proxy& px) {
  int was = Proxy::kFePaused;
  if (!px.fe_state.compare_exchange_strong(was, Proxy::kFeOpen, std::memory_order_acq_rel))
    return was == Proxy::kFeOpen ? FrontendChange::kAlready : FrontendChange::kWasStopped;
  if (!listeners_paused_ && !stopping())
    for (auto& l : listeners_)
      if (l->proxy == &px) relisten(*l);
  for (auto& w : workers_) w->request_refresh_watches();
  return FrontendChange::kOk;
}

Process::FrontendChange Process::stop_frontend(Proxy& px) {
  if (px.fe_state.exchange(Proxy::kFeStopped, std::memory_order_acq_rel) == Proxy::kFeStopped)
    return FrontendChange::kAlready;
  // As soft_stop() does for every listener: refused from now on, descriptors closed at exit.
  for (auto& l : listeners_)
    if (l->proxy == &px) net::stop_listening(l->fd);
  for (auto& w : workers_) w->request_refresh_watches();
  return FrontendChange::kOk;
}

void Process::worker_exited() {
  int left;
  {
    std::lock_guard lock(g_exit_mu);
    left = running_workers_.fetch_sub(1) - 1;
  }
  g_exit_cv.notify_all();
  // The worker serving the stats sockets waits for the others to drain (see
  // Worker::maybe_finish_soft_stop()): when it is the last one, it may go too.
  if (left == 1 && !workers_.empty()) workers_.front()->request_finish_check();
}

bool Process::wait_workers(uint64_t timeout_ms) {
  std::unique_lock lock(g_exit_mu);
  auto done = [this] { return running_workers_.load() == 0; };
  if (timeout_ms == 0) {
    g_exit_cv.wait(lock, done);
    return true;
  }
  return g_exit_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), done);
}

void Process::join() {
  for (auto& w : workers_) w->join();
}

void Process::server_slot_freed(Proxy& be) {
  if (be.queued.load(std::memory_order_seq_cst) == 0) return;
  for (auto& w : workers_) w->request_dequeue();
}

void Process::slot_freed() {
  if (paused_listeners_.load(std::memory_order_seq_cst) == 0) return;
  for (auto& w : workers_) w->request_resume();
}

}  // namespace sluice::proxy

