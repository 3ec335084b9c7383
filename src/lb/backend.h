#pragma once
// A backend: its servers and how to choose among them. Built once at start-up; read by every
// worker without locks.
#include <memory>
#include <string>
#include <vector>

#include "lb/algorithm.h"
#include "lb/server.h"

namespace sluice::lb {

class Backend {
 public:
  Backend(std::string name, std::vector<ServerSettings> servers);

  const std::string& name() const { return name_; }
  const std::vector<std::unique_ptr<Server>>& servers() const { return servers_; }

  // Candidates in the order to try them: active servers by the algorithm; when no active
  // server is usable, the first usable backup server (HAProxy's behaviour without
  // `option allbackups`). Any thread.
  void candidates(std::vector<Server*>& out, std::size_t max);

  // Number of usable active / backup servers.
  int usable_active() const;
  int usable_backup() const;
  const char* algorithm_name() const { return active_->name(); }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::unique_ptr<Algorithm> active_;
  std::unique_ptr<Algorithm> backup_;
};

}  // namespace sluice::lb
