# Registers one ctest test per googletest suite of a test executable (VLBIAS_TESTS_PER_SUITE).
#
# Run after each link of the executable (cmake -P), as gtest_discover_tests does for single
# tests: lists the executable's tests and writes SUITES_FILE, which the ctest file of the
# directory includes. Each suite runs in one process with --gtest_filter=SUITE.*: the ≈ 75 ms a
# test process costs before it tests anything is paid once per suite instead of once per test,
# and what a suite loads once (a face detector, the example runs) is loaded once
# (bench/ci_budget.md). Each process writes its results to XML_DIR/<executable>.<suite>.xml, which
# scripts/test.sh reads to count the tests inside the suites.
#
# Inputs (-D): EXE, PREFIX (prepended to each suite's name, e.g. "release."), SUITES_FILE,
# XML_DIR, WORKING_DIRECTORY, PROPERTIES_VAR (the name of a variable that the including ctest
# file sets to the tests' properties).
foreach(input EXE SUITES_FILE XML_DIR WORKING_DIRECTORY PROPERTIES_VAR)
  if(NOT DEFINED ${input})
    message(FATAL_ERROR "gtest_suites.cmake: ${input} is not set")
  endif()
endforeach()

execute_process(COMMAND "${EXE}" --gtest_list_tests
                WORKING_DIRECTORY "${WORKING_DIRECTORY}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gtest_suites.cmake: ${EXE} --gtest_list_tests failed (${status}):\n${listing}")
endif()

# A suite's line starts in the first column and ends with '.', possibly followed by a comment
# ("Typed/0.  # TypeParam = int"); its tests are the indented lines below it.
string(REPLACE "\n" ";" lines "${listing}")
# Two executables may hold suites of one name: the executable's name keeps their files apart.
get_filename_component(exe_name "${EXE}" NAME)
set(content "# Written by cmake/gtest_suites.cmake from ${EXE} --gtest_list_tests\n")
set(suites 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    set(name "${PREFIX}${suite}")
    string(REPLACE "/" "_" xml_name "${exe_name}.${suite}")
    string(APPEND content
      "add_test([==[${name}]==] \"${EXE}\" [==[--gtest_filter=${suite}.*]==] "
      "[==[--gtest_output=xml:${XML_DIR}/${xml_name}.xml]==])\n"
      "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==] "
      "\${${PROPERTIES_VAR}})\n")
    math(EXPR suites "${suites} + 1")
  endif()
endforeach()
if(suites EQUAL 0)
  message(FATAL_ERROR "gtest_suites.cmake: ${EXE} lists no test suite")
endif()
file(WRITE "${SUITES_FILE}" "${content}")
