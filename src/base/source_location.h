#pragma once
// std::source_location where the toolchain has it, else the same three facts from the
// compiler's builtins: clang 14 (the `fuzz` preset's compiler) with libstdc++ 12 has no
// std::source_location, since that header needs __builtin_source_location (clang 15).
#include <cstdint>
#if __has_include(<source_location>)
#include <source_location>
#endif

namespace sluice::base {

#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
struct SourceLocation {
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          const char* function = __builtin_FUNCTION(),
                                          uint_least32_t line = __builtin_LINE()) {
    SourceLocation l;
    l.file_ = file;
    l.function_ = function;
    l.line_ = line;
    return l;
  }
  constexpr const char* file_name() const { return file_; }
  constexpr const char* function_name() const { return function_; }
  constexpr uint_least32_t line() const { return line_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  uint_least32_t line_ = 0;
};
#endif

}  // namespace sluice::base
