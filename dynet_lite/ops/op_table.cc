#include "dynet_lite/ops/op_table.h"

#include "dynet_lite/backends/cpu/isa.h"

#include <string>
#include <vector>

#include "dynet_lite/backends/gpu_backend.h"
#include "dynet_lite/except.h"

#if DYNET_LITE_HAVE_ISA_AVX2
extern "C" void dynet_lite_register_cpu_ops_avx2(dynet_lite::OpTable& t);
#endif
#if DYNET_LITE_HAVE_ISA_AVX512
extern "C" void dynet_lite_register_cpu_ops_avx512(dynet_lite::OpTable& t);
#endif

namespace dynet_lite {

OpInfo& OpTable::define(OpKind op, const char* family, const char* name, ShapeFn shape, ForwardFn forward,
                        BackwardFn backward, BatchKind batch, Purity purity, Devices devices) {
  OpInfo& r = row(op);
  DYNET_LITE_ASSERT(!r.name, "op table: " << name << " is declared twice (first as " << r.name << ")");
  r.family = family;
  r.name = name;
  r.shape = shape;
  r.forward[static_cast<unsigned>(DeviceType::CPU)] = forward;
  r.backward[static_cast<unsigned>(DeviceType::CPU)] = backward;
  r.batch = batch;
  r.pure = purity == Purity::Pure;
  r.devices = devices;
  return r;
}

namespace {

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
    // A build with the CUDA backend fills a GPU column; it must match each row's Devices.
    bool cuda_built = false;
    for (unsigned i = 0; i < kNumOps; ++i) cuda_built |= table.row(static_cast<OpKind>(i)).forward[1] != nullptr;
    for (unsigned i = 0; i < kNumOps; ++i) {
      const OpInfo& r = table.row(static_cast<OpKind>(i));
      bool has_backward = r.backward[0] || r.accumulate || r.blocks_gradient;
      if (!r.name || !r.shape || !r.forward[0] || !has_backward)
        incomplete_names.push_back(r.name ? std::string(r.name) : "op #" + std::to_string(i));
      else if (cuda_built && (r.forward[1] != nullptr) != (r.devices == Devices::CpuAndCuda))
        incomplete_names.push_back(std::string(r.name) + " (CUDA kernels and the row's Devices differ)");
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
