#pragma once
// The inline parameters (Node::params) of the ops that the CPU kernels (ops/)
// and the CUDA kernels (backends/cuda/) both read: one layout per op, here.
// Graphs compare parameters byte by byte (core/cse.h), so no struct may have
// padding: spare bytes are named fields, zero-initialised.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "dynet_lite/dim.h"

namespace dynet_lite {

class ParameterStorage;
class LookupParameterStorage;

namespace op_params {

// ---------------------------------------------------------------- ops/inputs.cc
struct InputParams {
  const float* data = nullptr;                // copied user data (graph memory)
  const std::vector<float>* pdata = nullptr;  // read at forward time
  const float* pscalar = nullptr;             // read at forward time
  const unsigned* sparse_ids = nullptr;       // sparse input positions
  unsigned nsparse = 0;
  float scalar = 0.f;
  float defdata = 0.f;
  unsigned unused = 0;
};
struct FillParams {
  float a = 0.f;  // constant value, mean, p, left or mu
  float b = 0.f;  // stddev, scale, right or beta
};
struct ParamParams {
  ParameterStorage* p = nullptr;
  LookupParameterStorage* lp = nullptr;  // the whole table as one matrix
};
struct LookupParams {
  LookupParameterStorage* lp = nullptr;
  const unsigned* indices = nullptr;                // copied indices (graph memory)
  const unsigned* pindex = nullptr;                 // read at forward time
  const std::vector<unsigned>* pindices = nullptr;  // read at forward time
  unsigned index = 0;
  unsigned unused = 0;
};

// ---------------------------------------------------------------- one float
// ops/unary.cc (elu's alpha, silu's beta), ops/arith.cc (the scalar c),
// ops/shape.cc (scale_gradient's lambda)
struct OneFloat {
  float a = 0.f;
};

// ---------------------------------------------------------------- ops/softmax.cc
struct SoftmaxParams {
  unsigned dim = 0;  // the dimension normalised over (0: each column, 1: each row, ...)
};
// The indices come from one of four places; `count` is the number of indices
// (1 = the same index for every batch element).
struct PnlsParams {
  const unsigned* indices = nullptr;                // copied (graph memory)
  const unsigned* pindex = nullptr;                 // read at forward time
  const std::vector<unsigned>* pindices = nullptr;  // read at forward time
  unsigned index = 0;
  unsigned count = 1;
};

// ---------------------------------------------------------------- ops/losses.cc
// hinge: its indices as pickneglogsoftmax's, and the margin.
struct HingeParams : PnlsParams {
  float margin = 1.f;
  unsigned unused = 0;
};

// ---------------------------------------------------------------- ops/shape.cc
struct IndexSource {
  const unsigned* values = nullptr;             // copied into graph memory
  const std::vector<unsigned>* pvec = nullptr;  // read at forward time
  const unsigned* pone = nullptr;               // read at forward time
  unsigned one = 0;                             // a single index by value
  unsigned count = 1;                           // number of indices, fixed when built
  unsigned dim = 0;                             // pick: the dimension
  bool per_batch = false;                       // one index per output batch element
  unsigned char unused[3] = {};
};
struct RangeParams {
  unsigned start = 0, end = 0, dim = 0;
};
struct ConcatParams {
  unsigned dim = 0;
};

// ---------------------------------------------------------------- ops/random.cc
struct RandomParams {
  float p = 0.f;     // drop probability, or the noise's standard deviation
  unsigned dim = 0;  // dropout_dim's dimension
};

// ---------------------------------------------------------------- ops/reduce.cc
// The reduced dimensions are kept as a bit mask (bit k: dimension k) so the
// parameters stay inline; `batch` also reduces the batch dimension.
struct DimReduceParams {
  uint32_t mask = 0;
  bool batch = false;
  unsigned char unused[3] = {};
};
static_assert(std::has_unique_object_representations_v<DimReduceParams>, "DimReduceParams must have no padding");
struct ArgReduceParams {
  unsigned dim = 0;
};

// ---------------------------------------------------------------- ops/matrix.cc
struct TransposeParams {
  unsigned char perm[DYNET_MAX_TENSOR_DIM] = {};  // output dim k is input dim perm[k]; zero past n
  unsigned char n = 0;
};
static_assert(std::has_unique_object_representations_v<TransposeParams>, "compared byte by byte (core/cse.h)");

// ---------------------------------------------------------------- ops/lstm.cc, ops/treelstm.cc
struct GatesParams {
  float weightnoise_std = 0.f;
};
// The arity N: fixes the layout of the gates vector ((3 + N) blocks).
struct TreeParams {
  unsigned n = 0;
};

static_assert(sizeof(InputParams) == 48 && sizeof(LookupParams) == 40 && sizeof(PnlsParams) == 32 &&
                  sizeof(HingeParams) == 40 && sizeof(IndexSource) == 40,
              "no padding: parameters are compared byte by byte");

}  // namespace op_params
}  // namespace dynet_lite
