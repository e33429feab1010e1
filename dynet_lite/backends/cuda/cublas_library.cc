// Opens libcublas with dlopen (see cublas_library.h for why).
#include "dynet_lite/backends/cuda/cublas_library.h"

#include <dlfcn.h>

#include <string>

#include "dynet_lite/backends/cuda/cuda_check.h"

namespace dynet_lite {
namespace cuda {

namespace {

#define DYNET_LITE_STRINGIZE2(x) #x
#define DYNET_LITE_STRINGIZE(x) DYNET_LITE_STRINGIZE2(x)
// The major version the headers describe: its ABI is what the table assumes.
constexpr const char* kLibraryName = "libcublas.so." DYNET_LITE_STRINGIZE(CUBLAS_VER_MAJOR);

template <class F>
void bind(void* handle, const char* symbol, F& out) {
  void* p = dlsym(handle, symbol);
  if (!p) throw cuda_error(std::string("cuBLAS: ") + kLibraryName + " has no entry point " + symbol);
  out = reinterpret_cast<F>(p);
}

CublasLibrary open_library() {
  // Kept open for the life of the process: handles made from it outlive any scope here.
  void* handle = dlopen(kLibraryName, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw cuda_error(std::string("cuBLAS: cannot open ") + kLibraryName + ": " + (why ? why : "unknown error") +
                     " (install the CUDA toolkit's cuBLAS, or put its folder on LD_LIBRARY_PATH)");
  }
  CublasLibrary lib{};
  bind(handle, "cublasCreate_v2", lib.create);
  bind(handle, "cublasDestroy_v2", lib.destroy);
  bind(handle, "cublasSetStream_v2", lib.set_stream);
  bind(handle, "cublasSetMathMode", lib.set_math_mode);
  bind(handle, "cublasSetWorkspace_v2", lib.set_workspace);
  bind(handle, "cublasSgemm_v2", lib.sgemm);
  bind(handle, "cublasSgemmStridedBatched", lib.sgemm_strided_batched);
  return lib;
}

}  // namespace

const CublasLibrary& cublas_library() {
  static const CublasLibrary lib = open_library();
  return lib;
}

}  // namespace cuda
}  // namespace dynet_lite
