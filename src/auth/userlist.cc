// Userlists: the password check (crypt(3) through libxcrypt's reentrant crypt_rn) and the
// registry that ties names in expressions to sections.
#include "auth/userlist.h"

#include <crypt.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "base/strings.h"

namespace sluice::auth {

namespace {

using base::iequals;

// Equal strings, in a time that depends on their lengths only.
bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// crypt_rn's work area is some 32 KiB: one per thread, made on the first check.
crypt_data& crypt_area() {
  thread_local std::unique_ptr<crypt_data> area;
  if (!area) area = std::make_unique<crypt_data>();   // value-initialised: zeroed, as required
  return *area;
}

}  // namespace

Credentials parse_authorization(std::string_view v) {
  Credentials c;
  std::size_t sp = v.find_first_of(" \t");
  if (sp == std::string_view::npos) return c;
  std::string_view scheme = v.substr(0, sp);
  std::string_view rest = v.substr(sp);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  if (iequals(scheme, "bearer")) {
    c.method = Credentials::Method::kBearer;
    c.token = rest;
    return c;
  }
  if (!iequals(scheme, "basic")) return c;
  std::string plain;
  if (!base::base64_decode(rest, &plain)) return c;
  std::size_t colon = plain.find(':');
  if (colon == std::string::npos) return c;
  c.method = Credentials::Method::kBasic;
  c.user = plain.substr(0, colon);
  c.pass = plain.substr(colon + 1);
  return c;
}

bool probe_hash(const std::string& hash, uint64_t* ms) {
  auto t0 = std::chrono::steady_clock::now();
  const char* out = crypt_rn("", hash.c_str(), &crypt_area(), static_cast<int>(sizeof(crypt_data)));
  auto t1 = std::chrono::steady_clock::now();
  *ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(t1 - t0).count());
  // A hash of that method has the length of what crypt gives with it as setting: "notahash"
  // is a DES setting (salt "no") whose hashes have 13 characters, so it is none.
  return out != nullptr && std::strlen(out) == hash.size();
}

const User* Userlist::find(std::string_view user) const {
  auto it = by_name_.find(std::string(user));
  return it == by_name_.end() ? nullptr : &users_[it->second];
}

const User* Userlist::check(std::string_view user, std::string_view pass) const {
  const User* u = find(user);
  if (!u || !u->has_pass) return nullptr;
  if (u->insecure) return same_secret(u->pass, pass) ? u : nullptr;
  std::string phrase(pass);
  const char* hashed = crypt_rn(phrase.c_str(), u->pass.c_str(), &crypt_area(),
                                static_cast<int>(sizeof(crypt_data)));
  std::memset(phrase.data(), 0, phrase.size());
  if (!hashed) return nullptr;   // not a hash libcrypt knows: never matches
  return same_secret(u->pass, hashed) ? u : nullptr;
}

int Userlist::group_index(std::string_view group) const {
  for (std::size_t i = 0; i < groups_.size(); ++i)
    if (groups_[i] == group) return static_cast<int>(i);
  return -1;
}

bool Userlist::in_group(const User& u, uint32_t group) const {
  return std::find(u.groups.begin(), u.groups.end(), group) != u.groups.end();
}

bool Userlist::add_user(User u, std::vector<std::string> group_names) {
  if (by_name_.count(u.name)) return false;
  by_name_.emplace(u.name, static_cast<uint32_t>(users_.size()));
  users_.push_back(std::move(u));
  user_groups_.push_back(std::move(group_names));
  return true;
}

bool Userlist::add_group(std::string name, std::vector<std::string> user_names) {
  if (group_index(name) >= 0) return false;
  groups_.push_back(std::move(name));
  group_users_.push_back(std::move(user_names));
  return true;
}

base::Result<void> Userlist::resolve() {
  for (auto& u : users_) u.groups.clear();
  auto join = [](User& u, uint32_t g) {
    if (std::find(u.groups.begin(), u.groups.end(), g) == u.groups.end()) u.groups.push_back(g);
  };
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (const auto& name : group_users_[g]) {
      auto it = by_name_.find(name);
      if (it == by_name_.end())
        return base::Error::text(fmt::format("userlist '{}': no such user '{}' specified in group '{}'",
                                       name_, name, groups_[g]));
      join(users_[it->second], static_cast<uint32_t>(g));
    }
  }
  for (std::size_t i = 0; i < users_.size(); ++i) {
    for (const auto& name : user_groups_[i]) {
      int g = group_index(name);
      if (g < 0)
        return base::Error::text(fmt::format("userlist '{}': no such group '{}' specified in user '{}'",
                                       name_, name, users_[i].name));
      join(users_[i], static_cast<uint32_t>(g));
    }
  }
  return {};
}

Registry& Registry::global() {
  static Registry r;
  return r;
}

void Registry::reset() {
  lists_.clear();
  uses_.clear();
}

std::shared_ptr<Userlist> Registry::use(std::string_view name, std::string where,
                                        std::string what) {
  auto& slot = lists_[std::string(name)];
  if (!slot) slot = std::make_shared<Userlist>(std::string(name));
  uses_.push_back(Use{slot, std::move(where), std::move(what), {}, false});
  return slot;
}

std::shared_ptr<Userlist> Registry::define(std::string_view name, std::string where) {
  auto& slot = lists_[std::string(name)];
  if (!slot) slot = std::make_shared<Userlist>(std::string(name));
  if (slot->defined()) return nullptr;
  slot->set_defined(std::move(where));
  return slot;
}

void Registry::require_groups(std::shared_ptr<Userlist> ul, std::vector<std::string> groups,
                              std::string where, std::string what) {
  uses_.push_back(Use{std::move(ul), std::move(where), std::move(what), std::move(groups), true});
}

std::vector<std::string> Registry::finish() {
  std::vector<std::string> errors;
  std::vector<std::shared_ptr<Userlist>> sorted;
  for (auto& [name, ul] : lists_)
    if (ul->defined()) sorted.push_back(ul);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a->name() < b->name(); });
  for (auto& ul : sorted) {
    auto r = ul->resolve();
    if (!r.ok()) errors.push_back(fmt::format("parsing [{}]: {}.", ul->where(), r.error().message));
  }
  for (const auto& u : uses_) {
    if (!u.ul->defined()) {
      errors.push_back(fmt::format("{}: unable to find userlist '{}' referenced in {}.", u.where,
                                   u.ul->name(), u.what));
      continue;
    }
    if (!u.groups_check) continue;
    if (u.groups.empty()) errors.push_back(fmt::format("{}: {}: no groups specified.", u.where, u.what));
    for (const auto& g : u.groups)
      if (u.ul->group_index(g) < 0)
        errors.push_back(fmt::format("{}: {}: invalid group '{}'.", u.where, u.what, g));
  }
  return errors;
}

std::shared_ptr<const Userlist> Registry::find(std::string_view name) const {
  auto it = lists_.find(std::string(name));
  if (it == lists_.end() || !it->second->defined()) return nullptr;
  return it->second;
}

}  // namespace sluice::auth
