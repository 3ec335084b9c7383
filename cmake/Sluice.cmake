# Common flags and the one-library-per-folder helper.
include(${CMAKE_CURRENT_LIST_DIR}/BuildSpeed.cmake)
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
  # UBSan's pointer-overflow check (pointer arithmetic that wraps) is the costly one to compile
  # with g++ 12: the largest unity batch of the config module took 33 s with it and 19 s
  # without, and it is most of why the asan build took longer than the release one. What it
  # would catch in practice, a pointer moved outside its object and then used, ASan reports at
  # the access. Every other UBSan check stays.
  if(SLUICE_SANITIZE MATCHES "undefined" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-fno-sanitize=pointer-overflow)
  endif()
endif()

# Module layering (docs/architecture.md, "Module dependencies"). src/ itself is never an include
# directory. Each module <m> gets its own include root, ${PROJECT_BINARY_DIR}/include/<m>/, that
# holds one symlink per module it may include, named after it and pointing at src/<that module>:
# <m> itself and every module it depends on, directly or through the DEPS of its DEPS. So
# #include "net/address.h" resolves only in a module that depends on net. The root is PUBLIC:
# whatever links sluice_<m> (its unit tests, fuzz targets, benchmarks, the app) sees <m> and
# what <m> depends on, never more. A module may depend only on modules defined before it (the
# add_subdirectory order in CMakeLists.txt), so there is no cycle. scripts/check_module_deps.py
# checks the same rule from the sources, without a build, first in scripts/test.sh.

# _sluice_closure(<out> <who> <deps>...): the modules named by the sluice_<m> entries of <deps>
# and everything they depend on, sorted. Other entries (fmt::fmt, Threads::Threads) are skipped.
function(_sluice_closure out who)
  set(mods)
  foreach(dep ${ARGN})
    if(dep MATCHES "^sluice_(.+)$")
      set(m ${CMAKE_MATCH_1})
      get_property(known GLOBAL PROPERTY SLUICE_MODULE_CLOSURE_${m} SET)
      if(NOT known)
        message(FATAL_ERROR "${who}: ${dep} is not a module defined before it. A module may "
                "depend only on modules below it: add_subdirectory(src/${m}) must come first "
                "in CMakeLists.txt, and ${m} must not depend on ${who} (docs/architecture.md, "
                "\"Module dependencies\").")
      endif()
      get_property(c GLOBAL PROPERTY SLUICE_MODULE_CLOSURE_${m})
      list(APPEND mods ${c})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES mods)
  list(SORT mods)
  set(${out} ${mods} PARENT_SCOPE)
endfunction()

# _sluice_include_root(<name> <modules>...): (re)creates ${PROJECT_BINARY_DIR}/include/<name>/
# with one symlink per module, so a DEPS change at the next configure drops the old links.
function(_sluice_include_root name)
  set(root ${PROJECT_BINARY_DIR}/include/${name})
  file(MAKE_DIRECTORY ${root})
  file(GLOB old LIST_DIRECTORIES true ${root}/*)
  foreach(entry ${old})
    if(IS_SYMLINK ${entry})
      file(REMOVE ${entry})   # removes the link only, never what it points at
    endif()
  endforeach()
  foreach(m ${ARGN})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${m} ${root}/${m} SYMBOLIC)
  endforeach()
endfunction()

# sluice_module(<name> DEPS <other modules or libs>...)
# Builds src/<name>/*.cc into the static library sluice_<name>. Code writes
# #include "<module>/<header>.h" (e.g. "net/address.h") for <name> itself and the modules in
# DEPS and their DEPS; any other module's header is not found.
function(sluice_module name)
  cmake_parse_arguments(M "" "" "DEPS" ${ARGN})
  _sluice_closure(deps sluice_${name} ${M_DEPS})
  set(mods ${name} ${deps})
  list(SORT mods)
  set_property(GLOBAL PROPERTY SLUICE_MODULE_CLOSURE_${name} ${mods})
  _sluice_include_root(${name} ${mods})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  add_library(sluice_${name} STATIC ${srcs})
  sluice_build_speed(sluice_${name})
  target_include_directories(sluice_${name} PUBLIC ${PROJECT_BINARY_DIR}/include/${name})
  target_link_libraries(sluice_${name} PUBLIC ${M_DEPS})
endfunction()

# sluice_executable(<target> DEPS <modules or libs>...)
# Builds src/<folder>/*.cc into the executable <target>; its code includes "<folder>/..." and the
# modules it links (and their DEPS), nothing else.
function(sluice_executable target)
  cmake_parse_arguments(M "" "" "DEPS" ${ARGN})
  get_filename_component(name ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  _sluice_closure(deps ${name} ${M_DEPS})
  set(mods ${name} ${deps})
  list(SORT mods)
  _sluice_include_root(${name} ${mods})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  add_executable(${target} ${srcs})
  sluice_build_speed(${target})
  target_include_directories(${target} PRIVATE ${PROJECT_BINARY_DIR}/include/${name})
  target_link_libraries(${target} PRIVATE ${M_DEPS})
endfunction()
