// Refs (lists of entries with versions), their files, the CLI's changes and the registry.
#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "pattern/pattern.h"

namespace sluice::pattern {

// ---- Expr ----

Expr::Expr(std::shared_ptr<Ref> ref, const Kind& kind)
    : ref_(std::move(ref)), kind_(kind),
      index_(std::make_unique<base::Published<Index>>(
          std::make_unique<Index>(kind, std::vector<Item>{}, std::vector<std::unique_ptr<base::Regex>>{}),
          base::hazard::Domain::kPatterns)) {
  ref_->attach(this);
}

Expr::~Expr() { ref_->detach(this); }

bool Expr::tree() const { return Index::tree(kind_); }

void Expr::publish(std::vector<Item> items, std::vector<std::unique_ptr<base::Regex>> regexes) {
  index_->publish(std::make_unique<Index>(kind_, std::move(items), std::move(regexes)));
}

// ---- Ref ----

namespace {

// One line of a pattern file: leading blanks skipped; a comment or an empty line gives
// nothing. A map line is the key (up to the first blank; a backslash is not special) and the
// value (after the blanks, trailing blanks cut); an ACL line is the whole rest of the line.
bool split_line(std::string_view line, bool map, std::string_view* key, std::string_view* value) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  line.remove_prefix(i);
  if (line.empty() || line[0] == '#') return false;
  if (!map) {
    *key = line;
    *value = {};
    return true;
  }
  std::size_t k = 0;
  while (k < line.size() && line[k] != ' ' && line[k] != '\t') ++k;
  *key = line.substr(0, k);
  std::size_t v = k;
  while (v < line.size() && (line[v] == ' ' || line[v] == '\t')) ++v;
  std::string_view val = line.substr(v);
  while (!val.empty() && (val.back() == ' ' || val.back() == '\t')) val.remove_suffix(1);
  *value = val;
  return true;
}

// Parses one entry for `kind`; regexes are compiled into *re.
base::Result<void> compile_entry(const Kind& kind, std::string_view key, std::string_view value,
                                 Item& item, std::unique_ptr<base::Regex>* re) {
  auto k = parse_key(kind, key, item);
  if (!k.ok()) return k;
  if (kind.method == Method::kReg || kind.method == Method::kRegm) {
    auto r = std::make_unique<base::Regex>();
    std::string why;
    if (!r->compile(std::string(key), &why, kind.icase, kind.method == Method::kRegm))
      return base::Error::text(why);
    *re = std::move(r);
  }
  if (kind.value != ValueType::kNone) return parse_value(kind, value, item);
  return {};
}

}  // namespace

void Ref::push(std::string key, std::string value, uint32_t gen) {
  auto e = std::make_unique<Entry>();
  e->key = std::move(key);
  e->value = std::move(value);
  e->gen = gen;
  entries_.push_back(std::move(e));
}

base::Result<void> Ref::load_file() {
  std::ifstream in(file_, std::ios::binary);
  if (!in)
    return base::Error::text(fmt::format("failed to open pattern file <{}>", file_));
  std::string line;
  std::size_t n = 0;
  const bool map = flags_ & kMap;
  while (std::getline(in, line)) {
    ++n;
    std::string_view key, value;
    if (!split_line(line, map, &key, &value)) continue;
    push(std::string(key), std::string(value), 0);
    lines_.push_back(n);
  }
  return {};
}

std::string Ref::description() const {
  if (file_.empty()) return inline_desc_;
  std::string d = fmt::format("pattern loaded from file '{}'", file_);
  for (std::size_t i = 0; i < uses_.size(); ++i) d += (i ? ", by " : " used by ") + uses_[i];
  return d;
}

base::Result<void> Ref::build_locked(Expr& e, std::size_t* bad) const {
  std::vector<Item> items;
  std::vector<std::unique_ptr<base::Regex>> regexes;
  const Kind& kind = e.kind();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Entry& en = *entries_[i];
    if (en.gen != curr_gen_) continue;
    Item item;
    std::unique_ptr<base::Regex> re;
    auto r = compile_entry(kind, en.key, en.value, item, &re);
    if (!r.ok()) {
      if (bad) *bad = i < lines_.size() ? lines_[i] : 0;
      return r;
    }
    items.push_back(std::move(item));
    if (re) regexes.push_back(std::move(re));
  }
  e.publish(std::move(items), std::move(regexes));
  return {};
}

base::Result<void> Ref::compile(Expr& e, std::size_t* bad_line) {
  std::lock_guard<std::mutex> lock(mu_);
  return build_locked(e, bad_line);
}

void Ref::attach(Expr* e) {
  std::lock_guard<std::mutex> lock(mu_);
  exprs_.push_back(e);
}

