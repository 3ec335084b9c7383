// Certificates at run time (HAProxy's ssl_ckch.c CLI): show, new, set, commit, abort and del
// ssl cert, and show, add and del ssl crt-list. A commit or a crt-list edit rebuilds the
// contexts of every bind line concerned and swaps them in (net/cert_store.h): new handshakes
// see the change at once, established connections keep theirs. The answers are HAProxy 3.5's
// words.
#include <fmt/format.h>

#include "cli/builtin.h"
#include "config/bind_ssl.h"
#include "config/parser.h"
#include "net/cert_store.h"
#include "net/ticket_keys.h"

namespace sluice::cli {

namespace {

using net::tls::CertStore;

void show_cert(const std::vector<std::string>& w, std::string* out) {
  CertStore& st = CertStore::global();
  if (w.size() < 4) {
    if (std::string tx = st.transaction(); !tx.empty()) *out += "# transaction\n*" + tx + "\n";
    *out += "# filename\n";
    for (const auto& f : st.files()) *out += f + "\n";
    return;
  }
  std::string path = w[3];
  const bool tx = path.starts_with('*');
  if (tx) path.erase(0, 1);
  auto info = tx || st.known(path) ? st.info(path, tx) : base::Result<net::tls::CertInfo>(base::Error::text(""));
  if (!info.ok()) {
    *out += "Can't display the certificate: Not found or the certificate is a bundle!\n";
    return;
  }
  const net::tls::CertInfo& c = info.value();
  *out += fmt::format("Filename: {}\n", w[3]);
  *out += fmt::format("Crt filename: {}\nKey filename: {}\n", path, path);
  *out += fmt::format("Status: {}\n", tx ? "Uncommitted" : st.used(path) ? "Used" : "Unused");
  *out += fmt::format("Serial: {}\nnotBefore: {}\nnotAfter: {}\n", c.serial, c.not_before, c.not_after);
  if (!c.san.empty()) *out += fmt::format("Subject Alternative Name: {}\n", c.san);
  *out += fmt::format("Algorithm: {}\nSHA1 FingerPrint: {}\nSubject: {}\nIssuer: {}\n", c.algorithm,
                      c.sha1, c.subject, c.issuer);
  for (const auto& [subject, issuer] : c.chain)
    *out += fmt::format("Chain Subject: {}\nChain Issuer: {}\n", subject, issuer);
}

void set_cert(const CommandContext& ctx, const std::vector<std::string>& w, std::string* out) {
  if (w.size() < 4 || ctx.payload.empty()) {
    *out += "'set ssl cert' expects a filename and a certificate as a payload\n";
    return;
  }
  const std::string& path = w[3];
  CertStore& st = CertStore::global();
  if (!st.known(path)) {
    *out += fmt::format("Can't replace a certificate which is not referenced by the "
                        "configuration!\nCan't update {}!\n", path);
    return;
  }
  auto r = st.set(path, std::string(ctx.payload));
  if (!r.ok()) {
    *out += fmt::format("{}\nCan't load the payload\nCan't update {}!\n", r.error().message, path);
    return;
  }
  *out += fmt::format("Transaction {} for certificate {}!\n", r.value() ? "created" : "updated",
                      path);
}

void commit_cert(const std::vector<std::string>& w, std::string* out) {
  if (w.size() < 4) {
    *out += "'commit ssl cert' expects a filename\n";
    return;
  }
  const std::string& path = w[3];
  CertStore& st = CertStore::global();
  if (st.transaction() != path) {
    *out += fmt::format("No ongoing transaction! !\nCan't commit {}!\n", path);
    return;
  }
  *out += fmt::format("Committing {}", path);
  auto r = st.commit(path);
  if (!r.ok()) {
    *out += fmt::format("\n{}\nFailed!\n", r.error().message);
    return;
  }
  // One dot per bind line that took it.
  *out += std::string(static_cast<std::size_t>(r.value()), '.') + "\nSuccess!\n";
}

void abort_cert(const std::vector<std::string>& w, std::string* out) {
  if (w.size() < 4) {
    *out += "'abort ssl cert' expects a filename\n";
    return;
  }
  if (!CertStore::global().abort(w[3])) {
    *out += "No ongoing transaction!\n";
    return;
  }
  *out += fmt::format("Transaction aborted for certificate '{}'!\n", w[3]);
}

void new_cert(const std::vector<std::string>& w, std::string* out) {
  if (w.size() < 4) {
    *out += "'new ssl cert' expects a filename\n";
    return;
  }
  auto r = CertStore::global().create(w[3]);
  *out += r.ok() ? fmt::format("New empty certificate store '{}'!\n", w[3])
                 : r.error().message + "\n";
}

void del_cert(const std::vector<std::string>& w, std::string* out) {
  if (w.size() < 4) {
    *out += "'del ssl cert' expects a certificate name\n";
    return;
  }
  auto r = CertStore::global().remove(w[3]);
  *out += r.ok() ? fmt::format("Certificate '{}' deleted!\n", w[3]) : r.error().message + "\n";
}

// show ssl crt-list [-n] [<file>]: the crt-list files (and `crt` directories), or one's lines
// as read (with -n, each with its line number).
void show_crt_list(const std::vector<std::string>& w, std::string* out) {
  CertStore& st = CertStore::global();
  std::size_t i = 3;
  const bool numbers = i < w.size() && w[i] == "-n";
  if (numbers) ++i;
  if (i >= w.size()) {
    for (const auto& f : st.crt_lists()) *out += f + "\n";
    return;
  }
  std::vector<net::tls::CrtListLine> lines;
  if (!st.crt_list(w[i], &lines)) {
    *out += "didn't find the specified filename\n";
    return;
  }
  *out += "# " + w[i] + "\n";
  for (const auto& l : lines) {
    *out += l.crt;
    if (numbers) *out += ":" + std::to_string(l.line);
    if (!l.options.empty()) {
      *out += " [";
      for (std::size_t k = 0; k < l.options.size(); ++k) *out += (k ? " " : "") + l.options[k];
      *out += "]";
    }
    for (const auto& f : l.filters) *out += " " + f;
    *out += "\n";
  }
}

// add ssl crt-list <list> <cert> [\[options\]] [filters], or <list> with a one-line payload
// "<cert> [\[options\]] [filters]": the line goes at the end of the list, on every bind line
// that reads it (net/cert_store.h).
void add_crt_list(const CommandContext& ctx, const std::vector<std::string>& w, std::string* out) {
  const std::string usage = "'add ssl crtlist' expects a filename and a certificate name\n";
  if (w.size() < 4) {
    *out += usage;
    return;
  }
  const std::string& list = w[3];
  std::string text;
  if (!ctx.payload.empty()) {
    text = std::string(ctx.payload);
  } else {
    for (std::size_t i = 4; i < w.size(); ++i) text += (i > 4 ? " " : "") + w[i];
  }
  auto parsed = net::tls::parse_crt_list(text, "CLI");
  if (!parsed.ok()) {
    *out += "Can't edit the crt-list: " + parsed.error().message + "\n";
    return;
  }
  if (parsed.value().empty()) {
    *out += usage;
    return;
  }
  if (parsed.value().size() > 1) {
    *out += "Can't edit the crt-list: only one line of payload is supported!\n";
    return;
  }
  net::tls::CrtListLine line = std::move(parsed.value().front());
  CertStore& st = CertStore::global();
  std::vector<net::tls::CrtListLine> listed;
  if (!st.crt_list(list, &listed)) {
    *out += "Can't edit the crt-list: crt-list '" + list + "' does not exist!\n";
    return;
  }
  // The option words over a bind line's options: checked once here, applied per bind line.
  const std::string ca_base = st.ca_base();
  const std::string where = fmt::format("parsing [CLI:{}]: ", line.line);
  auto options_for = [&](const net::tls::BindOptions& base)
      -> base::Result<std::shared_ptr<const net::tls::BindOptions>> {
    auto own = std::make_shared<net::tls::BindOptions>(base);
    try {
      config::apply_crt_list_words(line.options, ca_base, where, *own, nullptr);
    } catch (const config::ConfigError& e) {
      return base::Error::text(e.text);
    }
    return std::shared_ptr<const net::tls::BindOptions>(std::move(own));
  };
  if (auto checked = options_for({}); !checked.ok()) {
    *out += "Can't edit the crt-list: " + checked.error().message + "\n";
    return;
  }
  switch (st.state(line.crt)) {
    case CertStore::Cert::kUnknown:
      *out += "Can't edit the crt-list: certificate '" + line.crt + "' does not exist!\n";
      return;
    case CertStore::Cert::kEmpty:
      *out += "Can't edit the crt-list: certificate '" + line.crt + "' is empty!\n";
      return;
    case CertStore::Cert::kLoaded:
      break;
  }
  *out += fmt::format("Inserting certificate '{}' in crt-list '{}'.\n", line.crt, list);
  auto r = st.add_crt_list_entry(list, line, options_for);
  *out += r.ok() ? "Success!\n" : r.error().message + "\nFailed!\n";
}

// del ssl crt-list <list> <cert[:line]>
void del_crt_list(const std::vector<std::string>& w, std::string* out) {
  if (w.size() < 5) {
    *out += "'del ssl crtlist' expects a filename and a certificate name\n";
    return;
  }
  std::string crt = w[4];
  int line = -1;
  if (auto colon = crt.rfind(':'); colon != std::string::npos) {
    const std::string num = crt.substr(colon + 1);
    if (num.empty() || num.size() > 9 ||
        num.find_first_not_of("0123456789") != std::string::npos) {
      *out += "Can't delete the entry: wrong line number after colons in '" + crt + "'!\n";
      return;
    }
    line = std::stoi(num);
    crt.erase(colon);
  }
  auto r = CertStore::global().del_crt_list_entry(w[3], crt, line);
  *out += r.ok() ? fmt::format("Entry '{}' deleted in crtlist '{}'!\n", crt, w[3])
                 : "Can't delete the entry: " + r.error().message + "\n";
}

// `#<id>` or a file name: the ticket keys it names (null: none), and its id.
std::shared_ptr<net::tls::TicketKeys> ticket_keys(const std::string& ref, std::size_t* id) {
  const auto all = net::tls::TicketKeys::all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!all[i]) continue;
    if (ref == "#" + std::to_string(i) || ref == all[i]->path()) {
      *id = i;
      return all[i];
    }
  }
  return nullptr;
}

