# Common flags and the one-library-per-folder helper.
add_compile_options(-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter)
if(SLUICE_WERROR)
  add_compile_options(-Werror)
endif()
if(SLUICE_FUZZ)
  # Instrument every library for coverage so libFuzzer steers into the parsers, not only the
  # fuzz entry points; the fuzzer runtime itself is linked into the fuzz binaries only.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(SLUICE_SANITIZE)
  add_compile_options(-fsanitize=${SLUICE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${SLUICE_SANITIZE})
endif()

# sluice_module(<name> DEPS <other modules or libs>...)
# Builds src/<name>/*.cc into the static library sluice_<name>. Includes are rooted at src/,
# so code writes #include "net/address.h".
function(sluice_module name)
  cmake_parse_arguments(M "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  add_library(sluice_${name} STATIC ${srcs})
  target_include_directories(sluice_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(sluice_${name} PUBLIC ${M_DEPS})
endfunction()
