// Variables: names, per-scope stores, the shared proc scope.
#include "sample/vars.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"

namespace sluice::sample {

std::string_view scope_name(Scope s) {
  switch (s) {
    case Scope::kProc: return "proc";
    case Scope::kSess: return "sess";
    case Scope::kTxn: return "txn";
    case Scope::kReq: return "req";
    case Scope::kRes: return "res";
    case Scope::kCheck: return "check";
    case Scope::kParent: return "parent";
  }
  return "?";
}

VarNames& VarNames::global() {
  static VarNames names;
  return names;
}

bool VarNames::parse(std::string_view text, VarRef* out, std::string* error) {
  struct ScopeName {
    std::string_view prefix;
    Scope scope;
  };
  static constexpr ScopeName kScopes[] = {
      {"proc.", Scope::kProc},    {"sess.", Scope::kSess},    {"txn.", Scope::kTxn},
      {"req.", Scope::kReq},      {"res.", Scope::kRes},      {"check.", Scope::kCheck},
      {"psess.", Scope::kParent}, {"ptxn.", Scope::kParent},  {"preq.", Scope::kParent},
      {"pres.", Scope::kParent},
  };
  for (const auto& sc : kScopes) {
    if (text.size() > sc.prefix.size() && text.substr(0, sc.prefix.size()) == sc.prefix) {
      std::string_view rest = text.substr(sc.prefix.size());
      bool ok = true;
      for (char c : rest)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) ok = false;
      if (!ok) {
        *error = fmt::format("invalid variable name '{}'. Only characters 'a-Z', 'A-Z', '0-9', "
                             "'.' and '_' are supported", text);
        return false;
      }
      out->scope = sc.scope;
      scopes_used_ |= 1u << static_cast<unsigned>(sc.scope);
      uint32_t id = find(text);
      if (!id) {
        names_.emplace_back(text);
        id = static_cast<uint32_t>(names_.size() - 1);
      }
      out->id = id;
      return true;
    }
  }
  *error = fmt::format("invalid variable name '{}'. A variable name must start with its scope. "
                       "The scope can be 'proc', '(p)sess', '(p)txn', '(p)req', '(p)res' or "
                       "'check'", text);
  return false;
}

uint32_t VarNames::find(std::string_view full_name) const {
  for (std::size_t i = 1; i < names_.size(); ++i)
    if (names_[i] == full_name) return static_cast<uint32_t>(i);
  return 0;
}

std::string_view VarNames::name(uint32_t id) const {
  return id < names_.size() ? std::string_view(names_[id]) : std::string_view();
}

Sample VarValue::sample() const {
  Sample s;
  s.type = type;
  s.sint = sint;
  s.v4 = v4;
  s.v6 = v6;
  if (type == Type::kStr || type == Type::kBin || type == Type::kMeth) s.str = data;
  return s;
}

bool parse_set_cond(std::string_view w, uint16_t* bits) {
  struct C {
    std::string_view name;
    SetCond bit;
  };
  static constexpr C kConds[] = {
      {"ifexists", kIfExists}, {"ifnotexists", kIfNotExists}, {"ifempty", kIfEmpty},
      {"ifnotempty", kIfNotEmpty}, {"ifset", kIfSet}, {"ifnotset", kIfNotSet},
      {"ifgt", kIfGt}, {"iflt", kIfLt},
  };
  for (const auto& c : kConds) {
    if (w == c.name) {
      *bits |= c.bit;
      return true;
    }
  }
  return false;
}

