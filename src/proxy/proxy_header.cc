#include "proxy/proxy_header.h"

#include <sys/socket.h>

#include <cerrno>
#include <string>

#include "base/clock.h"
#include "log/line.h"
#include "net/proxy_protocol.h"
#include "net/socket.h"
#include "net/tls.h"
#include "proxy/worker.h"

namespace sluice::proxy {

namespace {
log::ConnError code_of(net::pp::Error e) {
  using E = net::pp::Error;
  switch (e) {
    case E::kTruncated: return log::ConnError::kPrxTruncated;
    case E::kNotHeader: return log::ConnError::kPrxNotHdr;
    case E::kBadHeader: return log::ConnError::kPrxBadHdr;
    case E::kBadProto: return log::ConnError::kPrxBadProto;
    case E::kNone: break;
  }
  return log::ConnError::kPrxBadHdr;
}
}  // namespace

namespace {
void sub_tlv(std::string& out, uint8_t type, std::string_view v) {
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>((v.size() >> 8) & 0xff));
  out.push_back(static_cast<char>(v.size() & 0xff));
  out.append(v);
}

// PP2_TYPE_SSL for `client_tls` (null: a plain connection, which has the flags and verify
// result at 0 and nothing more), with the sub-TLVs `opts` asks for, in HAProxy 3.5's order.
net::pp::Tlv ssl_tlv(ssl_st* s, uint8_t opts) {
  namespace pp = net::pp;
  uint8_t client = 0;
  uint32_t verify = 0;
  std::string subs;
  if (s) {
    client |= pp::kClientSsl;
    const bool cert = net::tls::has_peer_cert(s);
    if (cert) {
      client |= pp::kClientCertSess;
      if (!net::tls::session_reused(s)) client |= pp::kClientCertConn;
      verify = static_cast<uint32_t>(net::tls::verify_result(s));
    }
    sub_tlv(subs, pp::kSubSslVersion, net::tls::protocol(s));
    std::string v;
    if ((opts & pp::kOptCertCn) && cert &&
        net::tls::cert_dn(s, /*peer=*/true, /*issuer=*/false, "CN", 1, false, &v))
      sub_tlv(subs, pp::kSubSslCn, v);
    if (opts & pp::kOptCertKey) {
      if (std::string k = net::tls::local_key_alg(s); !k.empty()) sub_tlv(subs, pp::kSubSslKeyAlg, k);
    }
    if ((opts & pp::kOptCertSig) &&
        net::tls::cert_field(s, /*peer=*/false, net::tls::CertField::kSigAlg, &v))
      sub_tlv(subs, pp::kSubSslSigAlg, v);
    if (opts & pp::kOptSslCipher) sub_tlv(subs, pp::kSubSslCipher, net::tls::cipher(s));
  }
  pp::Tlv t{pp::kTlvSsl, {}};
  t.value.push_back(static_cast<char>(client));
  for (int shift = 24; shift >= 0; shift -= 8) t.value.push_back(static_cast<char>((verify >> shift) & 0xff));
  t.value += subs;
  return t;
}
}  // namespace

std::string proxy_header_for(const lb::ServerSettings& srv, const net::SocketAddress& client,
                             const net::SocketAddress* local, int client_fd,
                             const net::pp::Header* received, std::string_view unique_id,
                             ssl_st* client_tls, std::vector<net::pp::Tlv> tlvs) {
  net::SocketAddress dst;
  if (local) dst = *local;
  else net::local_address(client_fd, &dst);
  if (srv.send_proxy == 1) return net::pp::build_v1(client, dst);
  // HAProxy 3.5's order: the set-proxy-v2-tlv-fmt ones, the CRC32C, the authority, the unique
  // id (sent, empty, when the stream has none), the TLS facts.
  const uint8_t opts = srv.pp2_options;
  const std::size_t crc_pos = tlvs.size();
  if (opts & net::pp::kOptAuthority) {
    if (const net::pp::Tlv* a = received ? received->tlv(net::pp::kTlvAuthority) : nullptr)
      tlvs.push_back(*a);
  }
  if (opts & net::pp::kOptUniqueId)
    tlvs.push_back(net::pp::Tlv{net::pp::kTlvUniqueId, std::string(unique_id)});
  if (opts & net::pp::kOptSsl) tlvs.push_back(ssl_tlv(client_tls, opts));
  return net::pp::build_v2(client, dst, tlvs, opts & net::pp::kOptCrc32c, crc_pos);
}

