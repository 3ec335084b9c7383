// The maps' and ACLs' commands (HAProxy's map.c CLI): show, get, add, set, del, clear, prepare
// and commit, on `#<id>` or a file name, with `@<version>` where HAProxy takes one. Changes go
// through pattern::Ref, which republishes the compiled lists to every worker. As in HAProxy
// 3.5, every one of them needs the admin level.
#include <charconv>

#include <fmt/format.h>

#include "cli/builtin.h"
#include "pattern/pattern.h"

namespace sluice::cli {

namespace {

struct Kind {
  bool map;
  std::string_view name;     // "map" / "acl" in commands
  std::string_view title;    // "map" / "ACL" in answers
};
constexpr Kind kMap{true, "map", "map"};
constexpr Kind kAcl{false, "acl", "ACL"};

std::string unknown(const Kind& k) {
  return fmt::format("Unknown {} identifier. Please use #<id> or <file>.\n", k.title);
}

// `@<ver>` at words[i]: consumed (i advanced) and parsed; false on a malformed number.
bool take_version(const std::vector<std::string>& words, std::size_t& i, uint32_t* ver, bool* given) {
  *given = false;
  if (i >= words.size() || words[i].empty() || words[i][0] != '@') return true;
  const std::string& w = words[i];
  auto [p, ec] = std::from_chars(w.data() + 1, w.data() + w.size(), *ver);
  if (ec != std::errc() || p != w.data() + w.size()) return false;
  *given = true;
  ++i;
  return true;
}

// The list named by words[i] (`#<id>` or a file), or null with HAProxy's answer in *out.
std::shared_ptr<pattern::Ref> ref_at(const Kind& k, const std::vector<std::string>& words, std::size_t i,
                                     std::string* out) {
  auto ref = i < words.size() ? pattern::Registry::global().find(words[i], k.map) : nullptr;
  if (!ref) *out += unknown(k);
  return ref;
}

// `[@<ver>] <id>` from words[2] for clear and commit: false (answered) when malformed or
// when the identifier is missing.
bool version_and_id(const Kind& k, const std::vector<std::string>& words, std::size_t* i,
                    uint32_t* ver, bool* given, bool need_version, std::string* out) {
  *i = 2;
  if (!take_version(words, *i, ver, given)) {
    *out += "Invalid version number.\n";
    return false;
  }
  if (need_version && !*given) {
    *out += "Missing version number.\n";
    return false;
  }
  if (*i >= words.size()) {
    *out += fmt::format("Missing {} identifier.\n", k.title);
    return false;
  }
  return true;
}

std::string with_period(std::string msg) {
  if (!msg.empty() && msg.back() != '.') msg += '.';
  return msg + "\n";
}

void show(const Kind& k, const std::vector<std::string>& words, std::string* out) {
  std::size_t i = 2;
  uint32_t ver = 0;
  bool given = false;
  if (!take_version(words, i, &ver, &given)) {
    *out += "Invalid version number.\n";
    return;
  }
  auto& reg = pattern::Registry::global();
  if (i >= words.size()) {
    if (given) {
      *out += unknown(k);
      return;
    }
    *out += "# id (file) description\n";
    for (const auto& r : reg.list(k.map))
      *out += fmt::format("{} ({}) {}. curr_ver={} next_ver={} entry_cnt={}\n", r->id(), r->file(),
                          r->description(), r->curr_gen(), r->next_gen(), r->entry_count());
    return;
  }
  auto ref = reg.find(words[i], k.map);
  if (!ref) {
    *out += unknown(k);
    return;
  }
  *out += ref->show(given ? ver : ref->curr_gen());
}

void get(const Kind& k, const std::vector<std::string>& words, std::string* out) {
  if (words.size() < 4) {
    *out += fmt::format("Missing {} identifier and/or key.\n", k.title);
    return;
  }
  auto ref = pattern::Registry::global().find(words[2], k.map);
  if (!ref) {
    *out += unknown(k);
    return;
  }
  *out += ref->get(words[3]);
}

void add(const Kind& k, const CommandContext& ctx, const std::vector<std::string>& words, std::string* out) {
  std::size_t i = 2;
  uint32_t ver = 0;
  bool given = false;
  const std::string usage =
      k.map ? "'add map' expects three parameters (map identifier, key and value) or one parameter "
              "(map identifier) and a payload\n"
            : "'add acl' expects two parameters: ACL identifier and pattern.\n";
  if (!take_version(words, i, &ver, &given)) {
    *out += "Invalid version number.\n";
    return;
  }
  const std::size_t args = words.size() - i;
  const bool payload = k.map && args == 1 && !ctx.payload.empty();
  if (!payload && args < (k.map ? 3u : 2u)) {
    *out += usage;
    return;
  }
  auto ref = pattern::Registry::global().find(words[i], k.map);
  if (!ref) {
    *out += unknown(k);
    return;
  }
  if (!given) ver = ref->curr_gen();
  // A version no `prepare` made yet (HAProxy compares in the 32-bit wrapping space).
  if (given && static_cast<int32_t>(ver - ref->next_gen()) > 0) {
    *out += fmt::format("Version number in the future, please use 'prepare {}' before.\n", k.name);
    return;
  }
  if (!payload) {
    auto r = ref->add(ver, words[i + 1], k.map ? words[i + 2] : std::string());
    if (!r.ok()) *out += with_period(r.error().message);
    return;
  }
  // One `key value` per line; the value runs to the end of the line.
  std::string_view rest = ctx.payload;
  while (!rest.empty()) {
    auto lf = rest.find('\n');
    std::string_view line = rest.substr(0, lf);
    rest = lf == std::string_view::npos ? std::string_view() : rest.substr(lf + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty()) continue;
    auto sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos) {
      *out += usage;
      return;
    }
    std::string_view value = line.substr(sp);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    auto r = ref->add(ver, std::string(line.substr(0, sp)), std::string(value));
    if (!r.ok()) {
      *out += with_period(r.error().message);
      return;
    }
  }
}

void set(const std::vector<std::string>& words, std::string* out) {
  if (words.size() < 5) {
    *out += "'set map' expects three parameters: map identifier, key and value.\n";
    return;
  }
  auto ref = pattern::Registry::global().find(words[2], true);
  if (!ref) {
    // HAProxy 3.5 looks `#<id>` up among the ACLs' lists too, where no map entry is found.
    const bool acl = words[2].starts_with("#") && pattern::Registry::global().find(words[2], false);
    *out += acl ? std::string("entry not found.\n") : unknown(kMap);
    return;
  }
  auto r = ref->set(words[3], words[4]);
  if (!r.ok()) *out += with_period(r.error().message);
}

void del(const Kind& k, const std::vector<std::string>& words, std::string* out) {
  if (words.size() < 4) {
    *out += fmt::format("This command expects two parameters: {} identifier and key.\n", k.title);
    return;
  }
  auto ref = pattern::Registry::global().find(words[2], k.map);
  if (!ref) {
    *out += unknown(k);
    return;
  }
  auto r = ref->del(words[3]);
  if (!r.ok()) *out += with_period(r.error().message);
}

void clear(const Kind& k, const std::vector<std::string>& words, std::string* out) {
  std::size_t i = 0;
  uint32_t ver = 0;
  bool given = false;
  if (!version_and_id(k, words, &i, &ver, &given, false, out)) return;
  if (auto ref = ref_at(k, words, i, out)) ref->clear(given ? ver : ref->curr_gen());
}

void prepare(const Kind& k, const std::vector<std::string>& words, std::string* out) {
  if (auto ref = ref_at(k, words, 2, out)) *out += fmt::format("New version created: {}\n", ref->prepare());
}

void commit(const Kind& k, const std::vector<std::string>& words, std::string* out) {
  std::size_t i = 0;
  uint32_t ver = 0;
  bool given = false;
  if (!version_and_id(k, words, &i, &ver, &given, true, out)) return;
  auto ref = ref_at(k, words, i, out);
  if (!ref) return;
  auto r = ref->commit(ver);
  if (!r.ok()) *out += with_period(r.error().message);
}

}  // namespace

