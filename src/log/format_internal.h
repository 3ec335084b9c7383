#pragma once
// Shared by the two renderers of a compiled log-format (format_render.cc: plain lines and
// nodes, format_encode.cc: JSON and CBOR).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "log/format.h"

namespace sluice::log {

// The parts of the request line: method, target, version (empty when there is none).
struct ReqLine {
  std::string_view method, target, version;
};
ReqLine split_request_line(std::string_view line);

// What every node of one line reads, computed once for the line.
struct LineState {
  LineState(const Record& rec, const sample::Ctx* c)
      : r(rec), ctx(c), accept_us(rec.accept_wall_us ? rec.accept_wall_us : rec.date_wall_us),
        ta(rec.total), dt(derived_times(rec)) {}
  const Record& r;
  const sample::Ctx* ctx;
  const uint64_t accept_us;   // %t %T %Tl %Ts %ms
  const long ta;              // HTTP: the record's total
  const DerivedTimes dt;      // %Tq %Tt %Tu %Td
  uint8_t extra = 0;          // options for every node (render()'s `extra`)
  // The request line split, on first use.
  const ReqLine& req();

 private:
  ReqLine rl{};
  bool rl_done = false;
};

// The address an address alias writes: %ci %cp the client, %fi %fp the local address, %bi %bp
// the server connection's source, %si %sp the server (null: none).
inline const net::SocketAddress* alias_address(const Record& r, Alias a) {
  switch (a) {
    case Alias::kci: case Alias::kcp: return r.client;
    case Alias::kfi: case Alias::kfp: return r.local;
    case Alias::kbi: case Alias::kbp: return r.backend_src;
    default: return r.server_addr;
  }
}

// The date a date alias writes: %t %T %Tl the accept, %tr %trg %trl the request; local time
// but for %T and %trg; milliseconds for %t and %tr, the zone for the others.
struct AliasDate {
  uint64_t wall_us;
  bool local;
  bool with_ms;
};
inline AliasDate alias_date(const LineState& st, Alias a) {
  const bool accept = a == Alias::kt || a == Alias::kT || a == Alias::kTl;
  return {accept ? st.accept_us : st.r.date_wall_us, a != Alias::kT && a != Alias::ktrg,
          a == Alias::kt || a == Alias::ktr};
}

// One node (not a separator) as a line without encoding writes it. `*stop`: a +M sample gave
// nothing, the line ends there.
void put_plain(const Format::Node& n, LineState& st, std::string& out, bool* stop);

// "%d/%b/%Y:%H:%M:%S" then ".mmm" (`with_ms`) or " +zzzz", local time or GMT, into `buf`;
// returns the length.
std::size_t date_text(char* buf, std::size_t size, uint64_t wall_us, bool local, bool with_ms);

}  // namespace sluice::log
