#pragma once
// cuBLAS, opened on first use.  Loading libcublas (and the libcublasLt it pulls
// in) costs a process about 216 MB of resident memory, so a program that never
// touches a GPU must not pay it: the library is opened with dlopen when the
// first GPU device is made, and its entry points are called through this table.
#include <cublas_v2.h>

namespace dynet_lite {
namespace cuda {

/// The cuBLAS entry points dynet_lite calls (the _v2 API of cublas_v2.h).
struct CublasLibrary {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSetWorkspace_v2) set_workspace;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
};

/// The loaded library; the first call opens it.  Throws cuda_error naming the
/// library file and the loader's message when it cannot be opened or lacks an
/// entry point.
const CublasLibrary& cublas_library();

}  // namespace cuda
}  // namespace dynet_lite
