# Declarative targets (in the manner of abseil's absl_cc_library): every library and test gets
# the same warnings (FLAMEFLEET_WARNINGS, set in the top-level CMakeLists.txt), the repository
# root as include directory, and libraries the alias flamefleet::<name> that other folders link.
#
#   flamefleet_cc_library(NAME file SRCS file.cc
#     PUBLIC_DEPS absl::status absl::statusor PRIVATE_DEPS ZLIB::ZLIB)
#   flamefleet_cc_test(NAME common_test SRCS file_test.cc
#     DEPS flamefleet::file GTest::gmock GTest::gtest_main)

# flamefleet_cc_library(NAME <name> [SRCS <file>...] [PUBLIC_DEPS <lib>...] [PRIVATE_DEPS <lib>...])
# Defines flamefleet_<name> and its alias flamefleet::<name>. Without SRCS it is a header-only
# INTERFACE library whose PUBLIC_DEPS are passed on to its users.
function(flamefleet_cc_library)
  cmake_parse_arguments(FF "" "NAME" "SRCS;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT FF_NAME)
    message(FATAL_ERROR "flamefleet_cc_library: NAME is required")
  endif()
  set(target flamefleet_${FF_NAME})
  if(FF_SRCS)
    add_library(${target} ${FF_SRCS})
    target_compile_options(${target} PRIVATE ${FLAMEFLEET_WARNINGS})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${FF_PUBLIC_DEPS} PRIVATE ${FF_PRIVATE_DEPS})
  else()
    if(FF_PRIVATE_DEPS)
      message(FATAL_ERROR "flamefleet_cc_library(${FF_NAME}): a header-only library has no PRIVATE_DEPS")
    endif()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${FF_PUBLIC_DEPS})
  endif()
  add_library(flamefleet::${FF_NAME} ALIAS ${target})
endfunction()

# flamefleet_cc_test(NAME <binary> SRCS <file>... [DEPS <lib>...] [DEFINES <NAME=value>...]
#                    [DISCOVERY_TIMEOUT <seconds>] [PROPERTIES <ctest property> <value>...])
# Defines one test binary and registers its cases with gtest_discover_tests, so ctest lists each;
# PROPERTIES (e.g. TIMEOUT 300 RUN_SERIAL TRUE) are set on every discovered case, and the label
# <binary>.
function(flamefleet_cc_test)
  cmake_parse_arguments(FF "" "NAME;DISCOVERY_TIMEOUT" "SRCS;DEPS;DEFINES;PROPERTIES" ${ARGN})
  if(NOT FF_NAME OR NOT FF_SRCS)
    message(FATAL_ERROR "flamefleet_cc_test: NAME and SRCS are required")
  endif()
  add_executable(${FF_NAME} ${FF_SRCS})
  target_compile_options(${FF_NAME} PRIVATE ${FLAMEFLEET_WARNINGS} ${FLAMEFLEET_TEST_OPTIONS})
  target_include_directories(${FF_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${FF_NAME} PRIVATE ${FF_DEPS})
  if(FF_DEFINES)
    target_compile_definitions(${FF_NAME} PRIVATE ${FF_DEFINES})
  endif()
  set(discover_args)
  if(FF_DISCOVERY_TIMEOUT)
    list(APPEND discover_args DISCOVERY_TIMEOUT ${FF_DISCOVERY_TIMEOUT})
  endif()
  # Every case is labelled with its binary's name, so a run can pick binaries (`ctest -L`; CI's
  # sanitizer stage runs a subset).
  list(APPEND discover_args PROPERTIES LABELS ${FF_NAME} ${FF_PROPERTIES})
  gtest_discover_tests(${FF_NAME} ${discover_args})
endfunction()
