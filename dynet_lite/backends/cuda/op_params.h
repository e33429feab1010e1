#pragma once
// The inline parameters (Node::params) of the ops that have GPU kernels, as the
// family files under ops/ lay them out.  Those structs live in anonymous
// namespaces of ops/<family>.cc, so the layouts are repeated here: a change to
// one of them must be made here too (tests/test_cuda.cc compares every GPU
// kernel with the CPU one, which catches a mismatch on a GPU machine).
#include <cstdint>
#include <vector>

#include "dynet_lite/dim.h"

namespace dynet_lite {

class ParameterStorage;
class LookupParameterStorage;

namespace cuda_params {

// ops/inputs.cc
struct InputParams {
  const float* data = nullptr;
  const std::vector<float>* pdata = nullptr;
  const float* pscalar = nullptr;
  const unsigned* sparse_ids = nullptr;
  unsigned nsparse = 0;
  float scalar = 0.f;
  float defdata = 0.f;
};
struct FillParams {
  float a = 0.f;
  float b = 0.f;
};
struct ParamParams {
  ParameterStorage* p = nullptr;
  LookupParameterStorage* lp = nullptr;
};
struct LookupParams {
  LookupParameterStorage* lp = nullptr;
  const unsigned* indices = nullptr;
  const unsigned* pindex = nullptr;
  const std::vector<unsigned>* pindices = nullptr;
  unsigned index = 0;
};

// ops/unary.cc UnaryParams, ops/arith.cc ScalarParams, ops/shape.cc ScaleParams:
// one float each.
struct OneFloat {
  float a = 0.f;
};

// ops/softmax.cc
struct SoftmaxParams {
  unsigned dim = 0;
};
struct PnlsParams {
  const unsigned* indices = nullptr;
  const unsigned* pindex = nullptr;
  const std::vector<unsigned>* pindices = nullptr;
  unsigned index = 0;
  unsigned count = 1;
};

// ops/shape.cc
struct IndexSource {
  const unsigned* values = nullptr;
  const std::vector<unsigned>* pvec = nullptr;
  const unsigned* pone = nullptr;
  unsigned one = 0;
  unsigned count = 1;
  unsigned dim = 0;
  bool per_batch = false;
};
struct RangeParams {
  unsigned start = 0, end = 0, dim = 0;
};
struct ConcatParams {
  unsigned dim = 0;
};

// ops/random.cc
struct RandomParams {
  float p = 0.f;
  unsigned dim = 0;
};

// ops/reduce.cc
struct DimReduceParams {
  uint32_t mask = 0;
  bool batch = false;
};

// ops/matrix.cc
struct TransposeParams {
  unsigned char perm[DYNET_MAX_TENSOR_DIM];
  unsigned char n;
};

// ops/lstm.cc
struct GatesParams {
  float weightnoise_std = 0.f;
};

// ops/treelstm.cc
struct TreeParams {
  unsigned n = 0;
};

}  // namespace cuda_params
}  // namespace dynet_lite
