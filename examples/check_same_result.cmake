# Runs two commands of an example and checks that they print the same result:
# the first match of MATCH in each output (stdout and stderr together) must be
# found and be equal, for the example tests of options that must not change
# what a program computes (--compile).
#   cmake -DRUN_A=<exe|arg|...> -DRUN_B=<exe|arg|...> -DMATCH=<regex> -P check_same_result.cmake
if(NOT RUN_A OR NOT RUN_B OR NOT MATCH)
  message(FATAL_ERROR "check_same_result.cmake needs -DRUN_A=..., -DRUN_B=... and -DMATCH=...")
endif()
foreach(which A B)
  string(REPLACE "|" ";" cmd "${RUN_${which}}")
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${which} exited with ${rc}:\n${out}${err}")
  endif()
  string(REGEX MATCH "${MATCH}" found "${out}${err}")
  if(NOT found)
    message(FATAL_ERROR "run ${which} printed nothing matching '${MATCH}':\n${out}${err}")
  endif()
  set(result_${which} "${found}")
  message("${which}: ${found}")
endforeach()
if(NOT result_A STREQUAL result_B)
  message(FATAL_ERROR "the two runs differ:\n  ${result_A}\n  ${result_B}")
endif()
