#pragma once
// Per-thread counters. Each block has exactly one writer, the worker thread that owns it, which
// updates with a plain load and store (no locked instruction, no shared cache line written per
// byte). Any thread may read; readers sum the blocks of all threads when someone asks
// (`show stat`, `show info`), so a dump returns process totals.
#include <atomic>
#include <cstdint>

namespace sluice::stats {

class LocalCounter {
 public:
  // Owner thread only.
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void set(uint64_t n) { v_.store(n, std::memory_order_relaxed); }
  // Takes back part of an earlier add() (bytes counted when read, never delivered); never
  // below zero, which a `clear counters` in between could otherwise cause.
  void take_back(uint64_t n) {
    uint64_t v = v_.load(std::memory_order_relaxed);
    v_.store(v > n ? v - n : 0, std::memory_order_relaxed);
  }
  void raise_to(uint64_t n) {
    if (n > v_.load(std::memory_order_relaxed)) v_.store(n, std::memory_order_relaxed);
  }
  // Any thread.
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  // CLI `clear counters`. Any thread: an increment that the owner makes at the same instant
  // may bring back the old value (its load came before the reset); there is no torn value,
  // and the next dump shows it. The owner's hot path stays free of locked instructions.
  void reset() { v_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// Events per second over a sliding second, estimated HAProxy-style from the current and the
// previous whole second: rate = curr + prev * (fraction of the current second still to come).
class LocalRate {
 public:
  // Owner thread only. `now_ms` is monotonic milliseconds.
  void add(uint64_t now_ms, uint64_t n = 1) {
    const uint64_t sec = now_ms / 1000;
    const uint64_t cur_sec = sec_.load(std::memory_order_relaxed);
    uint64_t prev = prev_.load(std::memory_order_relaxed);
    uint64_t c = curr_.load(std::memory_order_relaxed);
    if (sec != cur_sec) {
      prev = sec == cur_sec + 1 ? c : 0;
      c = 0;
      prev_.store(prev, std::memory_order_relaxed);
      sec_.store(sec, std::memory_order_relaxed);
    }
    c += n;
    curr_.store(c, std::memory_order_relaxed);
    // The peak follows what read() reports now: this second's count plus the previous one's
    // weighted by what is left of this second. That is at most curr + prev, so the weighting
    // (a multiply and a division) is computed only when the peak could move.
    const uint64_t peak = max_.load(std::memory_order_relaxed);
    if (c + prev <= peak) return;
    const uint64_t remain = 1000 - (now_ms - sec * 1000);
    const uint64_t r = c + prev * remain / 1000;
    if (r > peak) max_.store(r, std::memory_order_relaxed);
  }
  // Any thread.
  uint64_t read(uint64_t now_ms) const {
    uint64_t sec = now_ms / 1000;
    uint64_t s = sec_.load(std::memory_order_relaxed);
    uint64_t remain = 1000 - now_ms % 1000;
    if (s == sec)
      return curr_.load(std::memory_order_relaxed) +
             prev_.load(std::memory_order_relaxed) * remain / 1000;
    if (s + 1 == sec) return curr_.load(std::memory_order_relaxed) * remain / 1000;
    return 0;
  }
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  // CLI `clear counters` (the peak) and `clear counters all` (everything). Any thread, with
  // LocalCounter::reset()'s caveat.
  void reset_max() { max_.store(0, std::memory_order_relaxed); }
  void reset() {
    curr_.store(0, std::memory_order_relaxed);
    prev_.store(0, std::memory_order_relaxed);
    max_.store(0, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> sec_{0}, curr_{0}, prev_{0}, max_{0};
};

// The counters of one frontend, backend or server, for one thread.
struct alignas(64) TrafficCounters {
  LocalCounter stot;       // sessions
  LocalCounter smax;       // highest concurrent sessions seen by this thread's increments
  LocalCounter bin;        // bytes from clients (request side)
  LocalCounter bout;       // bytes from servers (response side)
  LocalCounter econ;       // failed connection attempts
  LocalCounter eresp;      // server-side errors after connect
  LocalCounter wretr;      // retries
  LocalCounter wredis;     // redispatches
  LocalCounter cli_abrt;   // aborted by the client
  LocalCounter srv_abrt;   // aborted by the server
  LocalCounter connect;    // connection attempts
  LocalCounter lbtot;      // chosen by load balancing
  LocalCounter conn_tot;   // accepted connections (frontends)
  LocalCounter ereq;       // request errors (frontends)
  LocalCounter eint;       // internal errors
  LocalCounter last_sess_ms;   // monotonic ms of the last session, 0 never
  // HTTP mode.
  LocalCounter req_tot;    // requests (frontends: received; backends/servers: forwarded)
  LocalCounter hrsp[6];    // responses by class: 1xx..5xx, other
  LocalCounter dreq;       // requests denied by rules (tcp-request content rejects too)
  LocalCounter dcon;       // connections refused by tcp-request connection rules (frontends)
  LocalCounter dses;       // sessions refused by tcp-request session rules (frontends)
  LocalCounter dresp;      // responses denied by rules
  LocalCounter intercepted;   // requests answered by sluice itself (return, redirect)
  LocalCounter reuse;      // requests sent on a reused idle server connection
  LocalRate req_rate;
  LocalRate sess_rate;
  LocalRate conn_rate;

  // CLI `clear counters`: the maxima only (smax and the peak rates). Any thread.
  void clear_maxima() {
    smax.reset();
    req_rate.reset_max();
    sess_rate.reset_max();
    conn_rate.reset_max();
  }
  // CLI `clear counters all`: every counter, totals included. Any thread.
  void clear_all() {
    for (LocalCounter* c : {&stot, &smax, &bin, &bout, &econ, &eresp, &wretr, &wredis,
                            &cli_abrt, &srv_abrt, &connect, &lbtot, &conn_tot, &ereq, &eint,
                            &last_sess_ms, &req_tot, &dreq, &dcon, &dses, &dresp, &intercepted, &reuse})
      c->reset();
    for (LocalCounter& c : hrsp) c.reset();
    req_rate.reset();
    sess_rate.reset();
    conn_rate.reset();
  }
};

}  // namespace sluice::stats
