// Products whose weight exceeds the caches, through oneDNN's sgemm (see
// library_gemm in gemm.h for which products go here and why).
//
// oneDNN is loaded on the first such product, not when the program starts:
// mapping it (with its OpenMP runtime) costs a few megabytes of resident memory
// that a program whose products all stay in the caches would pay for nothing.
// Where it cannot be loaded, the products stay with our own kernels.
#include "dynet_lite/backends/cpu/gemm.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#ifdef DYNET_LITE_HAVE_ONEDNN
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_version.h>

#endif

namespace dynet_lite {
namespace cpu {
namespace detail {

namespace {
thread_local bool library_called = false;  // since release_library_heap()
}  // namespace

void release_library_heap() {
  if (!library_called) return;
  library_called = false;
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 33)
  // Only when megabytes lie free: trimming gives pages back that the next
  // graph would otherwise reuse without a page fault.  The top of the heap
  // keeps kKeepBytes: there lies the buffer oneDNN's sgemm takes and frees at
  // every call (6.3 MB at the language model's shapes), which the next graph
  // would otherwise fault in again page by page.
  constexpr size_t kFreeBytes = size_t(8) << 20, kKeepBytes = size_t(8) << 20;
  if (mallinfo2().fordblks >= kFreeBytes) malloc_trim(kKeepBytes);
#endif
}

#ifdef DYNET_LITE_HAVE_ONEDNN
namespace {

#define DYNET_LITE_STR2(x) #x
#define DYNET_LITE_STR(x) DYNET_LITE_STR2(x)
// The library of the major version whose header we were built with.
constexpr const char* kLibrary = "libdnnl.so." DYNET_LITE_STR(DNNL_VERSION_MAJOR);

struct OneDnn {
  decltype(&dnnl_sgemm) sgemm = nullptr;
  int (*get_max_threads)() = nullptr;  // oneDNN's OpenMP runtime
  void (*set_num_threads)(int) = nullptr;

  OneDnn() {
    void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    sgemm = reinterpret_cast<decltype(sgemm)>(dlsym(lib, "dnnl_sgemm"));
    get_max_threads = reinterpret_cast<decltype(get_max_threads)>(dlsym(lib, "omp_get_max_threads"));
    set_num_threads = reinterpret_cast<decltype(set_num_threads)>(dlsym(lib, "omp_set_num_threads"));
    if (!sgemm || !get_max_threads || !set_num_threads) sgemm = nullptr;  // the library stays mapped, unused
  }
};

const OneDnn& onednn() {
  static const OneDnn loaded;  // thread-safe initialisation
  return loaded;
}

}  // namespace

bool library_gemm(bool ta, bool tb, size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
                  size_t ldb, float beta, float* c, size_t ldc) {
  const OneDnn& lib = onednn();
  if (!lib.sgemm) return false;
  // dynet_lite runs a graph on one thread: oneDNN's OpenMP team is held to
  // one for this call, and the caller's own setting is given back after it.
  const int caller_threads = lib.get_max_threads();
  lib.set_num_threads(1);
  // dnnl_sgemm is row-major: the column-major C = op(A) op(B) is the row-major
  // C' = op(B)' op(A)', the same memory read with the roles swapped.
  const dnnl_status_t status =
      lib.sgemm(tb ? 'T' : 'N', ta ? 'T' : 'N', static_cast<dnnl_dim_t>(n), static_cast<dnnl_dim_t>(m),
                static_cast<dnnl_dim_t>(k), 1.f, b, static_cast<dnnl_dim_t>(ldb), a, static_cast<dnnl_dim_t>(lda), beta,
                c, static_cast<dnnl_dim_t>(ldc));
  lib.set_num_threads(caller_threads);
  library_called = true;
  return status == dnnl_success;
}
#else
bool library_gemm(bool, bool, size_t, size_t, size_t, const float*, size_t, const float*, size_t, float, float*,
                  size_t) {
  return false;
}
#endif

}  // namespace detail
}  // namespace cpu
}  // namespace dynet_lite
