#pragma once
// Status checks for the CUDA runtime and cuBLAS: a failed call throws
// cuda_error naming the call, its status and file:line.  Never aborts.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>

namespace dynet_lite {

/// A CUDA runtime or cuBLAS call failed (out of memory, no device, a kernel fault).
class cuda_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace cuda {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
/// The name of a cuBLAS status ("CUBLAS_STATUS_NOT_INITIALIZED").
const char* cublas_status_name(cublasStatus_t status);
}  // namespace cuda

}  // namespace dynet_lite

/// Throws cuda_error "<call> failed at <file>:<line>: <error name>: <description>".
#define DYNET_LITE_CUDA_CHECK(call)                                                    \
  do {                                                                                 \
    cudaError_t dynet_lite_cuda_status_ = (call);                                      \
    if (__builtin_expect(dynet_lite_cuda_status_ != cudaSuccess, 0))                   \
      ::dynet_lite::cuda::throw_cuda_error(dynet_lite_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

/// Throws cuda_error "<call> failed at <file>:<line>: CUBLAS_STATUS_...".
#define DYNET_LITE_CUBLAS_CHECK(call)                                                    \
  do {                                                                                   \
    cublasStatus_t dynet_lite_cublas_status_ = (call);                                   \
    if (__builtin_expect(dynet_lite_cublas_status_ != CUBLAS_STATUS_SUCCESS, 0))         \
      ::dynet_lite::cuda::throw_cublas_error(dynet_lite_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)

/// After a kernel launch: a bad launch configuration surfaces here, with the kernel's name.
#define DYNET_LITE_CUDA_LAUNCH_CHECK(kernel_name)                                                   \
  do {                                                                                              \
    cudaError_t dynet_lite_cuda_status_ = cudaGetLastError();                                       \
    if (__builtin_expect(dynet_lite_cuda_status_ != cudaSuccess, 0))                                \
      ::dynet_lite::cuda::throw_cuda_error(dynet_lite_cuda_status_, "launch of " kernel_name, __FILE__, __LINE__); \
  } while (0)
