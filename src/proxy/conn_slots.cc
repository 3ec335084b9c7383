#include "proxy/conn_slots.h"

#include "proxy/process.h"

namespace sluice::proxy {

ConnSlots ConnSlots::take(Process& p, Listener& l, Refused* refused) {
  *refused = Refused::kGlobal;
  if (!p.actconn().try_acquire()) return {};
  *refused = Refused::kFrontend;
  if (!l.proxy->feconn.try_acquire()) {
    p.actconn().release();
    p.slot_freed();
    return {};
  }
  *refused = Refused::kBindLine;
  if (!l.line->limit.try_acquire()) {
    l.proxy->feconn.release();
    p.actconn().release();
    p.slot_freed();
    return {};
  }
  *refused = Refused::kNone;
  return ConnSlots(&p, &l);
}

void ConnSlots::release() {
  if (!p_) return;
  l_->line->limit.release();
  l_->proxy->feconn.release();
  p_->actconn().release();
  Process* p = std::exchange(p_, nullptr);
  l_ = nullptr;
  p->slot_freed();
}

}  // namespace sluice::proxy