namespace {

std::size_t value_size(const Sample& s) {
  return (s.type == Type::kStr || s.type == Type::kBin || s.type == Type::kMeth) ? s.str.size() : 0;
}

bool is_empty(const Sample& s) {
  return (s.type == Type::kStr || s.type == Type::kBin) && s.str.empty();
}

// The set-var conditions against the current value (null: not set).
bool conds_allow(uint16_t conds, const VarValue* cur, const Sample& s) {
  if ((conds & (kIfExists | kIfSet)) && !cur) return false;
  if ((conds & (kIfNotExists | kIfNotSet)) && cur) return false;
  if ((conds & kIfEmpty) && !is_empty(s)) return false;
  if ((conds & kIfNotEmpty) && is_empty(s)) return false;
  if (conds & (kIfGt | kIfLt)) {
    // HAProxy 3.5: ifgt sets only when the current value is greater than the new one (it can
    // only lower it), iflt only when it is lower. Only integers compare; a variable that is not
    // set, or is not an integer, is replaced.
    if (cur && (cur->type == Type::kSint || cur->type == Type::kBool) &&
        (s.type == Type::kSint || s.type == Type::kBool)) {
      if ((conds & kIfGt) && !(cur->sint > s.sint)) return false;
      if ((conds & kIfLt) && !(cur->sint < s.sint)) return false;
    }
  }
  return true;
}

}  // namespace

namespace {
std::atomic<std::size_t> g_process_used{0};

bool process_counted() {
  const VarLimits& l = var_limits();
  return l.proc || l.global;
}
}  // namespace

bool VarAccount::process_fits(std::size_t delta) {
  const VarLimits& l = var_limits();
  if (!l.proc && !l.global) return true;
  std::size_t now = g_process_used.load(std::memory_order_relaxed) + delta;
  return (!l.proc || now <= l.proc) && (!l.global || now <= l.global);
}

void VarAccount::process_add(std::ptrdiff_t delta) {
  if (process_counted()) g_process_used.fetch_add(static_cast<std::size_t>(delta), std::memory_order_relaxed);
}

std::size_t VarAccount::process_used() { return g_process_used.load(std::memory_order_relaxed); }

bool VarAccount::fits(std::size_t delta) const {
  for (const VarAccount* a = this; a; a = a->up_)
    if (a->max_ && a->used_ + delta > a->max_) return false;
  return process_fits(delta);
}

void VarAccount::add(std::ptrdiff_t delta) {
  for (VarAccount* a = this; a; a = a->up_) a->used_ += static_cast<std::size_t>(delta);
  process_add(delta);
}

VarStore::~VarStore() { refund(used_); }

bool VarStore::charge(std::size_t old_size, std::size_t new_size) {
  if (max_size_ && used_ - old_size + new_size > max_size_) return false;
  if (new_size > old_size) {
    std::size_t grow = new_size - old_size;
    if (account_ ? !account_->fits(grow) : !VarAccount::process_fits(grow)) return false;
  }
  auto delta = static_cast<std::ptrdiff_t>(new_size) - static_cast<std::ptrdiff_t>(old_size);
  if (delta) {
    if (account_) account_->add(delta);
    else VarAccount::process_add(delta);
  }
  return true;
}

void VarStore::refund(std::size_t size) {
  if (!size) return;
  if (account_) account_->add(-static_cast<std::ptrdiff_t>(size));
  else VarAccount::process_add(-static_cast<std::ptrdiff_t>(size));
  used_ -= size;
}

const VarValue* VarStore::get(uint32_t id) const {
  for (const auto& e : entries_)
    if (e.id == id) return &e.value;
  return nullptr;
}

bool VarStore::set(uint32_t id, const Sample& s, uint16_t conds) {
  if (!id || s.type == Type::kAny) return false;
  Entry* slot = nullptr;
  Entry* free_slot = nullptr;
  for (auto& e : entries_) {
    if (e.id == id) slot = &e;
    else if (!e.id && !free_slot) free_slot = &e;
  }
  const VarValue* cur = slot ? &slot->value : nullptr;
  if (conds && !conds_allow(conds, cur, s)) return false;
  std::size_t old_size = cur ? kVarOverhead + value_size(cur->sample()) : 0;
  std::size_t new_size = kVarOverhead + value_size(s);
  if (!charge(old_size, new_size)) return false;
  if (!slot) {
    if (!free_slot) {
      entries_.emplace_back();
      free_slot = &entries_.back();
    }
    slot = free_slot;
    slot->id = id;
    ++count_;
  }
  VarValue& v = slot->value;
  v.type = s.type;
  v.sint = s.sint;
  v.v4 = s.v4;
  v.v6 = s.v6;
  if (s.type == Type::kStr || s.type == Type::kBin || s.type == Type::kMeth)
    v.data.assign(s.str.data(), s.str.size());
  else
    v.data.clear();
  used_ = used_ - old_size + new_size;
  return true;
}

