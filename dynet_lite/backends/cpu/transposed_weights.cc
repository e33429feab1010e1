#include "dynet_lite/backends/cpu/transposed_weights.h"

#include <Eigen/Core>
#include <cstring>

#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/core/arena.h"
#include "dynet_lite/core/exec_context.h"

namespace dynet_lite {

namespace {

// Where the copy pays (bench/gemm_shapes, AVX2 and AVX-512 machines): a few
// columns or more and an output of 32 rows or more.  Operands too large for the
// caches go to Eigen either way, so copying them would only cost.
bool copy_pays(size_t m, size_t k, size_t n) { return n >= 4 && k >= 32 && m * k <= (size_t(1) << 20); }
// From this many columns one product repays the copy by itself: a batched group
// of every leaf of 64 trees (1,280 columns) runs dx += W^T dy faster through the
// tiles from a copy than through the packed gemm_tn (bench/gemm_shapes
// 384 x 128 x 1280), and a 384 x 128 copy costs a few microseconds.
constexpr size_t kFirstUseColumns = 256;

}  // namespace

const float* TransposedWeights::get(const float* w, size_t m, size_t k, bool repays_at_once) {
  auto ins = seen_.try_emplace(w, Entry{static_cast<uint32_t>(m), static_cast<uint32_t>(k), nullptr});
  Entry& e = ins.first->second;
  // At the first use a single product does not repay the copy, unless it is a
  // wide one; memory read as another shape than before gets none.
  if ((ins.second && !repays_at_once) || e.m != m || e.k != k) return nullptr;
  if (!e.wt) {
    float* wt = memory_->allocate_floats(m * k);
    Eigen::Map<Eigen::MatrixXf>(wt, static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(m)) =
        Eigen::Map<const Eigen::MatrixXf>(w, static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(k)).transpose();
    e.wt = wt;
  }
  return e.wt;
}

void gemm_tn(ExecContext& ctx, const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n,
             bool accumulate) {
  if (TransposedWeights* cache = ctx.transposes()) {
    if (copy_pays(m, k, n)) {
      if (const float* wt = cache->get(w, m, k, n >= kFirstUseColumns)) {
        cpu::gemm(wt, dy, dx, k, m, n, accumulate);
        return;
      }
    }
  }
  if (!accumulate) std::memset(dx, 0, k * n * sizeof(float));
  cpu::gemm_tn(w, dy, dx, m, k, n);
}

}  // namespace dynet_lite