std::vector<Command> map_commands() {
  std::vector<Command> out;
  for (const Kind* kp : {&kAcl, &kMap}) {
    const Kind k = *kp;
    const std::string n(k.name);
    const bool m = k.map;
    out.push_back({{"add", n},
                   m ? "add map [@<ver>] <map> <key> <val>" : "add acl [@<ver>] <acl> <pattern>",
                   m ? "add a map entry (payload supported instead of key/val)" : "add an acl entry",
                   Level::kAdmin,
                   [k](const CommandContext& c, const std::vector<std::string>& w, std::string* o) {
                     add(k, c, w, o);
                   }});
    out.push_back({{"clear", n}, fmt::format("clear {0} [@<ver>] <{0}>", n),
                   fmt::format("clear the contents of this {}", n), Level::kAdmin,
                   [k](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                     clear(k, w, o);
                   }});
    out.push_back({{"commit", n}, fmt::format("commit {0} @<ver> <{0}>", n),
                   fmt::format("commit the {} at this version", m ? "map" : "ACL"), Level::kAdmin,
                   [k](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                     commit(k, w, o);
                   }});
    out.push_back({{"del", n}, fmt::format("del {0} <{0}> [<key>|#<ref>]", n),
                   fmt::format("delete {} entries matching <key>", n), Level::kAdmin,
                   [k](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                     del(k, w, o);
                   }});
    out.push_back({{"get", n}, fmt::format("get {0} <{0}> <value>", n),
                   m ? "report the keys and values matching a sample for a map"
                     : "report the patterns matching a sample for an ACL",
                   Level::kAdmin,
                   [k](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                     get(k, w, o);
                   }});
    out.push_back({{"prepare", n}, fmt::format("prepare {0} <{0}>", n),
                   fmt::format("prepare a new version for atomic {} replacement", m ? "map" : "ACL"),
                   Level::kAdmin,
                   [k](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                     prepare(k, w, o);
                   }});
    if (m)
      out.push_back({{"set", "map"}, "set map <map> [<key>|#<ref>] <value>", "modify a map entry",
                     Level::kAdmin,
                     [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                       set(w, o);
                     }});
    out.push_back({{"show", n}, m ? "show map [@<ver>] [map]" : "show acl [@<ver>] <acl>",
                   m ? "report available maps or dump a map's contents"
                     : "report available acls or dump an acl's contents",
                   Level::kAdmin,
                   [k](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                     show(k, w, o);
                   }});
  }
  return out;
}

}  // namespace sluice::cli
