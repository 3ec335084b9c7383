#include "base/thread_owner.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace sluice::base {

void ThreadOwner::violated(const char* what, const SourceLocation& where) const {
  std::ostringstream ids;
  ids << "owner thread " << owner() << ", called from thread " << std::this_thread::get_id();
  std::fprintf(stderr, "sluice: %s used off its thread in %s at %s:%u (%s)\n", what,
               where.function_name(), where.file_name(), static_cast<unsigned>(where.line()),
               ids.str().c_str());
  std::abort();
}

}  // namespace sluice::base
