#pragma once
// The codec state of one HTTP transaction: parsers, chunked decoders and the request copy that
// response rules see (about 700 bytes). A session holds one only from a request's first byte to
// the end of its transaction, so that an idle keep-alive connection does not carry it; the
// worker keeps the ones finished transactions gave back for the next (Worker::spare_codecs).
#include <string>

#include "log/termination.h"

#include "http/http.h"
#include "rules/rules.h"
#include "sample/vars.h"

namespace sluice::proxy {

// An answer sluice gives instead of a server's: an HTTP/1 message, the format of HAProxy's
// errorfiles (an HTTP/2 mux would parse it, as HAProxy does its errorfiles). The mux frames it
// for its connection (a HEAD's answer is the head alone; `connection: close` when it closes).
struct LocalReply {
  int status = 0;
  log::Termination term;
  std::string bytes;
  bool close_after = false;       // the connection closes after it
  bool announce_close = true;     // a page sent before closing says `connection: close`
  bool skip_body = false;         // a request body already received whole is passed over
  uint32_t delay_ms = 0;          // tarpit: sent after this long (the client waits, counted Tw)
  bool silent = false;            // silent-drop: nothing sent, the close not even seen
  uint8_t rst_ttl = 0;            // silent-drop rst-ttl: a reset with this IP TTL instead
};

struct HttpCodecs {
  HttpCodecs(const http::Limits& req, const http::Limits& res) : req_parser(req), res_parser(res) {}
  http::RequestParser req_parser;
  http::ResponseParser res_parser;
  http::ChunkedDecoder req_chunks, res_chunks;
  rules::HeadEdit req_copy;   // request seen by response rules (owned copy)
  // Scratch heads being rewritten (their field lists keep their storage between transactions).
  rules::HeadEdit req_edit, res_edit;
  // What the transaction decided besides the head (HttpTxn): its answer when it gives one,
  // and the value `balance uri` / `balance hdr()` hashes.
  LocalReply reply;
  std::string lb_key;
  // A request body read whole before the transaction began (H1Connection::wait_body()),
  // chunks decoded.
  std::string req_body;
  // http-response wait-for-body: the chunks of a response body buffered so far, decoded.
  std::string res_body;
  // The transaction's variables (set-var(txn.x), req.x, res.x): cleared with the transaction,
  // keeping their storage for the next one. Their bytes count in reqres_room (req and res
  // together), then txn_room, then the session's (HttpTxn links txn_room to it while the
  // transaction lives), as tune.vars.*-max-size want.
  sample::VarAccount txn_room{sample::var_limits().txn};
  sample::VarAccount reqres_room{sample::var_limits().reqres, &txn_room};
  sample::VarStore txn_vars{sample::Scope::kTxn, 0, &txn_room};
  sample::VarStore req_vars{sample::Scope::kReq, 0, &reqres_room};
  sample::VarStore res_vars{sample::Scope::kRes, 0, &reqres_room};
  // The storage of the connection's two heads strings (OutQueue) while it is idle.
  std::string parked_to_cli, parked_to_srv;
};

}  // namespace sluice::proxy
