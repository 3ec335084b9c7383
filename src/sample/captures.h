#pragma once
// The capture slots of a stream, as HAProxy numbers them: each `capture request|response
// header`, `declare capture request|response` and `http-request capture ... len` line of a
// frontend takes the next slot of its direction, in the order of the configuration (the
// capture ids of `capture ... id <n>`, capture-req(<n>) and capture.req.hdr(<n>)). The log's
// %hr / %hs write them in that order, `{a|b}`.
//
// The values live with the stream (an HTTP transaction, a TCP session) and are sized on its
// first use by a frontend that has slots: a configuration without captures pays nothing.
// Worker-local, as the stream.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/http.h"

namespace sluice::sample {

// A frontend's slots of one direction: the header name (empty for a slot declared without
// one) and the length values are cut to.
using CaptureSlots = std::vector<std::pair<std::string, int>>;

class Captures {
 public:
  // A new stream of a frontend with these slots (either list may be empty): every value
  // unset. Keeps the storage of the previous stream.
  void reset(const CaptureSlots& req, const CaptureSlots& res);
  bool empty() const { return req_slots_ == nullptr; }

  // Sets slot `id` of a direction to `v` cut to the slot's length. False when the frontend
  // has no such slot (HAProxy's capture actions and converters then do nothing).
  bool set_req(int64_t id, std::string_view v) { return set(req_slots_, req_, req_set_, id, v); }
  bool set_res(int64_t id, std::string_view v) { return set(res_slots_, res_, res_set_, id, v); }
  // `capture request|response header`: each named slot takes the value of the last field of
  // that name in `fields`; slots without a name are left as they are.
  void capture_headers(bool response, const std::vector<http::Header>& fields);

  // Values in slot order for the log ("" when unset), and one value when it was set.
  std::span<const std::string> req() const { return req_; }
  std::span<const std::string> res() const { return res_; }
  const std::string* req_value(int64_t id) const { return value(req_, req_set_, id); }
  const std::string* res_value(int64_t id) const { return value(res_, res_set_, id); }
  std::size_t req_slots() const { return req_.size(); }
  std::size_t res_slots() const { return res_.size(); }

 private:
  static bool set(const CaptureSlots* slots, std::vector<std::string>& vals,
                  std::vector<bool>& is_set, int64_t id, std::string_view v);
  static const std::string* value(const std::vector<std::string>& vals,
                                  const std::vector<bool>& is_set, int64_t id);

  const CaptureSlots* req_slots_ = nullptr;
  const CaptureSlots* res_slots_ = nullptr;
  std::vector<std::string> req_, res_;
  std::vector<bool> req_set_, res_set_;
};

}  // namespace sluice::sample
