#include "config/loader.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "auth/userlist.h"
#include "base/host.h"
#include "base/regex.h"
#include "base/version.h"
#include "config/preprocessor_condition.h"
#include "config/parser.h"
#include "config/tokenizer.h"
#include "pattern/pattern.h"

namespace sluice::config {

namespace {

struct SourceFile {
  std::string name;
  std::string text;
};

LoadResult run(const std::vector<SourceFile>& files, const LoadOptions& options,
               const DiagnosticSink& sink, bool apply_env) {
  LoadResult result;
  Parser p(options, sink);
  // Pattern files belong to one configuration: a new load reads them afresh.
  pattern::Registry::global().reset();
  auth::Registry::global().reset();
  try {
    p.env.set("HAPROXY_BRANCH", base::kHaproxyCompatVersion, true);
    p.env.set("HAPROXY_STARTUP_VERSION", base::kVersion, false);
    p.env.unset("HAPROXY_CFGFILES");
    // HAProxy's order is -L, then `localpeer` (a pass-1 keyword, which refuses to change a
    // name already set), then the host name.
    p.global.localpeer = options.localpeer.empty() ? base::host_name() : options.localpeer;
    p.localpeer_locked = !options.localpeer.empty();
    p.env.set("HAPROXY_LOCALPEER", p.global.localpeer, true);
    // Two passes as HAProxy: the first runs only the env keywords of `global`, so that a
    // variable set late in `global` is already visible to earlier lines in the second.
    for (int pass = 1; pass <= 2 && !p.aborted() && p.fatals() == 0; ++pass) {
      if (pass == 2) {
        std::string names;
        for (const auto& f : files) names += (names.empty() ? "" : ";") + f.name;
        p.env.set("HAPROXY_CFGFILES", names, true);
        p.env.set("HAPROXY_LOCALPEER", p.global.localpeer, true);
        // Section order is judged afresh in the full pass: pass 1 saw every section already.
        p.seen_non_global = false;
      }
      for (const auto& f : files) {
        p.parse_file(f.text, f.name, pass);
        if (p.aborted()) break;
      }
    }
    if (p.fatals() > 0) {
      if (!p.aborted()) p.alert("Fatal errors found in configuration.");
    } else {
      ConfigModel m;
      for (const auto& f : files) m.files.push_back(f.name);
      if (p.finish(&m)) result.model = std::move(m);
      if (result.model) pattern::Registry::global().finalize_ids();
    }
    if (apply_env && result.model) p.env.apply_to_process();
  } catch (const std::exception& e) {
    p.alert(fmt::format("internal error while loading the configuration: {}", e.what()));
    result.model.reset();
  } catch (...) {
    p.alert("internal error while loading the configuration.");
    result.model.reset();
  }
  result.alerts = p.alerts();
  result.warnings = p.warnings();
  return result;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

LoadResult load(const LoadOptions& options, const DiagnosticSink& sink) {
  try {
    std::vector<SourceFile> files;
    for (const auto& path : options.paths) {
      struct stat st {};
      if (stat(path.c_str(), &st) != 0) {
        int err = errno;
        LoadResult r;
        r.alerts = 1;
        if (sink)
          sink(Diagnostic{Severity::kAlert, true,
                          fmt::format("Cannot open configuration file/directory {} : {}", path,
                                      std::strerror(err))});
        return r;
      }
      std::vector<std::string> names;
      if (S_ISDIR(st.st_mode)) {
        // Regular files ending in ".cfg", not hidden, in byte order (alphasort).
        if (DIR* d = opendir(path.c_str())) {
          while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.empty() || n[0] == '.' || n.size() < 5 || !n.ends_with(".cfg")) continue;
            std::string full = path + (path.ends_with("/") ? "" : "/") + n;
            struct stat fst {};
            if (stat(full.c_str(), &fst) == 0 && S_ISREG(fst.st_mode)) names.push_back(full);
          }
          closedir(d);
        }
        std::sort(names.begin(), names.end());
      } else {
        names.push_back(path);
      }
      for (const auto& n : names) {
        SourceFile f;
        f.name = n;
        if (!read_file(n, &f.text)) {
          int err = errno ? errno : EIO;
          LoadResult r;
          r.alerts = 1;
          if (sink)
            sink(Diagnostic{Severity::kAlert, true,
                            fmt::format("Cannot open configuration file/directory {} : {}", n,
                                        std::strerror(err))});
          return r;
        }
        files.push_back(std::move(f));
      }
    }
    return run(files, options, sink, true);
  } catch (...) {
    LoadResult r;
    r.alerts = 1;
    return r;
  }
}

LoadResult load_text(std::string_view text, std::string_view name, const LoadOptions& options,
                     const DiagnosticSink& sink) {
  std::vector<SourceFile> files{SourceFile{std::string(name), std::string(text)}};
  return run(files, options, sink, false);
}

int evaluate_condition(std::string_view text, std::string* error) {
  Env env;
  TokenizeContext ctx{&env, "", 0, "", false};
  TokenizedLine tl = tokenize_line(text, ctx);
  if (tl.error) {
    std::string what = *tl.error;
    if (what == "unmatched quote") what = "Unmatched quote";
    if (error) *error = fmt::format("Syntax Error in condition: {}.", what);
    return -1;
  }
  std::string expr;
  for (std::size_t i = 0; i < tl.words.size(); ++i) expr += (i ? " " : "") + tl.words[i].text;
  ConditionError err;
  int r = eval_condition(expr, env, &err);
  if (r < 0 && error) *error = "Failed to evaluate condition: " + err.message;
  return r;
}

const std::vector<std::string>& build_features() {
  // Only what sluice really has: feature() must not promise anything else.
  // PCRE2_JIT only where the PCRE2 library can JIT-compile here (base/regex.h).
  static const std::vector<std::string> features = [] {
    std::vector<std::string> f = {"EPOLL", "THREAD", "REUSEPORT", "LINUX_TCP", "PCRE2", "OPENSSL",
                                  "SSL"};
    if (base::Regex::jit_supported()) f.push_back("PCRE2_JIT");
    return f;
  }();
  return features;
}

std::vector<KeywordDoc> keyword_docs() {
  std::vector<KeywordDoc> out;
  for (const auto& k : global_keyword_table())
    out.push_back({"global", std::string(k.name), std::string(k.help)});
  for (const auto& k : global_sub_keyword_docs())
    out.push_back({"global", fmt::format("{} {}", k.parent, k.name), std::string(k.help)});
  for (const auto& k : proxy_keyword_table())
    out.push_back({"proxies", std::string(k.name), std::string(k.help)});
  for (const auto& k : proxy_sub_keyword_docs())
    out.push_back({"proxies", fmt::format("{} {}", k.parent, k.name), std::string(k.help)});
  return out;
}

}  // namespace sluice::config
