# One ctest test per googletest suite of an executable, instead of one per test
# (gtest_discover_tests).
#
# Why: every ctest test is a process of its own, and a unit test is mostly the
# process's start. Under AddressSanitizer ferry_unit_tests (250 MB with its
# debug info) takes 0.3 s to start and its 881 tests take a few milliseconds
# each, so one process per test spent ~4.5 minutes of CPU of the asan stage on
# starting processes. One per suite (121) keeps ctest's parallelism and says
# which suite failed; the output names the failed test.
#
#   ferry_add_gtest_suites(<target> [LABELS <label>...])
#
# After each build of <target> its suites are listed (--gtest_list_tests) into a
# file that ctest reads (the directory's TEST_INCLUDE_FILES), as
# gtest_discover_tests does. A suite's test is named after the suite
# ("mirror_relative", "platforms/transfer_file") and runs
# <target> --gtest_filter=<suite>.*
#
# The same file, run as a script (cmake -P), writes that list.

if(CMAKE_SCRIPT_MODE_FILE)
  # Script mode: EXECUTABLE, OUTPUT, LABELS (a ,-list).
  string(REPLACE "," ";" LABELS "${LABELS}")
  execute_process(COMMAND "${EXECUTABLE}" --gtest_list_tests
                  OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status TIMEOUT 60)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${status}):\n${errors}${listing}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(text "# Written by cmake/gtest_suites.cmake after each build of ${EXECUTABLE}.\n")
  set(count 0)
  foreach(line IN LISTS lines)
    # A suite's line starts the line and ends with a dot, before an optional
    # comment ("TypeParam = ..."); its tests' lines are indented.
    if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
      set(suite "${CMAKE_MATCH_1}")
      string(APPEND text "add_test([==[${suite}]==] [==[${EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
                         "set_tests_properties([==[${suite}]==] PROPERTIES LABELS [==[${LABELS}]==])\n")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  if(count EQUAL 0)
    message(FATAL_ERROR "${EXECUTABLE} lists no test suites:\n${listing}")
  endif()
  file(WRITE "${OUTPUT}" "${text}")
  return()
endif()

function(ferry_add_gtest_suites target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LABELS")
  set(tests_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  # A ;-list cannot pass through the command line whole: ',' stands for ';'.
  string(REPLACE ";" "," labels "${arg_LABELS}")
  add_custom_command(
    TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -D "EXECUTABLE=$<TARGET_FILE:${target}>" -D "OUTPUT=${tests_file}"
            -D "LABELS=${labels}" -P "${FERRY_CMAKE_DIR}/gtest_suites.cmake"
    BYPRODUCTS "${tests_file}"
    VERBATIM)
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${tests_file}")
endfunction()
