#pragma once
// What TCP and HTTP sessions share on their way to a server, below their backend leg
// (proxy/backend_leg.h): the load-balancing pick with its slot and counters, the redispatch
// arithmetic and the release of a client's slots.
// Worker-local.
#include "lb/algorithm.h"
#include "lb/backend.h"
#include "lb/server.h"
#include "proxy/process.h"

namespace sluice::proxy {

class Worker;

// After a quick connect failure, HAProxy waits before trying the same server again so that a
// restarting server is not hammered; a redispatch to another server goes at once.
inline constexpr uint64_t kRetryTurnaroundMs = 1000;

// Picks a server of `be` and takes a connection slot on it, charging the pick to the worker's
// counters. With `redispatch`, another server than `previous` is preferred. Returns the new
// server (the slot of `previous`, if any, is then released), `previous` itself when a
// redispatch found nothing better (its slot kept), or null when every candidate is full.
lb::Server* take_server(Worker& w, Proxy& be, const lb::PickContext& ctx, lb::Server* previous,
                        bool redispatch);

// Charges a session taken by `s` to the worker's counters: lbtot too when the load-balancing
// algorithm chose it (`balanced`), not when use-server did.
void count_session(Worker& w, Proxy& be, lb::Server& s, bool balanced);

// `use-server` rules of `be`: the server of the first matching rule that is not stopped, or
// null when load balancing decides. Worker-local.
lb::Server* use_server(const Proxy& be, const rules::RequestView& view);

// `option redispatch`: +P on every Pth retry, -N on the Nth retry before the last (-1 = the
// last one), 0 never. `retries_done` counts the retry about to be made (1-based).
bool redispatch_due(const ProxySettings& be, int retries_done);

// HAProxy's stream_choose_redispatch: with `option redispatch`, a failed connection leaves
// `srv` for another server at once (no turn-around) when `srv` is not running (DOWN, in
// maintenance or still warming up), when redispatch_due() says so, or when the algorithm
// does not hash (a client is not tied to a server) and more than one active server is
// usable. `retries_done` counts the retry about to be made (1-based).
bool redispatch_now(const ProxySettings& be, const lb::Backend& backend, const lb::Server& srv,
                    int retries_done);

}  // namespace sluice::proxy
