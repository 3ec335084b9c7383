#include "lb/random.h"

#include <numeric>

namespace sluice::lb {

namespace {

// splitmix64 seeded from the thread's address and a global counter: cheap, no shared state.
std::atomic<uint64_t> g_seed{0x9e3779b97f4a7c15ull};
thread_local uint64_t t_state = 0;

uint64_t next_random() {
  if (t_state == 0) t_state = g_seed.fetch_add(0x9e3779b97f4a7c15ull, std::memory_order_relaxed) | 1;
  uint64_t z = (t_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// a strictly less loaded than b, relative to weights.
bool lighter(const Server* a, const Server* b) {
  return int64_t{a->current_conns() + 1} * b->eweight() < int64_t{b->current_conns() + 1} * a->eweight();
}

}  // namespace

void Random::seed_this_thread(uint64_t seed) { t_state = seed | 1; }

Random::Random(std::vector<Server*> servers, int draws)
    : servers_(std::move(servers)), draws_(draws < 1 ? 1 : draws), slots_(std::make_unique<Slots>()) {
  rebuild();
}

void Random::rebuild() {
  int g = 0;
  for (Server* s : servers_)
    if (s->usable() && s->eweight() > 0) g = std::gcd(g, s->eweight());
  auto t = std::make_unique<Slots>();
  if (g > 0) {
    for (Server* s : servers_)
      if (s->usable() && s->eweight() > 0)
        t->slot.insert(t->slot.end(), static_cast<std::size_t>(s->eweight() / g), s);
  }
  slots_.publish(std::move(t));
}

void Random::pick(const PickContext&, std::vector<Server*>& out, std::size_t max) {
  out.clear();
  if (max == 0) return;
  auto t = slots_.read();
  const std::size_t n = t->slot.size();
  if (n == 0) return;
  // The draws, best first: a small insertion sort over at most `draws` entries.
  for (int d = 0; d < draws_; ++d) {
    Server* s = t->slot[next_random() % n];
    if (!pickable(s)) continue;
    bool seen = false;
    for (Server* o : out) seen |= (o == s);
    if (seen) continue;
    out.push_back(s);
    for (std::size_t i = out.size() - 1; i > 0 && lighter(out[i], out[i - 1]); --i) std::swap(out[i], out[i - 1]);
  }
  if (out.size() > max) out.resize(max);
  if (out.size() >= max) return;
  // More candidates (retries, or every draw hit a full or down server): walk the table from
  // a random place.
  std::size_t start = next_random() % n;
  for (std::size_t i = 0; i < n && out.size() < max; ++i) {
    Server* s = t->slot[(start + i) % n];
    if (pickable(s)) push_distinct(out, s);
  }
}

}  // namespace sluice::lb
