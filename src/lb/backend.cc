#include "lb/backend.h"

#include "lb/roundrobin.h"

namespace sluice::lb {

Backend::Backend(std::string name, std::vector<ServerSettings> servers) : name_(std::move(name)) {
  std::vector<Server*> active, backup;
  for (auto& s : servers) {
    servers_.push_back(std::make_unique<Server>(std::move(s), static_cast<int>(servers_.size())));
    Server* p = servers_.back().get();
    (p->settings().backup ? backup : active).push_back(p);
  }
  active_ = std::make_unique<RoundRobin>(std::move(active));
  backup_ = std::make_unique<RoundRobin>(std::move(backup));
}

void Backend::candidates(std::vector<Server*>& out, std::size_t max) {
  active_->pick(out, max);
  if (!out.empty()) return;
  for (auto& s : servers_) {
    if (s->settings().backup && s->usable()) {
      out.push_back(s.get());
      return;
    }
  }
}

int Backend::usable_active() const {
  int n = 0;
  for (auto& s : servers_) n += (!s->settings().backup && s->usable());
  return n;
}

int Backend::usable_backup() const {
  int n = 0;
  for (auto& s : servers_) n += (s->settings().backup && s->usable());
  return n;
}

}  // namespace sluice::lb
