#include "proxy/conn_prelude.h"

#include "base/clock.h"
#include "net/socket.h"
#include "proxy/worker.h"

namespace sluice::proxy {

ConnPrelude::ConnPrelude(Worker& w, Listener& l, int fd, const net::SocketAddress& peer,
                         const char* state)
    : w_(w),
      l_(l),
      fd_(fd),
      peer_(peer),
      accept_ms_(w.loop().now_ms()),
      accept_wall_us_(base::wall_us()),
      state_(state) {}

void ConnPrelude::drop_socket(bool watched) {
  if (watched) w_.loop().remove(fd_);
  net::close_with_reset(fd_);
  fd_ = -1;
  w_.release_thread_load(l_);
  w_.session_closed(this);
}

void ConnPrelude::log_failure(log::ConnError why) {
  w_.log_connection_error(l_, peer_, accept_wall_us_, why);
}

int ConnPrelude::release_socket(bool keep_watched) {
  done_ = true;
  w_.loop().timers().cancel(timer_);
  if (!keep_watched) w_.loop().remove(fd_);
  const int fd = fd_;
  fd_ = -1;
  w_.session_closed(this);
  return fd;
}

void ConnPrelude::describe(SessionInfo* info) const {
  info->listener = &l_;
  info->client = peer_;
  info->accept_ms = accept_ms_;
  info->expire_ms = timer_.armed() ? timer_.expiry() : 0;
  info->state = state_;
  info->client_fd = fd_;
}

}  // namespace sluice::proxy
