# Proves that an installed dynet_lite is usable from another project:
#   1. cmake --install the build tree into WORK_DIR/prefix
#   2. configure tests/consumer with CMAKE_PREFIX_PATH=WORK_DIR/prefix
#   3. build it and run the program.
# Run as: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... [-DCXX_COMPILER=...]
#         [-DCONFIG=...] [-DLAUNCHER=...] -P run_consumer.cmake
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "run_consumer.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

run_step("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" --config ${CONFIG})
if(NOT EXISTS "${prefix}/lib/cmake/dynet_lite/dynet_liteConfig.cmake"
   AND NOT EXISTS "${prefix}/lib64/cmake/dynet_lite/dynet_liteConfig.cmake")
  message(FATAL_ERROR "install: no dynet_liteConfig.cmake under ${prefix}")
endif()

set(configure_args -S "${SOURCE_DIR}" -B "${WORK_DIR}/build"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${CONFIG})
if(CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run_step("configure consumer" ${CMAKE_COMMAND} ${configure_args})
run_step("build consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build" --config ${CONFIG})

find_program(consumer_exe consumer PATHS "${WORK_DIR}/build" "${WORK_DIR}/build/${CONFIG}" NO_DEFAULT_PATH)
if(NOT consumer_exe)
  message(FATAL_ERROR "the consumer program was not built")
endif()
run_step("run consumer" "${consumer_exe}")
