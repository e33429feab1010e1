#include "dynet_lite/ops/op_table.h"

#include "dynet_lite/backends/cpu/isa.h"

#include <string>
#include <vector>

#include "dynet_lite/backends/gpu_backend.h"

#if DYNET_LITE_HAVE_ISA_AVX2
extern "C" void dynet_lite_register_cpu_ops_avx2(dynet_lite::OpTable& t);
#endif
#if DYNET_LITE_HAVE_ISA_AVX512
extern "C" void dynet_lite_register_cpu_ops_avx512(dynet_lite::OpTable& t);
#endif

namespace dynet_lite {

namespace {

// The ops a graph may merge when their arguments and parameters are equal
// (OpInfo::pure; inputs.cc marks its own leaves).  Left out: inputs and random
// ops, ops whose indices may be read through a user's pointer at forward time
// (pick, pickneglogsoftmax, hinge, select_rows, ...), and the rarer ops, which
// gain nothing from it.
void mark_pure_ops(OpTable& t) {
  // clang-format off
  static const OpKind kPure[] = {
      OpKind::Add, OpKind::Subtract, OpKind::CMult, OpKind::CDiv, OpKind::Negate, OpKind::AddScalar,
      OpKind::MultiplyScalar, OpKind::ScalarMinus, OpKind::ScalarDivide, OpKind::Pow, OpKind::Max, OpKind::Min,
      OpKind::Sum, OpKind::Tanh, OpKind::Logistic, OpKind::Rectify, OpKind::Elu, OpKind::Selu, OpKind::Silu,
      OpKind::Softsign, OpKind::Exp, OpKind::Log, OpKind::Sqrt, OpKind::Square, OpKind::Cube, OpKind::Abs,
      OpKind::Erf, OpKind::LogSigmoid, OpKind::MatMul, OpKind::AffineTransform, OpKind::Transpose, OpKind::Softmax,
      OpKind::LogSoftmax, OpKind::LogSumExp, OpKind::SquaredDistance, OpKind::L1Distance, OpKind::SquaredNorm,
      OpKind::L2Norm, OpKind::DotProduct, OpKind::SumElems, OpKind::SumBatches, OpKind::SumDim,
      OpKind::MeanElems, OpKind::MeanBatches, OpKind::MeanDim, OpKind::Reshape, OpKind::PickRange,
      OpKind::Concatenate, OpKind::ConcatenateToBatch, OpKind::NoBackprop, OpKind::FlipGradient,
      OpKind::ScaleGradient, OpKind::LayerNorm, OpKind::VanillaLSTMGates, OpKind::VanillaLSTMC,
      OpKind::VanillaLSTMH, OpKind::TreeLSTMGates, OpKind::TreeLSTMGatesAffine, OpKind::TreeLSTMC,
      OpKind::TreeLSTMH};
  // clang-format on
  for (OpKind op : kPure) t.row(op).pure = true;
}

// The rows with the CPU kernels of one instruction set (backends/cpu/isa.h).
void register_cpu_ops(OpTable& t, cpu::Isa isa) {
  switch (isa) {
    case cpu::Isa::Baseline:
      break;
    case cpu::Isa::Avx2:
#if DYNET_LITE_HAVE_ISA_AVX2
      return dynet_lite_register_cpu_ops_avx2(t);
#else
      break;
#endif
    case cpu::Isa::Avx512:
#if DYNET_LITE_HAVE_ISA_AVX512
      return dynet_lite_register_cpu_ops_avx512(t);
#else
      break;
#endif
  }
  register_cpu_ops(t);
}

struct FilledTable {
  OpTable table;
  std::vector<std::string> incomplete_names;
  std::vector<const char*> incomplete;
  explicit FilledTable(cpu::Isa isa) {
    register_cpu_ops(table, isa);
    register_cuda_kernels(table);
    mark_pure_ops(table);
    for (unsigned i = 0; i < kNumOps; ++i) {
      const OpInfo& r = table.row(static_cast<OpKind>(i));
      bool has_backward = r.backward[0] || r.accumulate || r.blocks_gradient;
      if (!r.name || !r.shape || !r.forward[0] || !has_backward)
        incomplete_names.push_back(r.name ? std::string(r.name) : "op #" + std::to_string(i));
    }
    for (const std::string& s : incomplete_names) incomplete.push_back(s.c_str());
  }
};

// One table per instruction set, filled when first used.
template <cpu::Isa kIsa>
const FilledTable& filled_for() {
  static const FilledTable t(kIsa);
  return t;
}
const FilledTable& filled() {
  switch (cpu::active_isa()) {
    case cpu::Isa::Avx2:
      return filled_for<cpu::Isa::Avx2>();
    case cpu::Isa::Avx512:
      return filled_for<cpu::Isa::Avx512>();
    case cpu::Isa::Baseline:
      break;
  }
  return filled_for<cpu::Isa::Baseline>();
}
}  // namespace

const OpInfo& op_info(OpKind op) { return filled().table.row(op); }
const OpInfo* op_rows() { return &filled().table.row(static_cast<OpKind>(0)); }

const char* const* incomplete_ops(unsigned* count) {
  *count = static_cast<unsigned>(filled().incomplete.size());
  return filled().incomplete.data();
}

}  // namespace dynet_lite
