#pragma once
// Turns the parsed configuration into runtime settings (config produces data; app turns it
// into objects). Main thread only.
#include <string>
#include <vector>

#include "config/model.h"
#include "proxy/settings.h"

namespace sluice::app {

struct RuntimePlan {
  proxy::ProcessSettings process;
  std::vector<proxy::ProxySettings> proxies;
  std::vector<std::string> warnings;
};

// `fd_limit` is the RLIMIT_NOFILE soft limit available to the process.
// `cmdline_maxpconn` (-N, 0 = none): the maxconn of frontends that set none, instead of the
// global one.
RuntimePlan build_plan(const config::ConfigModel& model, long fd_limit, int cmdline_maxconn,
                       int cmdline_maxpconn = 0);

proxy::LogTarget to_runtime(const config::LogTarget& t);

// Usable CPUs (sched_getaffinity), at least 1.
int usable_cpus();

}  // namespace sluice::app
