#include "check/health.h"

namespace sluice::check {

Health::Change Health::report(bool ok) {
  last_failure_counted_ = false;
  if (ok) {
    if (health_ < top()) {
      ++health_;
      if (health_ >= rise_) health_ = top();
    }
    if (health_ >= rise_ && !up_) {
      up_ = true;
      return Change::kUp;
    }
    return Change::kNone;
  }
  if (health_ > 0) {
    last_failure_counted_ = true;
    --health_;
    if (health_ < rise_) health_ = 0;
  }
  if (health_ == 0 && up_) {
    up_ = false;
    return Change::kDown;
  }
  return Change::kNone;
}

uint32_t next_interval(const Health& h, const Intervals& iv) {
  if (h.health() == h.top()) return iv.inter_ms;
  if (!h.up() && h.health() == 0) return iv.downinter_ms ? iv.downinter_ms : iv.inter_ms;
  return iv.fastinter_ms ? iv.fastinter_ms : iv.inter_ms;
}

}  // namespace sluice::check
