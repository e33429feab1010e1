# Runs an example program and checks both its exit status and its output, for
# the example tests (ctest's PASS_REGULAR_EXPRESSION alone would ignore the status).
#   cmake -DRUN=<exe|arg|arg...> -DEXPECT=<regex> [-DEXPECT_FAIL=ON] [-DINPUT=file]
#         -P check_example.cmake
# EXPECT is matched against stdout and stderr together.  With EXPECT_FAIL the
# program must exit non-zero (a user error reported cleanly, not a crash).
if(NOT RUN OR NOT DEFINED EXPECT)
  message(FATAL_ERROR "check_example.cmake needs -DRUN=... and -DEXPECT=...")
endif()
string(REPLACE "|" ";" RUN "${RUN}")
if(INPUT)
  execute_process(COMMAND ${RUN} INPUT_FILE "${INPUT}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
else()
  execute_process(COMMAND ${RUN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
message("${out}${err}")
if(EXPECT_FAIL)
  if(rc EQUAL 0)
    message(FATAL_ERROR "expected a non-zero exit status, got 0")
  endif()
  if(NOT rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "the program crashed: ${rc}")
  endif()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit status ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "output does not match '${EXPECT}'")
endif()
