#pragma once
// server-state-file / load-server-state-from-file: at start-up, before any traffic, the
// servers of the backends that ask for it take the state a previous process had (the output
// of `show servers state`, saved before a reload), as HAProxy does:
//   - the administrative state set at run time: forced maintenance (FMAINT), drain (FDRAIN),
//     or ready again when the configuration says `disabled` but the saved state had left it;
//     a configuration whose `disabled` changed since wins;
//   - the weight set at run time, unless the configured weight changed since;
//   - a checked server's verdict and counter (DOWN stays DOWN until its checks say otherwise,
//     stopping stays stopping);
//   - a port changed at run time (the address stays the configuration's).
// A file that cannot be opened is a notice (the first start has none); one whose version is not 1, or
// with a line that is not a server's state, is skipped whole with HAProxy's warning; a line
// with a bad value skips that server, with HAProxy's warning.
#include <string>
#include <vector>

#include "app/checks_setup.h"
#include "config/model.h"
#include "proxy/process.h"

namespace sluice::app {

struct StateLine {
  const proxy::Proxy* proxy;   // whose logs take it
  int level;                   // syslog severity
  std::string text;
};

// Main thread, after `checks` is built and before the workers start. `notices` and `warnings`
// are printed at start-up; `logs` go to the proxies' logs once the process runs (HAProxy sends
// them there). `live_state`: on a master-worker reload, what the worker that served until
// then answered to `show servers state`; the backends that load a state file take it instead
// (what the file would hold had it been saved right before the reload, as HAProxy's reload
// procedure does by hand). Null, empty or unusable: the files.
// `init-addr last`: once the configuration is read and before it is built, each server named
// by a host name whose init-addr puts `last` before the method that gave its address takes
// the address its backend's saved state has for it (the same files, or `live_state`, as
// load_server_states()). Returns HAProxy's alert for a server that only `last` could give an
// address and that has none saved, else an empty string. `notices` and `warnings` say what
// is wrong with the files; the caller prints them only with that alert, since
// load_server_states() reports them otherwise.
std::string apply_saved_addresses(config::ConfigModel& model, const std::string* live_state,
                                  std::vector<std::string>* notices,
                                  std::vector<std::string>* warnings);

void load_server_states(const config::ConfigModel& model, proxy::Process& process,
                        HealthChecks& checks, std::vector<std::string>* notices,
                        std::vector<std::string>* warnings, std::vector<StateLine>* logs,
                        const std::string* live_state = nullptr);

}  // namespace sluice::app
