#pragma once
// crt-list files (`bind ... crt-list <file>`, HAProxy's format): one certificate a line, then
// optionally its own TLS options between brackets, then optionally the SNI names it answers
// for instead of its own (`*.example.com` wildcards, `!name` exclusions):
//
//     # comment
//     /etc/ssl/site.pem
//     /etc/ssl/api.pem [alpn http/1.1 ssl-min-ver TLSv1.3] api.example.com
//     /etc/ssl/wild.pem *.example.com !admin.example.com
//
// A bounds-checked parser of untrusted-looking text (the file may come from anywhere): it
// keeps views of nothing, copies each word, and refuses what it does not understand with the
// file and line (fuzz/crt_list.cc).
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace sluice::net::tls {

struct CrtListLine {
  int line = 0;                       // 1-based, for messages
  std::string crt;                    // the certificate file, as written
  std::vector<std::string> options;   // the words between [ and ], in order
  std::vector<std::string> filters;   // SNI filters, in order
};

// The lines of a crt-list file's `text` (`path` names it in errors: "parsing [<path>:<n>]:
// <why>"). Blank lines and lines starting with '#' are skipped.
base::Result<std::vector<CrtListLine>> parse_crt_list(std::string_view text, std::string_view path);

}  // namespace sluice::net::tls
