# Build speed: what makes the whole suite (scripts/test.sh, three presets on a 2-core CI machine)
# fit its time budget, without changing what is built or tested. README, "Build modes" and
# "CI", says which preset uses what.
#
# Unity builds (SLUICE_UNITY, ON in the asan and tsan presets). CMake concatenates up to
# SLUICE_UNITY_BATCH sources of one target into one translation unit, so the heavy headers
# (fmt, gtest, the standard library) are parsed once per batch instead of once per file. The
# sanitizer builds compile every file exactly once, so they win most; release and debug keep one
# object per file, which incremental development wants.
#
# A unity batch puts several .cc files in one translation unit, so two files of one target that
# define the same name at namespace scope (most often in an anonymous namespace: a helper
# `parse()`, a fixture `Fixture`, a constant `kPort`) no longer compile together: "redefinition of
# ...". The fix, best first:
#   1. rename the helper so it says what it does (`parse_backend_line`), or move it into a
#      header both share;
#   2. otherwise add the file to SLUICE_UNITY_SKIP below: it then compiles on its own, as in a
#      release build, and the rest of its folder stays batched.
# New files need nothing: every target made by sluice_module, sluice_executable, the unit test
# loop and the fuzz loop is batched automatically. `cmake --preset asan && cmake --build
# --preset asan` shows a clash at once.
option(SLUICE_UNITY "Unity (jumbo) builds: faster full builds, slower incremental ones" OFF)
set(SLUICE_UNITY_BATCH 8 CACHE STRING "Sources per unity translation unit")

# Sources, relative to the top of the tree, that never go into a unity batch (see above). An entry
# ending in "/" names a whole folder, for one whose convention is per-file names: every
# src/sample/ file defines its own kFetches / kConvs table and its helpers in an anonymous
# namespace, so new files there need no entry.
set(SLUICE_UNITY_SKIP
  src/sample/
  tests/unit/sample/
  tests/unit/lb/roundrobin_test.cc               # servers()
  tests/unit/net/transport_test.cc               # Kind (another file's alias of ShardsSetting::Kind)
  tests/unit/net/transport_readiness_test.cc     # Kind
  tests/unit/proxy/h1_connection_test.cc         # kGetA
  tests/unit/proxy/tcp_session_test.cc
)

# sluice_build_speed(<target>): applies the unity settings above to <target>. Called by every
# helper that creates a target (cmake/Sluice.cmake, tests/, fuzz/, bench/).
function(sluice_build_speed target)
  if(NOT SLUICE_UNITY)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${SLUICE_UNITY_BATCH})
  get_target_property(srcs ${target} SOURCES)
  foreach(src ${srcs})
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE OUTPUT_VARIABLE abs)
    cmake_path(RELATIVE_PATH abs BASE_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE rel)
    set(skip OFF)
    foreach(entry ${SLUICE_UNITY_SKIP})
      string(LENGTH "${entry}" n)
      string(SUBSTRING "${rel}" 0 ${n} head)
      if(rel STREQUAL entry OR (entry MATCHES "/$" AND head STREQUAL entry))
        set(skip ON)
      endif()
    endforeach()
    if(skip)
      set_source_files_properties(${src} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()

# Linker: lld (Debian's lld package, in scripts/setup.sh) links the big sanitizer test binaries
# several times faster than GNU ld; mold, when installed, faster still. SLUICE_LINKER=default
# keeps the compiler's own choice; "auto" picks the fastest one that links a test program.
set(SLUICE_LINKER auto CACHE STRING "Linker: auto, default, mold, lld, gold or bfd")
if(NOT SLUICE_LINKER STREQUAL "default")
  include(CheckLinkerFlag)
  if(SLUICE_LINKER STREQUAL "auto")
    set(candidates mold lld)
  else()
    set(candidates ${SLUICE_LINKER})
  endif()
  set(chosen "")
  foreach(ld ${candidates})
    # Checked with the sanitizer flags in place, since those add their own runtime to the link.
    set(CMAKE_REQUIRED_LINK_OPTIONS)
    if(SLUICE_SANITIZE)
      set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=${SLUICE_SANITIZE})
    endif()
    check_linker_flag(CXX -fuse-ld=${ld} SLUICE_HAVE_LD_${ld})
    if(SLUICE_HAVE_LD_${ld})
      set(chosen ${ld})
      break()
    endif()
  endforeach()
  if(chosen)
    add_link_options(-fuse-ld=${chosen})
    message(STATUS "sluice: linking with ${chosen}")
  elseif(NOT SLUICE_LINKER STREQUAL "auto")
    message(FATAL_ERROR "sluice: SLUICE_LINKER=${SLUICE_LINKER} cannot link a test program")
  endif()
endif()