void Ref::detach(Expr* e) {
  std::lock_guard<std::mutex> lock(mu_);
  exprs_.erase(std::remove(exprs_.begin(), exprs_.end(), e), exprs_.end());
}

base::Result<void> Ref::republish_locked() {
  for (Expr* e : exprs_) {
    auto r = build_locked(*e, nullptr);
    if (!r.ok()) return r;
  }
  return {};
}

base::Result<void> Ref::validate_locked(std::string_view key, std::string_view value) const {
  for (const Expr* e : exprs_) {
    Item item;
    std::unique_ptr<base::Regex> re;
    auto r = compile_entry(e->kind(), key, value, item, &re);
    if (!r.ok()) {
      // HAProxy answers a bad map value with "unable to parse 'v'." and a bad key with the
      // pattern's own reason.
      return r;
    }
  }
  return {};
}

base::Result<void> Ref::add(uint32_t gen, std::string key, std::string value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto v = validate_locked(key, value);
  if (!v.ok()) return v;
  push(std::move(key), std::move(value), gen);
  return gen == curr_gen_ ? republish_locked() : base::Result<void>{};
}

Ref::Entry* Ref::by_ptr(std::string_view text) {
  // `#<ptr>`: the address `show map` printed.
  text.remove_prefix(1);
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  uintptr_t p = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), p, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return nullptr;
  for (auto& e : entries_)
    if (reinterpret_cast<uintptr_t>(e.get()) == p) return e.get();
  return nullptr;
}

base::Result<void> Ref::set(std::string_view key_or_ptr, std::string_view value) {
  std::lock_guard<std::mutex> lock(mu_);
  // Only the value changes: it must read as every user's output type.
  for (const Expr* e : exprs_) {
    Item item;
    auto r = parse_value(e->kind(), value, item);
    if (!r.ok()) return r;
  }
  bool found = false;
  if (key_or_ptr.starts_with('#')) {
    if (Entry* e = by_ptr(key_or_ptr)) {
      e->value = std::string(value);
      found = true;
    }
  } else {
    for (auto& e : entries_) {
      if (e->gen != curr_gen_ || e->key != key_or_ptr) continue;
      e->value = std::string(value);
      found = true;
    }
  }
  if (!found) return base::Error::text("entry not found.");
  return republish_locked();
}

base::Result<void> Ref::del(std::string_view key_or_ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t before = entries_.size();
  if (key_or_ptr.starts_with('#')) {
    Entry* e = by_ptr(key_or_ptr);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [&](const auto& x) { return x.get() == e; }),
                   entries_.end());
  } else {
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [&](const auto& x) { return x->gen == curr_gen_ && x->key == key_or_ptr; }),
                   entries_.end());
  }
  if (entries_.size() == before) return base::Error::text("Key not found.");
  lines_.clear();
  return republish_locked();
}

void Ref::clear(uint32_t gen) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const auto& x) { return x->gen == gen; }),
                 entries_.end());
  lines_.clear();
  if (gen == curr_gen_) (void)republish_locked();
}

uint32_t Ref::prepare() {
  std::lock_guard<std::mutex> lock(mu_);
  return ++next_gen_;
}

base::Result<void> Ref::commit(uint32_t gen) {
  std::lock_guard<std::mutex> lock(mu_);
  // Versions between the current one and the last prepared one can be committed (HAProxy
  // compares them modulo 2^32).
  if (static_cast<int32_t>(gen - curr_gen_) < 0 || static_cast<int32_t>(next_gen_ - gen) < 0)
    return base::Error::text("Version number out of range.");
  curr_gen_ = gen;
  // The entries of older versions go; newer prepared ones stay.
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const auto& x) { return static_cast<int32_t>(x->gen - gen) < 0; }),
                 entries_.end());
  lines_.clear();
  return republish_locked();
}

std::string Ref::show(uint32_t gen) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& e : entries_) {
    if (e->gen != gen) continue;
    if (flags_ & kMap)
      out += fmt::format("{} {} {}\n", static_cast<const void*>(e.get()), e->key, e->value);
    else
      out += fmt::format("{} {}\n", static_cast<const void*>(e.get()), e->key);
  }
  return out;
}

