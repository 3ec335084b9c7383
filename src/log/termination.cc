#include "log/termination.h"

namespace sluice::log {

char cause_letter(Cause c) {
  switch (c) {
    case Cause::kNone: return '-';
    case Cause::kClientClose: return 'C';
    case Cause::kClientTimeout: return 'c';
    case Cause::kServerClose: return 'S';
    case Cause::kServerTimeout: return 's';
    case Cause::kProxy: return 'P';
    case Cause::kResource: return 'R';
    case Cause::kInternal: return 'I';
    case Cause::kDown: return 'D';
    case Cause::kUp: return 'U';
    case Cause::kKilled: return 'K';
    case Cause::kLocal: return 'L';
  }
  return '?';
}

char state_letter(FinalState s) {
  switch (s) {
    case FinalState::kNone: return '-';
    case FinalState::kRequest: return 'R';
    case FinalState::kQueue: return 'Q';
    case FinalState::kConnect: return 'C';
    case FinalState::kHeaders: return 'H';
    case FinalState::kData: return 'D';
    case FinalState::kLast: return 'L';
    case FinalState::kTarpit: return 'T';
  }
  return '?';
}

std::string letters(Termination t) {
  std::string out;
  append_letters(out, t);
  return out;
}

void append_letters(std::string& out, Termination t) {
  out += cause_letter(t.cause);
  out += state_letter(t.state);
}

}  // namespace sluice::log
