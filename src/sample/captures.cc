// The capture slots of a stream.
#include "sample/captures.h"

namespace sluice::sample {

namespace {

void size_for(const CaptureSlots& slots, std::vector<std::string>& vals, std::vector<bool>& is_set) {
  vals.resize(slots.size());
  for (auto& v : vals) v.clear();
  is_set.assign(slots.size(), false);
}

}  // namespace

void Captures::reset(const CaptureSlots& req, const CaptureSlots& res) {
  req_slots_ = &req;
  res_slots_ = &res;
  size_for(req, req_, req_set_);
  size_for(res, res_, res_set_);
}

bool Captures::set(const CaptureSlots* slots, std::vector<std::string>& vals,
                   std::vector<bool>& is_set, int64_t id, std::string_view v) {
  if (!slots || id < 0 || static_cast<uint64_t>(id) >= vals.size()) return false;
  auto i = static_cast<std::size_t>(id);
  std::size_t len = static_cast<std::size_t>((*slots)[i].second);
  vals[i].assign(v.substr(0, len));
  is_set[i] = true;
  return true;
}

const std::string* Captures::value(const std::vector<std::string>& vals,
                                   const std::vector<bool>& is_set, int64_t id) {
  if (id < 0 || static_cast<uint64_t>(id) >= vals.size() || !is_set[static_cast<std::size_t>(id)])
    return nullptr;
  return &vals[static_cast<std::size_t>(id)];
}

void Captures::capture_headers(bool response, const std::vector<http::Header>& fields) {
  const CaptureSlots* slots = response ? res_slots_ : req_slots_;
  if (!slots) return;
  for (std::size_t i = 0; i < slots->size(); ++i) {
    const std::string& name = (*slots)[i].first;
    if (name.empty()) continue;
    const http::Header* last = nullptr;
    for (const auto& f : fields)
      if (http::iequals(f.name, name)) last = &f;
    if (!last) continue;
    if (response) set_res(static_cast<int64_t>(i), last->value);
    else set_req(static_cast<int64_t>(i), last->value);
  }
}

}  // namespace sluice::sample
