#pragma once
// Certificates that change at run time (HAProxy's `set ssl cert` / `commit ssl cert`): the
// process's store of the certificate files bind lines use, and the slot through which each
// bind line's contexts reach the workers.
//
// A commit builds new contexts for every bind line that uses the file (ServerContext::make
// reads the committed text instead of the file), and swaps each line's slot: new handshakes
// take the new certificate at once, a handshake under way and the established connections
// keep the context they began with (a reader holds a shared pointer). The new contexts have
// their own session cache and ticket keys: a session made with the old certificate is not
// resumed (the client makes a full handshake and sees the new one), as in HAProxy.
//
// Thread rule: the store is written by the CLI (one transaction at a time, under its mutex)
// and read by context builds; a slot is read by any worker on each accepted TLS connection.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/result.h"
#include "net/crt_list.h"
#include "net/tls.h"

namespace sluice::net::tls {

class ContextSlot {
 public:
  explicit ContextSlot(std::shared_ptr<const ServerContext> c) : p_(std::move(c)) {}
  std::shared_ptr<const ServerContext> get() const { return p_.load(std::memory_order_acquire); }
  void set(std::shared_ptr<const ServerContext> c) {
    p_.store(std::move(c), std::memory_order_release);
  }

 private:
  std::atomic<std::shared_ptr<const ServerContext>> p_;
};

// What `show ssl cert <file>` prints of a certificate.
struct CertInfo {
  std::string serial;        // hex
  std::string not_before;    // "Dec  7 16:08:33 2026 GMT"
  std::string not_after;
  std::string san;           // "DNS:a.test, DNS:b.test"
  std::string algorithm;     // "EC256", "RSA2048"
  std::string sha1;          // hex
  std::string subject;       // "/CN=a.test"
  std::string issuer;
  std::vector<std::pair<std::string, std::string>> chain;   // (subject, issuer) of each
};

// Where a bind line is, for messages: its proxy, address word and file:line.
struct BindLabel {
  std::string proxy;
  std::string text;
  std::string file;
  int line = 0;
};

// HAProxy's refusal of `verify` without a CA to verify with, for the line's options or one of
// its crt-list lines': "Proxy 'f': verify is enabled but no CA file specified for bind
// '127.0.0.1:443' at [f.cfg:7]." ("" when fine).
std::string missing_ca_error(const BindOptions& o, const BindLabel& where);

class CertStore {
 public:
  static CertStore& global();

  // Start-up: forget the previous configuration's lines and committed texts.
  void clear();
  // Start-up: a bind line built from `o`, published in `slot`.
  void add_bind(const BindOptions& o, std::shared_ptr<ContextSlot> slot, BindLabel label);
  // Start-up: the configuration's ca-base, for the options of crt-list lines added later.
  void set_ca_base(std::string base);
  std::string ca_base() const;
  // The text committed for `path`, instead of the file's. Any thread.
  bool committed(const std::string& path, std::string* pem) const;

  // The files bind lines use (directories expanded) and those `new ssl cert` made, sorted.
  std::vector<std::string> files() const;
  bool used(const std::string& path) const;
  bool known(const std::string& path) const;
  // The file of the transaction under way ("": none).
  std::string transaction() const;
  // `set ssl cert`: a new text for a known file, checked (a certificate, and its key when the
  // text has one); true when it opened the transaction, false when it replaced its text.
  base::Result<bool> set(const std::string& path, const std::string& pem);
  // `commit ssl cert`: the number of bind lines that took it. The transaction ends either way.
  base::Result<int> commit(const std::string& path);
  bool abort(const std::string& path);
  // `new ssl cert` / `del ssl cert` (an empty or unused file only).
  base::Result<bool> create(const std::string& path);
  base::Result<bool> remove(const std::string& path);
  // The certificate of a file, or of the transaction's text.
  base::Result<CertInfo> info(const std::string& path, bool transaction) const;
  // Start-up: a crt-list file (or a `crt` directory) a bind line reads, with its lines.
  void add_crt_list(const std::string& path, const std::vector<CrtListLine>& lines);
  // `show ssl crt-list`: the files by name, and one file's lines (false: none).
  std::vector<std::string> crt_lists() const;
  bool crt_list(const std::string& path, std::vector<CrtListLine>* lines) const;

  // Whether a certificate file can go into a crt-list: the process has it (a bind line loaded
  // it, or `new ssl cert` made it and a commit filled it), or has it empty.
  enum class Cert : uint8_t { kUnknown, kEmpty, kLoaded };
  Cert state(const std::string& path) const;
  // `add ssl crt-list`: `line` (a known certificate; its option words checked) at the end of
  // crt-list `list`, on every bind line that reads the list; `options_for(base)` makes the
  // line's own options over a bind line's (only called when it has option words). The bind
  // lines' contexts are rebuilt and swapped in (their ticket keys kept, so sessions resume);
  // none is when one fails. The errors are HAProxy's.
  using EntryOptions =
      std::function<base::Result<std::shared_ptr<const BindOptions>>(const BindOptions& base)>;
  base::Result<bool> add_crt_list_entry(const std::string& list, CrtListLine line,
                                        const EntryOptions& options_for);
  // `del ssl crt-list`: the line of `list` for certificate `crt` (`line` < 0: its only one).
  // A bind line's default certificate (its first) stays. The errors are HAProxy's.
  base::Result<bool> del_crt_list_entry(const std::string& list, const std::string& crt,
                                        int line);

 private:
  struct Bind {
    BindOptions options;
    std::shared_ptr<ContextSlot> slot;
    BindLabel label;
    std::vector<std::string> files;   // its certificate files, directories expanded
    std::vector<std::string> lists;   // the crt-lists (and `crt` directories) it reads
  };
  struct CrtList {
    std::string path;
    std::vector<CrtListLine> lines;
    int last_line = 0;   // the number the next added line takes is one more
  };
  static void index_files(Bind& b);
  // Builds the contexts of `changed` (new options, same slots) and swaps them in, all or none.
  base::Result<bool> publish(std::vector<Bind> changed);
  CrtList* find_list(const std::string& path);

  mutable std::mutex mu_;
  std::mutex edit_mu_;   // one commit or crt-list edit at a time (held without mu_)
  std::vector<Bind> binds_;
  std::map<std::string, std::string> committed_;   // file -> PEM text
  std::vector<std::string> created_;               // `new ssl cert` files
  std::vector<CrtList> crt_lists_;
  std::string tx_path_, tx_pem_;
  std::string ca_base_;
};

// A PEM text's certificate, chain and key, checked as a `crt` file is: "" when fine, else
// HAProxy's reason. `need_key`: a text without a key is an error.
std::string check_pem(const std::string& path, const std::string& pem, bool need_key);
// What `show ssl cert` prints of a PEM text's certificate.
base::Result<CertInfo> describe_pem(const std::string& pem);

}  // namespace sluice::net::tls
