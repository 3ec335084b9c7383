#pragma once
// Userlists (HAProxy's `userlist` sections): users with a crypt(3) hash or a plain password,
// and groups, checked against the Basic credentials of a request (`http_auth(<userlist>)`,
// `http_auth_group(<userlist>)`, `http-request auth`, `stats http-request auth`).
//
// A userlist is built while the configuration is read and never changes afterwards: workers
// read it without a lock. Expressions may name a userlist before its section (HAProxy resolves
// the names once every file is read): Registry hands out the userlist of a name at once and
// fills it when its section comes; finish() then reports the names that never came.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"

namespace sluice::auth {

// An Authorization field's value, HAProxy's way: the scheme (case-insensitive) up to the first
// blank, then the credentials after the blanks. `Basic <base64 of user:password>` gives kBasic
// with the user and the password; `Bearer <token>` kBearer with the token; anything else (another
// scheme, base64 that does not decode, no colon) kNone.
struct Credentials {
  enum class Method : uint8_t { kNone, kBasic, kBearer };
  Method method = Method::kNone;
  std::string user, pass;     // kBasic
  std::string_view token;     // kBearer: in `value`
};
Credentials parse_authorization(std::string_view value);

struct User {
  std::string name;
  std::string pass;            // a crypt(3) hash, or the password itself when insecure
  bool has_pass = false;       // `user <name>` alone never authenticates
  bool insecure = false;       // `insecure-password`
  std::vector<uint32_t> groups;   // indexes in Userlist::groups(), resolved by finish()
};

// What checking a password against `hash` costs: false when `hash` is no hash libcrypt can
// produce (such a user never logs in), else true with the time one check took in *ms.
bool probe_hash(const std::string& hash, uint64_t* ms);

class Userlist {
 public:
  explicit Userlist(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  bool defined() const { return defined_; }

  // Whether `pass` is `user`'s password: the user exists, has one, and crypt(3) of `pass`
  // with the stored hash as setting gives the hash again (or, insecure, they are equal).
  // Compared in constant time. Any thread.
  const User* check(std::string_view user, std::string_view pass) const;
  const User* find(std::string_view user) const;
  int group_index(std::string_view group) const;   // -1: no such group
  bool in_group(const User& u, uint32_t group) const;
  const std::vector<std::string>& groups() const { return groups_; }
  const std::vector<User>& users() const { return users_; }

  // ---- building (the configuration's thread) ----
  // False when the name is already there (HAProxy ignores the line with a warning).
  bool add_user(User u, std::vector<std::string> group_names);
  bool add_group(std::string name, std::vector<std::string> user_names);
  void set_defined(std::string where) { defined_ = true; where_ = std::move(where); }
  const std::string& where() const { return where_; }
  // Links groups and users both ways; errors are HAProxy's ("userlist 'L': no such user 'b'
  // specified in group 'G'").
  base::Result<void> resolve();

 private:
  std::string name_;
  std::string where_;   // "file:line" of the section
  bool defined_ = false;
  std::vector<User> users_;
  std::vector<std::vector<std::string>> user_groups_;    // as written, per user
  std::vector<std::string> groups_;
  std::vector<std::vector<std::string>> group_users_;    // as written, per group
  std::unordered_map<std::string, uint32_t> by_name_;
};

// The userlists of the configuration being read. One per process, reset for every load.
class Registry {
 public:
  static Registry& global();
  void reset();
  // The userlist called `name`, made (undefined) on first use. `where` ("parsing [f:l]")
  // locates the use for finish()'s message, `what` names it ("arg 1 of ACL keyword
  // 'http_auth'").
  std::shared_ptr<Userlist> use(std::string_view name, std::string where, std::string what);
  // A `userlist <name>` section: null when one of that name was defined already (HAProxy then
  // ignores the second section with a warning; its lines go nowhere).
  std::shared_ptr<Userlist> define(std::string_view name, std::string where);
  // An `http_auth_group(<userlist>)` ACL naming `groups`, checked by finish().
  void require_groups(std::shared_ptr<Userlist> ul, std::vector<std::string> groups,
                      std::string where, std::string what);
  // Resolves every userlist and checks every use; the errors, one a line, without a final
  // newline (empty when fine).
  std::vector<std::string> finish();
  std::shared_ptr<const Userlist> find(std::string_view name) const;

 private:
  struct Use {
    std::shared_ptr<Userlist> ul;
    std::string where, what;
    std::vector<std::string> groups;
    bool groups_check = false;
  };
  std::unordered_map<std::string, std::shared_ptr<Userlist>> lists_;
  std::vector<Use> uses_;
};

}  // namespace sluice::auth
