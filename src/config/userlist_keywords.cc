// `userlist <name>` sections: `user <name> [password <hash> | insecure-password <pass>]
// [groups <g>,...]` and `group <name> [users <u>,...]`, with HAProxy 3.5's messages (checked with
// `haproxy -c`). A duplicated userlist, user or group is ignored with a warning, as HAProxy
// does. Names in `groups`/`users` are resolved once every file is read (auth::Registry::finish),
// so a group may be named before its line.
#include <fmt/format.h>

#include "auth/userlist.h"
#include "config/proxy_keywords.h"

namespace sluice::config::proxy_kw {

namespace {

std::vector<std::string> comma_list(const std::string& v) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= v.size()) {
    std::size_t comma = v.find(',', start);
    std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// A hash that libcrypt does not know never matches (HAProxy 3.5 on libxcrypt accepts it
// silently; sluice says so), and one that takes 10 ms or more to check is HAProxy's warning:
// every request that carries credentials pays it.
void check_hash(Parser& p, const std::string& where, const auth::User& u) {
  uint64_t ms = 0;
  if (!auth::probe_hash(u.pass, &ms)) {
    p.warning(fmt::format("{}the encrypted password used for user '{}' is not supported by "
                          "crypt(3): this user can never be authenticated.", where, u.name));
  } else if (ms >= 10) {
    p.warning(fmt::format("{}the hash algorithm used for this password takes {} milliseconds to "
                          "verify, which can have devastating performance and stability impacts. "
                          "Please hash this password using a lighter algorithm (one that is "
                          "compatible with web usage).", where, ms));
  }
}

}  // namespace

void userlist_section(Parser& p, Line& l) {
  p.cur_userlist.reset();
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("parsing [{}:{}]: 'userlist' expects <name> as arguments.",
                                  l.loc.file, l.loc.line)};
  auto ul = auth::Registry::global().define(l.args[1], fmt::format("{}:{}", l.loc.file, l.loc.line));
  if (!ul) {
    p.warning(fmt::format("parsing [{}:{}]: ignoring duplicated userlist '{}'.", l.loc.file,
                          l.loc.line, l.args[1]));
    return;
  }
  p.cur_userlist = std::move(ul);
}

void userlist_line(Parser& p, Line& l) {
  const std::string where = fmt::format("parsing [{}:{}]: ", l.loc.file, l.loc.line);
  const std::string& kw = l.args[0];
  auth::Userlist* ul = p.cur_userlist.get();
  if (kw == "group") {
    if (l.args.size() < 2 || l.args[1].empty())
      throw ConfigError{where + "'group' expects <name> as arguments."};
    std::vector<std::string> users;
    for (std::size_t i = 2; i < l.args.size(); i += 2) {
      if (l.args[i] != "users" || i + 1 >= l.args.size())
        throw ConfigError{where + "'group' only supports 'users' option."};
      auto more = comma_list(l.args[i + 1]);
      users.insert(users.end(), more.begin(), more.end());
    }
    if (ul && !ul->add_group(l.args[1], std::move(users)))
      p.warning(fmt::format("{}ignoring duplicated group '{}' in userlist '{}'.", where, l.args[1],
                            ul->name()));
    return;
  }
  if (kw == "user") {
    if (l.args.size() < 2 || l.args[1].empty())
      throw ConfigError{where + "'user' expects <name> as arguments."};
    auth::User u;
    u.name = l.args[1];
    std::vector<std::string> groups;
    for (std::size_t i = 2; i < l.args.size(); i += 2) {
      const std::string& opt = l.args[i];
      if ((opt != "password" && opt != "insecure-password" && opt != "groups") ||
          i + 1 >= l.args.size())
        throw ConfigError{where + "'user' only supports 'password', 'insecure-password' and "
                                  "'groups' options."};
      if (opt == "groups") {
        auto more = comma_list(l.args[i + 1]);
        groups.insert(groups.end(), more.begin(), more.end());
      } else {
        u.pass = l.args[i + 1];
        u.has_pass = true;
        u.insecure = opt == "insecure-password";
        if (!u.insecure) check_hash(p, where, u);
      }
    }
    if (ul && !ul->add_user(std::move(u), std::move(groups)))
      p.warning(fmt::format("{}ignoring duplicated user '{}' in userlist '{}'.", where, l.args[1],
                            ul->name()));
    return;
  }
  throw ConfigError{fmt::format("{}unknown keyword '{}' in 'userlist' section", where, kw)};
}

}  // namespace sluice::config::proxy_kw
