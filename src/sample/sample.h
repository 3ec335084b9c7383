#pragma once
// HAProxy's sample language: typed samples, the casts between them, and the scratch space
// converters write into. A sample expression (sample/expr.h) is a fetch followed by any number
// of converters; ACLs, conditions, log formats and actions all evaluate them.
//
// A sample never owns memory: strings point into the message being processed, into the
// configuration (constant arguments), into a variable's storage or into the thread's Scratch.
// So evaluating an expression allocates nothing once the scratch buffers have grown.
#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::sample {

// HAProxy's sample types (SMP_T_*). kAny is only a converter's input type: it takes any sample.
enum class Type : uint8_t { kAny, kBool, kSint, kIpv4, kIpv6, kStr, kBin, kMeth };
// HAProxy's names, as its messages write them: "boolean", "integer", "ipv4", "ipv6", "string",
// "binary", "method"; "any".
std::string_view type_name(Type t);

// Flags of a sample (HAProxy's SMP_F_*).
enum SampleFlags : uint8_t {
  kNotLast = 1,     // a multi-value fetch has more values after this one (ACLs iterate)
  kMayChange = 2,   // the answer may change once more bytes arrive (content inspection)
  kConst = 4,       // `str` points at constant storage (configuration, static text)
};

// HTTP methods as HAProxy numbers them (HTTP_METH_*); kOther keeps the text.
enum class Method : uint8_t {
  kOptions, kGet, kHead, kPost, kPut, kDelete, kTrace, kConnect, kOther
};
Method method_of(std::string_view text);
std::string_view method_name(Method m);

struct Sample {
  Type type = Type::kStr;
  uint8_t flags = 0;
  int64_t sint = 0;       // kBool (0/1), kSint; kMeth: the Method
  in_addr v4{};           // kIpv4, network order
  in6_addr v6{};          // kIpv6
  std::string_view str;   // kStr, kBin; kMeth: the text (always set)

  static Sample boolean(bool b) { Sample s; s.type = Type::kBool; s.sint = b; return s; }
  static Sample integer(int64_t v) { Sample s; s.type = Type::kSint; s.sint = v; return s; }
  static Sample string(std::string_view v, uint8_t flags = 0) {
    Sample s; s.type = Type::kStr; s.str = v; s.flags = flags; return s;
  }
};

// Per-thread space for converters and fetches that build a value: a few rotating buffers, so
// that a converter reading one writes into another. Buffers keep their capacity: after warm-up
// nothing allocates. Never share one between threads.
class Scratch {
 public:
  static constexpr int kBuffers = 4;
  // A cleared buffer that no sample of the current step points into.
  std::string& next() {
    std::string& b = bufs_[pos_];
    pos_ = (pos_ + 1) % kBuffers;
    b.clear();
    return b;
  }

 private:
  std::string bufs_[kBuffers];
  int pos_ = 0;
};
// The calling thread's scratch.
Scratch& thread_scratch();

// Converts `s` to type `to` in place, with HAProxy's implicit casts (sample.c's cast table):
//   bool/sint -> str (decimal), sint <-> bool, sint -> ipv4 (host order number), ipv4 -> sint,
//   ipv4 <-> ipv6 (IPv4-mapped), addresses -> str, str -> sint (leading integer), str -> ipv4
//   / ipv6 (parsed), str <-> bin, str <-> meth. False when the cast does not exist or the
//   value does not convert (a string that is not an address). Strings it builds go to `sc`.
bool cast(Sample& s, Type to, Scratch& sc);
// Whether a cast from `from` to `to` exists at all (parse-time type checks).
bool can_cast(Type from, Type to);

// The sample as text, as a log line or a header value writes it (casting a copy): false when
// it has no text form.
bool to_text(const Sample& s, std::string& out);

// Integer prefix of a string, as HAProxy's strl2ic: optional sign then digits; no digits is 0.
int64_t leading_int(std::string_view s);

}  // namespace sluice::sample