void VarStore::unset(uint32_t id) {
  for (auto& e : entries_) {
    if (e.id == id) {
      refund(kVarOverhead + value_size(e.value.sample()));
      e.id = 0;
      e.value.data.clear();
      --count_;
      return;
    }
  }
}

void VarStore::clear_values() {
  for (auto& e : entries_) {
    e.id = 0;
    e.value.data.clear();
  }
  refund(used_);
  count_ = 0;
}

ProcVars& ProcVars::instance() {
  static ProcVars v;
  return v;
}

bool ProcVars::get(uint32_t id, Sample& out, Scratch& sc) const {
  std::shared_lock lock(mu_);
  const VarValue* v = store_.get(id);
  if (!v) return false;
  out = v->sample();
  if (out.type == Type::kStr || out.type == Type::kBin || out.type == Type::kMeth) {
    std::string& b = sc.next();
    b = v->data;
    out.str = b;
  }
  return true;
}

namespace {
// dump()'s fields: the bytes in hex, "-" for none (fields are separated by spaces).
std::string hex_field(const void* p, std::size_t n) {
  return n ? base::hex_encode(std::string_view(static_cast<const char*>(p), n)) : "-";
}

bool from_hex_field(std::string_view h, std::string* out) {
  if (h == "-") {
    out->clear();
    return true;
  }
  return base::hex_decode(h, out);
}
}  // namespace

std::string ProcVars::dump() const {
  std::string out;
  for_each([&](uint32_t id, const VarValue& v) {
    out += fmt::format("{} {} {} {} {} {}\n", VarNames::global().name(id), static_cast<int>(v.type),
                       v.sint, hex_field(&v.v4, sizeof v.v4), hex_field(&v.v6, sizeof v.v6),
                       hex_field(v.data.data(), v.data.size()));
  });
  return out;
}

int ProcVars::restore(std::string_view text) {
  int n = 0;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::vector<std::string_view> f;
    while (!line.empty()) {
      std::size_t sp = line.find(' ');
      f.push_back(line.substr(0, sp));
      line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    }
    if (f.size() != 6 || !f[0].starts_with("proc.")) continue;
    VarRef ref;
    std::string err;
    if (!VarNames::global().parse(f[0], &ref, &err) || ref.scope != Scope::kProc) continue;
    const int type = std::atoi(std::string(f[1]).c_str());
    if (type <= static_cast<int>(Type::kAny) || type > static_cast<int>(Type::kMeth)) continue;
    std::string v4, v6, data;
    if (!from_hex_field(f[3], &v4) || !from_hex_field(f[4], &v6) || !from_hex_field(f[5], &data)) continue;
    Sample s;
    s.type = static_cast<Type>(type);
    s.sint = std::strtoll(std::string(f[2]).c_str(), nullptr, 10);
    if (v4.size() == sizeof s.v4) std::memcpy(&s.v4, v4.data(), sizeof s.v4);
    if (v6.size() == sizeof s.v6) std::memcpy(&s.v6, v6.data(), sizeof s.v6);
    s.str = data;
    n += set(ref.id, s) ? 1 : 0;
  }
  return n;
}

bool ProcVars::set(uint32_t id, const Sample& s, uint16_t conds) {
  std::unique_lock lock(mu_);
  return store_.set(id, s, conds);
}

void ProcVars::unset(uint32_t id) {
  std::unique_lock lock(mu_);
  store_.unset(id);
}

void ProcVars::set_max_size(std::size_t bytes) {
  std::unique_lock lock(mu_);
  store_.set_max_size(bytes);
}

VarLimits& var_limits() {
  static VarLimits l;
  return l;
}

}  // namespace sluice::sample
