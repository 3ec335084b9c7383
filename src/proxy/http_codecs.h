#pragma once
// The codec state of one HTTP transaction: parsers, chunked decoders and the request copy that
// response rules see (about 700 bytes). A session holds one only from a request's first byte to
// the end of its transaction, so that an idle keep-alive connection does not carry it; the
// worker keeps the ones finished transactions gave back for the next (Worker::spare_codecs).
// Spare codecs also carry the storage of the session's two output queues between transactions.
#include <string>

#include "http/http.h"
#include "rules/rules.h"

namespace sluice::proxy {

struct HttpCodecs {
  HttpCodecs(const http::Limits& req, const http::Limits& res) : req_parser(req), res_parser(res) {}
  http::RequestParser req_parser;
  http::ResponseParser res_parser;
  http::ChunkedDecoder req_chunks, res_chunks;
  rules::HeadEdit req_copy;   // request seen by response rules (owned copy)
  // Scratch heads being rewritten (their field lists keep their storage between transactions).
  rules::HeadEdit req_edit, res_edit;
  // The output queues' storage (empty, at most a head's size) while the session is idle.
  std::string parked_to_cli, parked_to_srv;
};

}  // namespace sluice::proxy
