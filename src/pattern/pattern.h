#pragma once
// Patterns: what ACLs and maps compare samples with (HAProxy's pattern.c and map.c).
//
// A Ref is one list of entries (key, value): a pattern file (`acl ... -f file`), a map file
// (`map_str(file)`), or the patterns written on one ACL line. It keeps every entry in the order
// written, with a version number each, for the CLI's `prepare`/`commit`. An Expr is a Ref
// compiled for one match method (`map_beg` and `map_str` of the same file are two Exprs): an
// immutable Index of the current version's entries, published to every worker through a hazard
// pointer (base/published.h). A lookup takes no lock; a change (CLI) rebuilds the Indexes of the
// Ref under the Ref's mutex and publishes them, so a reader sees the old or the new list, never
// a torn one.
//
// Lookups follow HAProxy's indexes: exact strings (`str`, `bin`) by hash, prefixes (`beg`) by a
// sorted array with prefix links (the longest prefix wins, as HAProxy's prefix tree), networks
// (`ip`) by a hash per prefix length (the longest prefix wins), integers by hash when every
// pattern is a single value. `-i` keeps HAProxy's first match in the written order. The others
// (`sub`, `end`, `dir`, `dom`, `reg`, ranges) are scanned in order, as HAProxy does.
#include <netinet/in.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/published.h"
#include "base/regex.h"
#include "base/result.h"
#include "net/network.h"

namespace sluice::pattern {

// How a sample is compared with the patterns (HAProxy's -m methods). kRegm is map_regm's: a
// regex whose groups the value may name (\1).
enum class Method : uint8_t {
  kFound, kBool, kInt, kIp, kBin, kStr, kBeg, kEnd, kSub, kReg, kLen, kDir, kDom, kMeth, kRegm
};
// HAProxy's name, as `-m` and `get map`'s `type=` write it.
std::string_view method_name(Method m);

// What a map's values are read as: the converter's output type (map_*_int, map_*_ip); kKey
// gives the key that matched instead (map_*_key). kNone: an ACL, whose entries have no value.
enum class ValueType : uint8_t { kNone, kStr, kInt, kIp, kKey };

struct IntRange {
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  bool negate = false;   // `ne` (sluice's own)
};

// One entry compiled for a method.
struct Item {
  std::string key;     // as written
  std::string value;   // as written (maps)
  std::string cmp;     // str/beg/end/sub/dir/dom/meth: the key to compare (lower case with -i);
                       // bin: the bytes
  IntRange range;      // int, len
  net::Network net;    // ip
  int64_t vint = 0;    // the value as an integer (ValueType::kInt)
  net::Network vaddr;  // the value as an address (ValueType::kIp)
};

// How an Expr reads its keys and values.
struct Kind {
  Method method = Method::kStr;
  bool icase = false;
  bool dotted = false;                  // req_ssl_ver's "3.1" integers
  ValueType value = ValueType::kNone;
};

// Parses one key / value for `kind` into `item`. Errors are HAProxy's texts
// ("'x' is not a valid IPv4 or IPv6 address", "unable to parse 'x'").
base::Result<void> parse_key(const Kind& kind, std::string_view text, Item& item);
base::Result<void> parse_value(const Kind& kind, std::string_view text, Item& item);

// A compiled, immutable list of entries. Built off the data path; read by any thread.
class Index {
 public:
  // Builds from items already parsed for `kind`, in order.
  Index(const Kind& kind, std::vector<Item> items, std::vector<std::unique_ptr<base::Regex>> regexes);

  // The first (or, for tree methods, the longest) entry matching, or null. `groups` (may be
  // null) receives a regex entry's captures (kReg/kRegm).
  const Item* find_str(std::string_view s, base::Regex::Groups* groups = nullptr) const;
  const Item* find_int(int64_t v) const;
  const Item* find_v4(const in_addr& a) const;
  const Item* find_v6(const in6_addr& a) const;
  // HTTP method matching: the sample's method text and whether it is a well-known method.
  const Item* find_meth(std::string_view s) const;

  std::size_t size() const { return items_.size(); }
  // `get map`'s idx=: "tree" where a tree (here: a hash or sorted index) is used, else "list".
  // A property of the kind, not of the entries.
  static bool tree(const Kind& kind);
  bool tree() const { return tree(kind_); }

 private:
  const Item* find_ip_tables(bool v6, const uint8_t* bytes) const;
  const Item* find_beg(std::string_view s) const;

  Kind kind_;
  std::vector<Item> items_;
  std::vector<std::unique_ptr<base::Regex>> regexes_;   // kReg/kRegm: one per item
  // Exact keys (str, bin, int): key -> first item in order.
  std::unordered_map<std::string_view, uint32_t> exact_;
  std::unordered_map<int64_t, uint32_t> exact_int_;
  bool int_hashed_ = false;
  // beg: item indexes sorted by key; for each, the sorted position of its longest proper
  // prefix among the keys (-1 none).
  std::vector<uint32_t> sorted_;
  std::vector<int32_t> parent_;
  // ip: per prefix length, masked address -> first item; lengths longest first.
  struct IpTable {
    int prefix;
    std::unordered_map<std::string_view, uint32_t> keys;   // the masked bytes (into items_)
  };
  std::vector<IpTable> v4_, v6_;
  bool linear_ = true;   // small lists are scanned
};

class Ref;

// A Ref compiled for one method. Owned by what uses it (a converter argument, an ACL term);
// registered with its Ref, which rebuilds it on every change.
class Expr {
 public:
  Expr(std::shared_ptr<Ref> ref, const Kind& kind);
  ~Expr();
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  // Calls f(const Item&, const base::Regex::Groups&) on the entry found, while the index
  // cannot be freed; returns whether one was found. Any thread.
  template <class Find, class F>
  bool lookup(Find&& find, F&& f) const {
    auto g = index_->read();
    base::Regex::Groups groups;
    const Item* it = find(*g, &groups);
    if (!it) return false;
    f(*it, groups);
    return true;
  }
  bool match(auto&& find) const {
    auto g = index_->read();
    return find(*g, nullptr) != nullptr;
  }

