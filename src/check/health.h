#pragma once
// The rise/fall health counter of one check and the choice of the next check interval, as
// HAProxy does it. Pure: no time, no I/O, so tests drive it directly. Owned by one checker
// (worker-local).
//
//   health: 0 ............ rise-1 | rise ............ rise+fall-1
//           DOWN (DOWN x/rise)    | UP (UP x/fall until it reaches the top)
//
// States (up(); health() within it) and the functions behind each edge:
//
//   UP --report(false) while health drops below rise: health = 0, Change::kDown--> DOWN
//   DOWN --report(true) while health reaches rise: health = top, Change::kUp--> UP
//   UP <--> UP, DOWN <--> DOWN: report() moves health within the state (a success +1, a
//     failure -1; no change reported)
//   any --force(true) (CLI `set server health up|stopping`): health = top--> UP
//   any --force(false) (CLI `set server health down`): health = 0--> DOWN
//   any --restart() (the server leaves maintenance): health = rise--> UP
//
// A success adds 1; reaching `rise` from below jumps to the top (rise+fall-1) and the server
// comes UP. A failure removes 1; dropping below `rise` goes straight to 0 and the server goes
// DOWN. So `fall` failures in a row take a fully healthy server DOWN and `rise` successes in a
// row bring a DOWN one back. Where a server starts is its `init-state` (InitState), by default
// HAProxy 3.5's: UP with the counter at 0, so that one failure takes it DOWN and `rise`
// successes make it fully healthy.
#include <cstdint>

namespace sluice::check {

struct Intervals {
  uint32_t inter_ms = 2000;
  uint32_t fastinter_ms = 0;   // 0 = use inter
  uint32_t downinter_ms = 0;   // 0 = use inter
};

// `init-state`: kNone (the default) UP at 0; kUp UP at rise (one failure from DOWN, one success
// from the top: HAProxy 2.6's start); kFullyUp UP at the top; kDown DOWN one success from UP;
// kFullyDown DOWN at 0.
enum class InitState : uint8_t { kNone, kFullyUp, kUp, kDown, kFullyDown };

class Health {
 public:
  enum class Change { kNone, kUp, kDown };

  Health(int rise, int fall, InitState init = InitState::kNone)
      : rise_(rise), fall_(fall), health_(0), up_(true) {
    switch (init) {
      case InitState::kNone: break;
      case InitState::kFullyUp: health_ = top(); break;
      case InitState::kUp: health_ = rise; break;
      case InitState::kDown: health_ = rise - 1; up_ = false; break;
      case InitState::kFullyDown: up_ = false; break;
    }
  }

  // Records one check result. Returns the state change it causes, if any.
  Change report(bool ok);

  int health() const { return health_; }
  // CLI `set server ... health up|stopping|down`: jumps to the top (UP; stopping keeps the
  // server UP, the soft stop itself is the server's, not the counter's) or to 0 (DOWN).
  // Returns the state change it causes, if any.
  Change force(bool up) {
    bool was = up_;
    health_ = up ? top() : 0;
    up_ = up;
    return was == up ? Change::kNone : up ? Change::kUp : Change::kDown;
  }
  // Leaving maintenance (`set server ... state ready`): checking starts again at health =
  // rise, UP one failure away from DOWN, as at start-up (HAProxy shows "UP 1/<fall>").
  Change restart() {
    bool was = up_;
    health_ = rise_;
    up_ = true;
    return was ? Change::kNone : Change::kUp;
  }
  // A saved state (server-state file): the counter and the verdict as they were.
  void restore(int health, bool up) {
    move_to(health);
    up_ = up;
  }
  // `observe` reached `error-limit` (on-error sudden-death, mark-down): the counter is moved
  // before the failure that follows is reported. Stays within 0..top(); the state is unchanged.
  void move_to(int health) { health_ = health < 0 ? 0 : health > top() ? top() : health; }
  int rise() const { return rise_; }
  int fall() const { return fall_; }
  int top() const { return rise_ + fall_ - 1; }
  bool up() const { return up_; }
  // Whether the last failed report counted as a failed check (HAProxy counts failures only
  // while health > 0, i.e. not while the server is already fully DOWN).
  bool last_failure_counted() const { return last_failure_counted_; }

 private:
  int rise_, fall_;
  int health_;
  bool up_;
  bool last_failure_counted_ = false;
};

// Delay until the next check: inter while fully healthy, downinter while fully DOWN,
// fastinter while in between (HAProxy's srv_getinter); unset ones fall back to inter.
uint32_t next_interval(const Health& h, const Intervals& iv);

}  // namespace sluice::check
