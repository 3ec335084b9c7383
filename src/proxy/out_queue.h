#pragma once
// The bytes an HTTP/1 connection queues towards one side. Heads (serialized by http) and the
// answers sluice gives itself go into `heads`, a string whose storage is parked between
// transactions (no allocation per request); bodies never do: they move as the pooled buffers
// they were read into, or are copied into pooled buffers where they must be re-framed
// (core::BufferQueue, body()). The heads always precede the body bytes queued after them: once
// body bytes are queued, what is appended goes behind them, into the buffers. One gathered
// write sends both (write_some() in h1_internal.h).
//
// Positions count every byte queued since the queue was made: begin() is the first byte not
// yet sent, end() the position after the last one. A message whose bytes are all unsent can be
// dropped again (truncate()). Worker-local.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/assert.h"
#include "core/buffer_queue.h"

namespace sluice::proxy {

class OutQueue {
 public:
  explicit OutQueue(core::BufferPool& pool) : body_(pool) {}

  std::size_t size() const { return heads_.size() - heads_off_ + body_.size(); }
  bool empty() const { return size() == 0; }
  uint64_t begin() const { return sent_; }
  uint64_t end() const { return sent_ + size(); }
  // A pooled buffer could not be had for body bytes: the connection must end.
  bool failed() const { return body_.failed(); }

  // Appends a head or a whole answer.
  void append(std::string_view s) {
    if (body_.empty()) heads_.append(s);
    else body_.append(s);
  }
  // Where to serialize a head in place: the heads string while no body byte is queued, else
  // null (serialize elsewhere and append()).
  std::string* heads_tail() { return body_.empty() ? &heads_ : nullptr; }
  // The storage of the heads string, for parking (empty queue only).
  std::string& heads_storage() { return heads_; }
  core::BufferQueue& body() { return body_; }

  // The unsent part of the heads, then the body buffers, in order.
  std::string_view unsent_heads() const {
    return std::string_view(heads_).substr(heads_off_);
  }
  const core::BufferQueue& queued_body() const { return body_; }

  // `n` bytes of the heads were sent (no body byte is queued).
  void consume_heads(std::size_t n) {
    sent_ += n;
    heads_off_ += n;
    if (heads_off_ == heads_.size()) {
      heads_.clear();
      heads_off_ = 0;
    }
  }
  // `n` bytes were sent, from begin().
  void consume(std::size_t n) {
    sent_ += n;
    std::size_t h = heads_.size() - heads_off_;
    if (n < h) {
      heads_off_ += n;
      return;
    }
    n -= h;
    heads_.clear();
    heads_off_ = 0;
    while (n > 0) {
      std::size_t f = body_.front_size();
      if (f == 0) [[unlikely]] {
        SLUICE_BUG("OutQueue::consume: more bytes sent than queued");
        return;
      }
      std::size_t take = n < f ? n : f;
      body_.consume(take);
      n -= take;
    }
  }
  // Drops the bytes from position `pos` (begin() <= pos <= end()) to the end.
  void truncate(uint64_t pos) {
    std::size_t keep = static_cast<std::size_t>(pos - sent_);
    std::size_t h = heads_.size() - heads_off_;
    if (keep <= h) {
      heads_.resize(heads_off_ + keep);
      body_.clear();
    } else {
      body_.truncate(keep - h);
    }
  }
  // Drops everything unsent.
  void clear() {
    heads_.clear();
    heads_off_ = 0;
    body_.clear();
  }

 private:
  std::string heads_;
  std::size_t heads_off_ = 0;
  core::BufferQueue body_;
  uint64_t sent_ = 0;
};

}  // namespace sluice::proxy