  const Kind& kind() const { return kind_; }
  Ref& ref() const { return *ref_; }
  bool tree() const;
  // Writer side (the Ref's mutex held): compiles `items` and publishes them.
  void publish(std::vector<Item> items, std::vector<std::unique_ptr<base::Regex>> regexes);

 private:
  std::shared_ptr<Ref> ref_;
  Kind kind_;
  std::unique_ptr<base::Published<Index>> index_;
};

// One list of entries (HAProxy's pat_ref).
class Ref {
 public:
  struct Entry {
    std::string key;
    std::string value;
    uint32_t gen = 0;
  };
  enum Flags : uint8_t { kAcl = 1, kMap = 2 };

  Ref(std::string file, uint8_t flags) : file_(std::move(file)), flags_(flags) {}

  // The file, or empty for an ACL line's patterns.
  const std::string& file() const { return file_; }
  uint8_t flags() const { return flags_; }
  void add_flags(uint8_t f) { flags_ |= f; }
  int id() const { return id_; }
  void set_id(int id) { id_ = id; }
  // `show map`'s description: where the file is used, or the ACL's keyword and line.
  std::string description() const;
  void add_use(std::string use) { uses_.push_back(std::move(use)); }
  void set_inline_desc(std::string d) { inline_desc_ = std::move(d); }

  // Start-up: the entries, read from a file (HAProxy's format) or given.
  base::Result<void> load_file();
  void add_loaded(std::string key, std::string value) { push(std::move(key), std::move(value), 0); }

  // CLI side. Each takes the mutex, validates against every Expr using the Ref, changes the
  // entries, and republishes the Indexes when the current version changed. Errors are
  // HAProxy's CLI answers.
  base::Result<void> add(uint32_t gen, std::string key, std::string value);
  base::Result<void> add_current(std::string key, std::string value) {
    return add(curr_gen(), std::move(key), std::move(value));
  }
  // `set map`: every entry of the current version with `key` (or the one entry `#<ptr>`).
  base::Result<void> set(std::string_view key_or_ptr, std::string_view value);
  // `del map|acl`: every entry of the current version with `key`, or the one `#<ptr>`.
  base::Result<void> del(std::string_view key_or_ptr);
  void clear(uint32_t gen);
  uint32_t prepare();
  base::Result<void> commit(uint32_t gen);
  // `show map`: "0x<ptr> key[ value]" lines of version `gen`.
  std::string show(uint32_t gen) const;
  // `get map|acl`: one line per Expr.
  std::string get(std::string_view sample) const;
  uint32_t curr_gen() const;
  uint32_t next_gen() const;
  std::size_t entry_count() const;

  // Expr registration (the Ref's mutex taken inside).
  void attach(Expr* e);
  void detach(Expr* e);
  // Compiles `e` from the current version (start-up, or a new user). Error: HAProxy's text
  // for the first entry that does not parse.
  base::Result<void> compile(Expr& e, std::size_t* bad_line);

 private:
  void push(std::string key, std::string value, uint32_t gen);
  base::Result<void> republish_locked();
  base::Result<void> validate_locked(std::string_view key, std::string_view value) const;
  base::Result<void> build_locked(Expr& e, std::size_t* bad) const;
  Entry* by_ptr(std::string_view text);

  std::string file_;
  uint8_t flags_;
  int id_ = -1;
  std::vector<std::string> uses_;
  std::string inline_desc_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<std::size_t> lines_;   // file line of each loaded entry (start-up only)
  uint32_t curr_gen_ = 0;
  uint32_t next_gen_ = 0;
  std::vector<Expr*> exprs_;
};

// The configuration line being parsed (set by the configuration parser), which `show map`
// names as where a file is used. Parsing thread.
struct ConfigLine {
  std::string file;
  int line = 0;
};
void set_config_line(std::string_view file, int line);
const ConfigLine& config_line();

// Every Ref of the process, in creation order. Built while the configuration loads (one
// thread); read and changed by the CLI afterwards, under the Refs' own mutexes.
class Registry {
 public:
  static Registry& global();
  // Forgets every Ref (a new configuration load; tests).
  void reset();
  // The Ref of `file`, created (flags, not loaded) when new; *created says which.
  // Error: HAProxy's text when the file is used with another number of columns.
  base::Result<std::shared_ptr<Ref>> file_ref(const std::string& file, bool map, bool* created);
  // A new Ref for an ACL line's patterns; `unique_id` >= 0 from `-u`.
  base::Result<std::shared_ptr<Ref>> inline_ref(int unique_id);
  // Gives ids to the Refs without one, in creation order, skipping the ids `-u` took.
  void finalize_ids();
  // `#<id>` or a file name; `map` picks `show map`'s list, else `show acl`'s.
  std::shared_ptr<Ref> find(std::string_view id_or_file, bool map) const;
  std::vector<std::shared_ptr<Ref>> list(bool map) const;

 private:
  std::vector<std::shared_ptr<Ref>> refs_;
};

}  // namespace sluice::pattern