std::string Ref::get(std::string_view text) const {
  std::vector<Expr*> exprs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    exprs = exprs_;
  }
  std::string out;
  const bool map = flags_ & kMap;
  for (const Expr* e : exprs) {
    const Kind& k = e->kind();
    out += fmt::format("type={}, case={}, ", method_name(k.method), k.icase ? "insensitive" : "sensitive");
    auto find = [&](const Index& idx, base::Regex::Groups* g) -> const Item* {
      if (k.method == Method::kIp) {
        std::string t(text);
        in_addr a4{};
        in6_addr a6{};
        if (inet_pton(AF_INET, t.c_str(), &a4) == 1) return idx.find_v4(a4);
        if (inet_pton(AF_INET6, t.c_str(), &a6) == 1) return idx.find_v6(a6);
        return nullptr;
      }
      if (k.method == Method::kInt) {
        int64_t v = 0;
        auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || p == text.data()) return nullptr;
        return idx.find_int(v);
      }
      return idx.find_str(text, g);
    };
    // Known before the lookup: nothing may read a snapshot of this domain inside it (a second
    // Guard would give up the lookup's hazard slot while `it` is in use).
    const char* idx = e->tree() ? "tree" : "list";
    bool found = e->lookup(find, [&](const Item& it, const base::Regex::Groups&) {
      if (!map) {
        out += fmt::format("match=yes, idx={}, pattern=\"{}\"\n", idx, it.key);
        return;
      }
      std::string_view vt = "str";
      if (k.value == ValueType::kInt) vt = "sint";
      if (k.value == ValueType::kIp) vt = it.vaddr.family == AF_INET6 ? "ipv6" : "ipv4";
      out += fmt::format("found=yes, idx={}, key=\"{}\", value=\"{}\", type=\"{}\"\n", idx, it.key,
                         it.value, vt);
    });
    if (!found) out += map ? "found=no\n" : "match=no\n";
  }
  return out;
}

uint32_t Ref::curr_gen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return curr_gen_;
}

uint32_t Ref::next_gen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_gen_;
}

std::size_t Ref::entry_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  // HAProxy counts each entry once per expression it is compiled into.
  return entries_.size() * std::max<std::size_t>(exprs_.size(), file_.empty() ? 1 : 0);
}

// ---- Registry ----

namespace {
thread_local ConfigLine t_config_line;
}

void set_config_line(std::string_view file, int line) {
  t_config_line.file.assign(file);
  t_config_line.line = line;
}

const ConfigLine& config_line() { return t_config_line; }

Registry& Registry::global() {
  static Registry r;
  return r;
}

void Registry::reset() { refs_.clear(); }

base::Result<std::shared_ptr<Ref>> Registry::file_ref(const std::string& file, bool map, bool* created) {
  for (const auto& r : refs_) {
    if (r->file() != file) continue;
    const bool is_map = r->flags() & Ref::kMap;
    if (is_map != map)
      return base::Error::text(fmt::format(
          "The file \"{}\" is already used as {} column file and cannot be used by as {} column file.",
          file, is_map ? "two" : "one", map ? "two" : "one"));
    *created = false;
    return r;
  }
  auto r = std::make_shared<Ref>(file, map ? Ref::kMap : Ref::kAcl);
  refs_.push_back(r);
  *created = true;
  return r;
}

base::Result<std::shared_ptr<Ref>> Registry::inline_ref(int unique_id) {
  if (unique_id >= 0) {
    for (const auto& r : refs_)
      if (r->id() == unique_id)
        return base::Error::text(fmt::format("the unique id '{}' is already used", unique_id));
  }
  auto r = std::make_shared<Ref>(std::string(), Ref::kAcl);
  r->set_id(unique_id);
  refs_.push_back(r);
  return r;
}

void Registry::finalize_ids() {
  int next = 0;
  auto taken = [&](int id) {
    return std::any_of(refs_.begin(), refs_.end(), [&](const auto& r) { return r->id() == id; });
  };
  for (const auto& r : refs_) {
    if (r->id() >= 0) continue;
    while (taken(next)) ++next;
    r->set_id(next++);
  }
}

std::shared_ptr<Ref> Registry::find(std::string_view id_or_file, bool map) const {
  const uint8_t want = map ? Ref::kMap : Ref::kAcl;
  if (id_or_file.starts_with('#')) {
    int id = -1;
    auto s = id_or_file.substr(1);
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
    if (ec != std::errc() || end != s.data() + s.size()) return nullptr;
    for (const auto& r : refs_)
      if (r->id() == id && (r->flags() & want)) return r;
    return nullptr;
  }
  for (const auto& r : refs_)
    if (!r->file().empty() && r->file() == id_or_file && (r->flags() & want)) return r;
  return nullptr;
}

std::vector<std::shared_ptr<Ref>> Registry::list(bool map) const {
  const uint8_t want = map ? Ref::kMap : Ref::kAcl;
  std::vector<std::shared_ptr<Ref>> out;
  for (const auto& r : refs_)
    if (r->flags() & want) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->id() < b->id(); });
  return out;
}

}  // namespace sluice::pattern
