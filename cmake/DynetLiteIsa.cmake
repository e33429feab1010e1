# Runtime instruction-set dispatch of the CPU kernels.
#
# The kernel sources (the op families, the products, the CPU caches) are compiled
# once for the baseline of the target (x86-64: SSE2), as part of the library, and
# once more for each wider instruction set below.  Each extra compile becomes one
# relocatable object whose symbols are private (cmake/isa_bundle.sh) but for its
# entry points; at start-up backends/cpu/isa.cc picks the widest set the CPU and
# the OS support, and the op table and the products use its kernels.  So one
# binary, built anywhere, runs the kernels a -march=native build would.
#
#   dynet_lite_add_isa_kernels(target SOURCES...)
#
# Eigen's alignment is the same in every compile (EIGEN_MAX_ALIGN_BYTES=64), so
# that memory Eigen allocates in one set may be freed by another.

set(DYNET_LITE_ISA_LEVELS "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set(DYNET_LITE_ISA_LEVELS avx2 avx512)
endif()
set(DYNET_LITE_ISA_FLAGS_avx2 -mavx2 -mfma -mf16c)
set(DYNET_LITE_ISA_FLAGS_avx512 -mavx512f -mavx512dq -mavx512bw -mavx512vl -mavx2 -mfma -mf16c)

function(dynet_lite_add_isa_kernels target)
  set(sources ${ARGN})
  if(DYNET_LITE_NATIVE OR NOT DYNET_LITE_ISA_DISPATCH OR NOT DYNET_LITE_ISA_LEVELS)
    return()
  endif()
  target_compile_definitions(${target} PUBLIC EIGEN_MAX_ALIGN_BYTES=64)
  foreach(isa ${DYNET_LITE_ISA_LEVELS})
    set(objects ${target}_${isa})
    add_library(${objects} OBJECT ${sources})
    dynet_lite_set_options(${objects})
    target_compile_options(${objects} PRIVATE ${DYNET_LITE_ISA_FLAGS_${isa}})
    target_compile_definitions(${objects} PRIVATE DYNET_LITE_ISA=${isa}
      $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>)
    target_include_directories(${objects} PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
    target_link_libraries(${objects} PRIVATE Eigen3::Eigen Threads::Threads)
    set_target_properties(${objects} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    set(bundle ${CMAKE_CURRENT_BINARY_DIR}/${target}_${isa}_kernels.o)
    add_custom_command(OUTPUT ${bundle}
      COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/isa_bundle.sh ${CMAKE_LINKER} ${CMAKE_NM} ${CMAKE_OBJCOPY} ${isa}
              ${bundle} $<TARGET_OBJECTS:${objects}>
      DEPENDS ${objects} $<TARGET_OBJECTS:${objects}> ${PROJECT_SOURCE_DIR}/cmake/isa_bundle.sh
      COMMAND_EXPAND_LISTS
      COMMENT "Bundling the ${isa} kernels of ${target}"
      VERBATIM)
    set_source_files_properties(${bundle} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    target_sources(${target} PRIVATE ${bundle})
    string(TOUPPER ${isa} ISA)
    target_compile_definitions(${target} PRIVATE DYNET_LITE_HAVE_ISA_${ISA}=1)
  endforeach()
endfunction()