void show_tls_keys(const std::vector<std::string>& w, std::string* out) {
  const auto all = net::tls::TicketKeys::all();
  if (w.size() < 3) {
    *out += "# id (file)\n";
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i]) *out += fmt::format("{} ({})\n", i, all[i]->path());
    return;
  }
  std::vector<std::size_t> ids;
  if (w[2] == "*") {
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i]) ids.push_back(i);
  } else {
    std::size_t id = 0;
    if (!ticket_keys(w[2], &id)) {
      *out += "'show tls-keys' unable to locate referenced filename\n";
      return;
    }
    ids.push_back(id);
  }
  *out += "# id secret\n";
  for (std::size_t id : ids) {
    *out += fmt::format("# {} ({})\n", id, all[id]->path());
    const auto keys = all[id]->shown();
    for (std::size_t k = 0; k < keys.size(); ++k) *out += fmt::format("{}.{} {}\n", id, k, keys[k]);
  }
}

void set_tls_key(const std::vector<std::string>& w, std::string* out) {
  if (w.size() < 5) {
    *out += "'set ssl tls-key' expects a filename and the new TLS key in base64 encoding.\n";
    return;
  }
  std::size_t id = 0;
  auto keys = ticket_keys(w[3], &id);
  if (!keys) {
    *out += "'set ssl tls-key' unable to locate referenced filename\n";
    return;
  }
  std::string why;
  *out += keys->add(w[4], &why) ? "TLS ticket key updated!\n" : why + "\n";
}

}  // namespace

