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

// Memory accounting up the scopes, as HAProxy does it (tune.vars.*-max-size): a req or res
// variable counts in its transaction's reqres total (one for both directions), a txn variable
// (and those) in the txn total, then in the session's, and every variable of the process in
// the process total, which tune.vars.proc-max-size and tune.vars.global-max-size both bound. A
// set that would pass a limit anywhere on the way is refused. A variable takes kVarOverhead
// bytes plus the bytes of its value when it is a string, a binary or a method name. The levels of one connection are VarAccounts chained
// by `up` (worker-local); the process total is shared (atomic) and kept only when one of its
// two limits is set, so a configuration without tune.vars pays nothing.
// What one variable costs besides its value: HAProxy 3.5 counts its `struct var` (88 bytes
// on 64-bit Linux, measured with tune.vars.txn-max-size), so the same limit admits the same
// variables here.
inline constexpr std::size_t kVarOverhead = 88;

class VarAccount {
 public:
  explicit VarAccount(std::size_t max = 0, VarAccount* up = nullptr) : max_(max), up_(up) {}
  VarAccount(const VarAccount&) = delete;
  VarAccount& operator=(const VarAccount&) = delete;
  // Whether `delta` more bytes fit at this level, the levels above and the process.
  bool fits(std::size_t delta) const;
  // Applies a change (the caller checked fits() for growth).
  void add(std::ptrdiff_t delta);
  std::size_t used() const { return used_; }
  // The level above (a transaction's txn total moves between sessions with its codecs).
  void set_up(VarAccount* up) { up_ = up; }
  // The limit, for an account made before it is known to be needed (0: none).
  void set_max(std::size_t max) { max_ = max; }

  // The process level alone: what a store without an account (proc variables) checks.
  static bool process_fits(std::size_t delta);
  static void process_add(std::ptrdiff_t delta);
  static std::size_t process_used();

 private:
  std::size_t max_;
  std::size_t used_ = 0;
  VarAccount* up_;
};

// The variables of one scope of one connection or transaction. Not thread-safe: a store
// belongs to the worker running its connection.
class VarStore {
 public:
  // `max_size` bounds this store alone; `account` (may be null: only the process level) is
  // where its bytes count up the scopes and must outlive the store.
  explicit VarStore(Scope scope = Scope::kTxn, std::size_t max_size = 0, VarAccount* account = nullptr)
      : scope_(scope), max_size_(max_size), account_(account) {}
  ~VarStore();
  VarStore(const VarStore&) = delete;
  VarStore& operator=(const VarStore&) = delete;
  Scope scope() const { return scope_; }
  // Null when not set.
  const VarValue* get(uint32_t id) const;
  // Stores `s` (copied). False when a condition refuses it or the size limit would be passed.
  bool set(uint32_t id, const Sample& s, uint16_t conds = 0);
  void unset(uint32_t id);
  // Forgets every value, keeping capacity (a new transaction on the same connection). Inline
  // for the common empty store: each transaction clears its stores.
  void clear() {
    if (count_ || used_) clear_values();
  }
  std::size_t size_used() const { return used_; }
  // A new limit for the next sets; the values already there stay.
  void set_max_size(std::size_t bytes) { max_size_ = bytes; }
  std::size_t count() const { return count_; }
  void clear_values();
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
  bool charge(std::size_t old_size, std::size_t new_size);
  void refund(std::size_t size);
  Scope scope_;
  std::size_t max_size_;   // 0: unlimited
  VarAccount* account_;
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
  // The limit of later sets (tune.vars.proc-max-size); what is set stays.
  void set_max_size(std::size_t bytes);
  // Every variable as text, one per line, for the new worker of a master-worker reload to take
  // over: "<name> <type> <integer> <hex of the IPv4> <hex of the IPv6> <hex of the bytes>".
  std::string dump() const;
  // Sets the variables dump() wrote, interning their names (main thread, before any worker
  // runs). Returns how many were set; malformed lines are skipped.
  int restore(std::string_view text);
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
