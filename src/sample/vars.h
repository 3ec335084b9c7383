#pragma once
// Variables: `set-var(txn.name)` stores a sample, `var(txn.name)` fetches it back. HAProxy's
// scopes: proc (the process, shared by every worker), sess (one client connection), txn (one
// HTTP transaction or TCP stream), req and res (one direction of it), check (a health check).
// `psess`, `ptxn`, `preq` and `pres` name a parent stream's scopes, which only Lua and SPOE
// create: sluice accepts them and finds nothing there.
//
// Names are interned at parse time (VarNames), so the data path compares integers. A store
// holds a handful of variables in a small vector, and keeps the capacity of strings it
// reuses; sizes are accounted against tune.vars.<scope>-max-size as HAProxy does.
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sample/sample.h"

namespace sluice::sample {

enum class Scope : uint8_t { kProc, kSess, kTxn, kReq, kRes, kCheck, kParent };
std::string_view scope_name(Scope s);

struct VarRef {
  Scope scope = Scope::kTxn;
  uint32_t id = 0;   // interned name (VarNames), 0: none
  bool valid() const { return id != 0; }
};

// Interned variable names ("txn.host" -> id). Filled while the configuration loads, read-only
// afterwards (the CLI only looks names up).
class VarNames {
 public:
  // Parses `scope.name` and interns it. Errors are HAProxy's: "invalid variable name 'foo.x'.
  // A variable name must start with its scope. The scope can be 'proc', '(p)sess', '(p)txn',
  // '(p)req', '(p)res' or 'check'." An empty name after the scope is refused too.
  bool parse(std::string_view text, VarRef* out, std::string* error);
  // The id of a known `scope.name`, 0 when never declared.
  uint32_t find(std::string_view full_name) const;
  // "txn.host" for an id.
  std::string_view name(uint32_t id) const;
  // Whether the configuration names a variable of scope `s` (the proxy then gives its
  // connections a store for it).
  bool any_in(Scope s) const { return (scopes_used_ >> static_cast<unsigned>(s)) & 1u; }
  // The process-wide registry.
  static VarNames& global();

 private:
  std::vector<std::string> names_{""};   // id 0 is "no variable"
  uint32_t scopes_used_ = 0;               // bit per Scope
};

// Where a variable's value lives.
struct VarValue {
  Type type = Type::kStr;
  int64_t sint = 0;
  in_addr v4{};
  in6_addr v6{};
  std::string data;   // kStr, kBin, kMeth text
  // A sample pointing at this value (strings into `data`).
  Sample sample() const;
};

// Conditions of set-var (HAProxy's ifexists, ifnotexists, ifempty, ifnotempty, ifset,
// ifnotset, ifgt, iflt), as bits.
enum SetCond : uint16_t {
  kIfExists = 1, kIfNotExists = 2, kIfEmpty = 4, kIfNotEmpty = 8, kIfSet = 16, kIfNotSet = 32,
  kIfGt = 64, kIfLt = 128,
};
// Parses one condition name; false when unknown.
bool parse_set_cond(std::string_view word, uint16_t* bits);

// The variables of one scope of one connection or transaction. Not thread-safe: a store
// belongs to the worker running its connection.
class VarStore {
 public:
  explicit VarStore(Scope scope = Scope::kTxn, std::size_t max_size = 0)
      : scope_(scope), max_size_(max_size) {}
  Scope scope() const { return scope_; }
  // Null when not set.
  const VarValue* get(uint32_t id) const;
  // Stores `s` (copied). False when a condition refuses it or the size limit would be passed.
  bool set(uint32_t id, const Sample& s, uint16_t conds = 0);
  void unset(uint32_t id);
  // Forgets every value, keeping capacity (a new transaction on the same connection).
  void clear();
  std::size_t size_used() const { return used_; }
  std::size_t count() const { return count_; }
  // For the CLI and tests: each set variable in order of first set.
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& e : entries_)
      if (e.id) f(e.id, e.value);
  }

 private:
  struct Entry {
    uint32_t id = 0;   // 0: free slot (its value's capacity kept)
    VarValue value;
  };
  Scope scope_;
  std::size_t max_size_;   // 0: unlimited
  std::size_t used_ = 0;
  std::size_t count_ = 0;
  std::vector<Entry> entries_;
};

// proc.* variables: one store for the process, shared by every worker under a reader-writer
// lock (sets are rare; a get copies the value out under the lock, into `sc`).
class ProcVars {
 public:
  static ProcVars& instance();
  bool get(uint32_t id, Sample& out, Scratch& sc) const;
  bool set(uint32_t id, const Sample& s, uint16_t conds = 0);
  void unset(uint32_t id);
  void set_max_size(std::size_t bytes);
  // Every set variable (the CLI's `get var` reads one).
  template <typename F>
  void for_each(F&& f) const {
    std::shared_lock lock(mu_);
    store_.for_each(f);
  }

 private:
  mutable std::shared_mutex mu_;
  VarStore store_{Scope::kProc};
};

// The global limits (tune.vars.global-max-size and the per-scope ones); 0 = unlimited.
struct VarLimits {
  std::size_t global = 0, proc = 0, sess = 0, txn = 0, reqres = 0, check = 0;
};
VarLimits& var_limits();

}  // namespace sluice::sample