std::vector<Command> ssl_commands() {
  std::vector<Command> out;
  out.push_back({{"show", "ssl", "cert"}, "show ssl cert [<certfile>]",
                 "display the SSL certificates used in memory, or the details of a file",
                 Level::kOperator,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   show_cert(w, o);
                 }});
  out.push_back({{"set", "ssl", "cert"}, "set ssl cert <certfile> <payload>",
                 "replace a certificate file", Level::kAdmin,
                 [](const CommandContext& c, const std::vector<std::string>& w, std::string* o) {
                   set_cert(c, w, o);
                 }});
  out.push_back({{"commit", "ssl", "cert"}, "commit ssl cert <certfile>",
                 "commit a certificate file", Level::kAdmin,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   commit_cert(w, o);
                 }});
  out.push_back({{"abort", "ssl", "cert"}, "abort ssl cert <certfile>",
                 "abort a transaction for a certificate file", Level::kAdmin,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   abort_cert(w, o);
                 }});
  out.push_back({{"new", "ssl", "cert"}, "new ssl cert <certfile>",
                 "create a new certificate file to be used in a crt-list or a directory",
                 Level::kAdmin,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   new_cert(w, o);
                 }});
  out.push_back({{"del", "ssl", "cert"}, "del ssl cert <certfile>",
                 "delete an unused certificate file", Level::kAdmin,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   del_cert(w, o);
                 }});
  out.push_back({{"show", "ssl", "crt-list"}, "show ssl crt-list [-n] [<list>]",
                 "show the list of crt-lists or the content of a crt-list file", Level::kAdmin,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   show_crt_list(w, o);
                 }});
  out.push_back({{"add", "ssl", "crt-list"}, "add ssl crt-list <list> <cert> [opts]*",
                 "add to crt-list file <list> a line <cert> or a payload", Level::kAdmin,
                 [](const CommandContext& c, const std::vector<std::string>& w, std::string* o) {
                   add_crt_list(c, w, o);
                 }});
  out.push_back({{"del", "ssl", "crt-list"}, "del ssl crt-list <list> <cert[:line]>",
                 "delete a line <cert> from crt-list file <list>", Level::kAdmin,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   del_crt_list(w, o);
                 }});
  out.push_back({{"show", "tls-keys"}, "show tls-keys [id|*]",
                 "show TLS ticket keys", Level::kAdmin,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   show_tls_keys(w, o);
                 }});
  out.push_back({{"set", "ssl", "tls-key"}, "set ssl tls-key [id|file] <key>",
                 "set the next TLS key for the <id> or <file> listener to <key>", Level::kAdmin,
                 [](const CommandContext&, const std::vector<std::string>& w, std::string* o) {
                   set_tls_key(w, o);
                 }});
  return out;
}

}  // namespace sluice::cli
