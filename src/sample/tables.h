#pragma once
// Internals of sample/: the tables of fetches and converters, one function per file
// (fetch_<group>.cc, conv_<group>.cc), gathered by registry.cc. A new file adds its function
// here and to registry.cc's lists.
#include <cstdint>
#include <span>
#include <string_view>

#include "sample/expr.h"

namespace sluice::sample::tables {

std::span<const FetchDef> internal_fetches();   // fetch_internal.cc: HAProxy 7.3.2
std::span<const FetchDef> l4_fetches();         // fetch_l4.cc: 7.3.3
std::span<const FetchDef> ssl_fetches();        // fetch_ssl.cc: 7.3.4
std::span<const FetchDef> payload_fetches();    // fetch_payload.cc: 7.3.5
std::span<const FetchDef> http_fetches();       // fetch_http.cc: 7.3.6, request line, body
std::span<const FetchDef> http_hdr_fetches();   // fetch_http_hdr.cc: 7.3.6, headers, status
std::span<const FetchDef> http_cookie_fetches();   // fetch_http_cookie.cc: 7.3.6, cookies
std::span<const FetchDef> http_auth_fetches();   // fetch_http_auth.cc: 7.3.6, http_auth*
std::span<const FetchDef> vars_fetches();       // fetch_vars.cc: 7.3.2, dump_all_vars

std::span<const ConvDef> string_convs();        // conv_string.cc
std::span<const ConvDef> text_convs();          // conv_text.cc: concat, regsub, language...
std::span<const ConvDef> arith_convs();         // conv_arith.cc
std::span<const ConvDef> hash_convs();          // conv_hash.cc
std::span<const ConvDef> encode_convs();        // conv_encode.cc
std::span<const ConvDef> misc_convs();          // conv_misc.cc
std::span<const ConvDef> json_convs();          // conv_json.cc: json_query
std::span<const ConvDef> rfc7239_convs();       // conv_rfc7239.cc: rfc7239_*, date
std::span<const ConvDef> cond_convs();          // conv_cond.cc: when
std::span<const ConvDef> fix_convs();           // conv_fix.cc: fix_tag_value, fix_is_valid
std::span<const ConvDef> mqtt_convs();          // conv_mqtt.cc: mqtt_is_valid, mqtt_field_value
std::span<const ConvDef> map_convs();           // conv_map.cc: map, map_<match>[_<output>]

// A run of digits as a 32-bit number, wrapping as HAProxy's tag and type numbers do (FIX tags,
// MQTT packet types); false when `s` is empty or not all digits.
inline bool digits_u32(std::string_view s, uint32_t* out) {
  if (s.empty()) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  *out = v;
  return true;
}

// HTTP dates' names (http_date writes them, date reads them): Sunday first, as tm_wday.
inline constexpr const char* kDayNames[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
inline constexpr const char* kMonthNames[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

}  // namespace sluice::sample::tables
