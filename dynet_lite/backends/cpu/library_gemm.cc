// Products whose weight exceeds the caches, through oneDNN's sgemm (see
// library_gemm in gemm.h for which products go here and why).
#include "dynet_lite/backends/cpu/gemm.h"

#ifdef DYNET_LITE_HAVE_ONEDNN
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#endif

namespace dynet_lite {
namespace cpu {
namespace detail {

#ifdef DYNET_LITE_HAVE_ONEDNN
bool library_gemm(bool ta, bool tb, size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
                  size_t ldb, float beta, float* c, size_t ldc) {
  // dynet_lite runs a graph on one thread: oneDNN's OpenMP team is held to
  // one for this call, and the caller's own setting is given back after it.
  const int caller_threads = omp_get_max_threads();
  omp_set_num_threads(1);
  // dnnl_sgemm is row-major: the column-major C = op(A) op(B) is the row-major
  // C' = op(B)' op(A)', the same memory read with the roles swapped.
  const dnnl_status_t status =
      dnnl_sgemm(tb ? 'T' : 'N', ta ? 'T' : 'N', static_cast<dnnl_dim_t>(n), static_cast<dnnl_dim_t>(m),
                 static_cast<dnnl_dim_t>(k), 1.f, b, static_cast<dnnl_dim_t>(ldb), a, static_cast<dnnl_dim_t>(lda),
                 beta, c, static_cast<dnnl_dim_t>(ldc));
  omp_set_num_threads(caller_threads);
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