void render_pp2_tlvs(const std::vector<ProxySettings::Pp2TlvFormat>& formats,
                     const log::Record& r, const sample::Ctx* ctx,
                     std::vector<net::pp::Tlv>* out) {
  for (const auto& f : formats) {
    net::pp::Tlv t{f.type, {}};
    // An absent value is an empty TLV, as HAProxy sends it (no '-').
    if (f.fmt) f.fmt->render(r, ctx, t.value, log::kOptNoDash);
    out->push_back(std::move(t));
  }
}

ProxyHeaderWait::ProxyHeaderWait(Worker& w, Listener& l, int fd, const net::SocketAddress& peer)
    : ConnPrelude(w, l, fd, peer, "PROXY") {}

ProxyHeaderWait::~ProxyHeaderWait() = default;

void ProxyHeaderWait::start() {
  if (!w_.loop().add(fd_, EPOLLIN | EPOLLRDHUP | EPOLLET, this)) {
    w_.fe_counters(l_.proxy->index).eint.add();
    done_ = true;
    drop_socket(false);
    return;
  }
  // `timeout client` bounds the wait, as HAProxy bounds its handshakes.
  if (uint32_t t = l_.proxy->settings.timeouts.client)
    w_.loop().timers().arm(timer_, accept_ms_ + t);
  try_read(false);   // the header usually came with the connection
}

void ProxyHeaderWait::on_io(uint32_t events) {
  if (done_) return;
  if (events & EPOLLERR) {
    fail(log::ConnError::kPrxAbort);
    return;
  }
  try_read((events & (EPOLLRDHUP | EPOLLHUP)) != 0);
}

void ProxyHeaderWait::on_timer(core::Timer&) {
  if (!done_) fail(log::ConnError::kPrxTimeout);
}

void ProxyHeaderWait::try_read(bool hup) {
  // Peeked, so that what follows the header stays in the socket for the session; a header is
  // at most kMaxV2 bytes.
  char buf[net::pp::kMaxV2];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_PEEK);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    fail(log::ConnError::kPrxAbort);
    return;
  }
  net::pp::Header h;
  const net::pp::Result r = net::pp::parse(std::string_view(buf, static_cast<std::size_t>(n)), &h);
  if (r.status == net::pp::Status::kError) {
    fail(code_of(r.error));
    return;
  }
  if (r.status == net::pp::Status::kIncomplete) {
    // The rest may come (a slow sender, bounded by the timer), unless the peer has closed:
    // with nothing sent (a peek of 0 bytes is its FIN), or after a part of a header.
    if (n == 0) fail(log::ConnError::kPrxEmpty);
    else if (hup) fail(log::ConnError::kPrxTruncated);
    return;
  }
  // Complete: take exactly its bytes.
  std::size_t left = h.length;
  while (left > 0) {
    const ssize_t got = ::recv(fd_, buf, left, 0);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      fail(log::ConnError::kPrxAbort);
      return;
    }
    left -= static_cast<std::size_t>(got);
  }
  ConnSlots s = std::move(slots);
  Listener& l = l_;
  Worker& w = w_;
  const net::SocketAddress src = h.has_addresses ? h.src : peer_;
  auto pp = std::make_shared<const net::pp::Header>(std::move(h));
  const int fd = release_socket();
  w.begin_session(l, fd, src, std::move(pp), std::move(s));
}

void ProxyHeaderWait::fail(log::ConnError why) {
  if (done_) return;
  done_ = true;
  w_.loop().timers().cancel(timer_);
  log_failure(why);
  drop_socket(true);
}

void ProxyHeaderWait::abort(const char*) {
  if (done_) return;
  done_ = true;
  w_.loop().timers().cancel(timer_);
  drop_socket(true);
}

}  // namespace sluice::proxy
