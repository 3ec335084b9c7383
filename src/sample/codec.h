#pragma once
// Byte codecs the converters share (conv_encode.cc, conv_hash.cc), with HAProxy's exact
// acceptance rules: what it decodes, sluice decodes; what it refuses, sluice refuses.
#include <string>
#include <string_view>

namespace sluice::sample {

// Standard base64 with padding. Decoding takes groups of 4; each group may end in "=" or
// "==" (so "YQ==YQ==" is "aa"); false on a length not a multiple of 4 or any other byte.
void base64_encode(std::string_view in, std::string& out);
bool base64_decode(std::string_view in, std::string& out);
// URL-safe base64 ('-', '_'), no padding. Decoding refuses a length of 4n+1 and any byte out
// of the alphabet except '=', which HAProxy reads as the value 63.
void base64url_encode(std::string_view in, std::string& out);
bool base64url_decode(std::string_view in, std::string& out);

}  // namespace sluice::sample
