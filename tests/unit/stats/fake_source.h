#pragma once
// A small process for the stats renderers: fe (frontend, id 2, one listener), be (backend, id
// 3: s1 UP, s2 in maintenance), scoped out by name in some tests.
#include <vector>

#include "stats/snapshot.h"

namespace sluice::stats::testing {

class FakeSource : public StatsSource {
 public:
  ProcessSnapshot process() const override {
    ProcessSnapshot p;
    p.pid = 4242;
    p.nbthread = 2;
    p.uptime_s = 103;
    p.maxconn = 50;
    p.curr_conns = 3;
    p.version = "9.9";
    return p;
  }

  std::vector<ProxySnapshot> proxies() const override {
    std::vector<ProxySnapshot> v;
    ProxySnapshot fe;
    fe.name = "fe";
    fe.id = 2;
    fe.is_frontend = true;
    fe.mode = "http";
    fe.frontend_status = "OPEN";
    fe.frontend.stot = 21;
    fe.frontend.hrsp_2xx = 20;
    ListenerSnapshot li;
    li.name = "sock-1";
    li.id = 1;
    li.addr = "127.0.0.1:9000";
    li.status = "OPEN";
    fe.listeners.push_back(li);
    v.push_back(fe);

    ProxySnapshot be;
    be.name = "be";
    be.id = 3;
    be.is_backend = true;
    be.mode = "http";
    be.algo = "roundrobin";
    ServerSnapshot s1;
    s1.name = "s1";
    s1.id = 1;
    s1.addr = "127.0.0.1:18081";
    s1.status = "UP";
    s1.lastchg_s = 3725;
    s1.c.stot = 7;
    be.servers.push_back(s1);
    ServerSnapshot s2;
    s2.name = "s2<b>";
    s2.id = 2;
    s2.status = "MAINT";
    s2.op_state = 0;
    s2.admin_state = 1;
    be.servers.push_back(s2);
    v.push_back(be);
    return v;
  }

  ActivitySnapshot activity(int current_thread) const override { return {}; }
};

}  // namespace sluice::stats::testing
