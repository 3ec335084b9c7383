#pragma once
// Errors on the data path are values. Error records which side failed and whether the
// operation may be retried (a refused connect may go to another server; a client reset may not).
#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace sluice::base {

enum class Side { kInternal, kClient, kServer };

struct Error {
  Side side = Side::kInternal;
  int sys_errno = 0;      // saved errno, 0 when not a system error
  bool retryable = false;
  std::string message;

  static Error from_errno(std::string what, int err, Side side = Side::kInternal,
                          bool retryable = false);
  // An error that is only a message (configuration and planning errors).
  static Error text(std::string message) {
    Error e;
    e.message = std::move(message);
    return e;
  }
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}      // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

}  // namespace sluice::base
