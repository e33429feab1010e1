# The CUDA backend: included from dynet_lite/CMakeLists.txt when DYNET_LITE_CUDA
# is ON.  Kernels are .cu files under dynet_lite/backends/cuda/ (compiled by
# nvcc); the host side of the backend (device, init) is plain C++ there too.
#
# Architectures: 90 (H100/H200) and 80 (A100) unless the user sets
# CMAKE_CUDA_ARCHITECTURES.  Each architecture is a full device compile, so
# keep the list short: CI has two cores.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(CMAKE_CUDA_ARCHITECTURES 90 80 CACHE STRING "CUDA architectures to generate code for" FORCE)
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

file(GLOB DYNET_LITE_CUDA_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/../dynet_lite/backends/cuda/*.cu
  ${CMAKE_CURRENT_LIST_DIR}/../dynet_lite/backends/cuda/*.cc)

# Adds the CUDA sources to `target` and links the CUDA runtime.  cuBLAS is
# opened at run time by the first GPU device (backends/cuda/cublas_library.h):
# linked, it would add about 216 MB of resident memory to every CPU-only run.
function(dynet_lite_add_cuda target)
  target_sources(${target} PRIVATE ${DYNET_LITE_CUDA_SOURCES})
  target_link_libraries(${target} PUBLIC CUDA::cudart ${CMAKE_DL_LIBS})
  target_compile_definitions(${target} PUBLIC DYNET_LITE_HAVE_CUDA=1)
  set_target_properties(${target} PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_SEPARABLE_COMPILATION OFF
    CUDA_RUNTIME_LIBRARY Shared)
  # Fast float math is not wanted (results are compared with the CPU's); 186: dim.h
  # compares an unsigned template argument with 0 (fine for its signed uses);
  # --expt-relaxed-constexpr lets kernels call the constexpr helpers of dim.h.
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr;-Xcompiler=-Wall;--diag-suppress=186>")
endfunction()
