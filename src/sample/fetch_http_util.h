#pragma once
// Internals of the HTTP fetches (fetch_http*.cc): the request target's parts, header value
// walks, HAProxy's hashes. Not part of the module interface (tests may include it).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"
#include "sample/expr.h"

namespace sluice::sample::httpx {

// The path of a request target: from its first '/' to before '?'. "*" is itself; empty for
// the authority form (CONNECT) and an absolute form without a path.
std::string_view path_of(std::string_view target);
// The path with its query string: from the first '/' to the end.
std::string_view pathq_of(std::string_view target);
// What follows the first '?' (empty when none).
std::string_view query_of(std::string_view target);
// The first Host field's value (empty when none).
std::string_view host_of(const HttpMsg& m);

// HAProxy's hash of Host and a path (base32, url32): sdbm over the bytes as signed chars,
// then its 32-bit avalanche (HAProxy's full_hash).
uint32_t sdbm_hash(std::string_view a, std::string_view b);
// `hash` in network order followed by the client address: base32+src, url32+src. False when
// the client address is not IPv4 or IPv6.
bool hash_src(uint32_t hash, const Ctx& ctx, Sample& out);

// A walk over the values of the fields named `name` (every field when empty), split at
// commas outside double quotes unless `full` (one value per field line). The cursor is two
// numbers, so that an ACL's iteration keeps it in FetchIter.
struct HdrCursor {
  uint32_t field = 0;   // index in the field list
  uint32_t off = 0;     // offset in that field's value of the next value to read
};
bool next_header_value(const std::vector<http::Header>* hs, std::string_view name, bool full,
                       HdrCursor& c, std::string_view& out);
// The occ-th value (occ > 0: from the first; occ < 0: from the last, down to -10).
bool header_occurrence(const std::vector<http::Header>* hs, std::string_view name, bool full,
                       int64_t occ, std::string_view& out);
// Counts the values (or lines).
int64_t header_count(const std::vector<http::Header>* hs, std::string_view name, bool full);

// hdr([name[,occ]]) and the fetches built on it: one value, the one `it` is at. With
// it.iterate and no occurrence every value in turn (kNotLast while more follow); otherwise
// the occurrence asked, or the last one.
bool header_fetch(const std::vector<http::Header>* hs, const Arg* a, bool full, Sample& out,
                  FetchIter& it);

// `occ` above -10 (HAProxy's MAX_HDR_HISTORY).
std::string check_occurrence(Arg* args, const ParseCtx& pc);

// Name/value pairs of a query string or a form body (url_param, body_param): items end at
// '&', ';' or `delim`; an item without '=' has no value and never matches. An empty name
// matches every item. `pos` is the offset to search from and moves past the value found.
bool next_param(std::string_view list, std::string_view name, char delim, bool icase,
                uint32_t& pos, std::string_view& value);

// HAProxy's varint (peers, SPOE, req.hdrs_bin).
void append_varint(std::string& out, uint64_t v);

}  // namespace sluice::sample::httpx
