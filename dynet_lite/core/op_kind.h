#pragma once
// The operations a graph node can hold, one enumerator per op.  Their rows (name,
// shape rule, kernels per device, batching) are in the op table (core/op_info.h,
// filled by ops/).
#include <cstdint>

// The element-wise functions y = f(x) of ops/unary.cc, one line each, in their
// OpKind order:
//   X(Kind, name)    the expression name(x)
//   XA(Kind, name)   the expression name(x, a), with the op's float a (elu's alpha)
// Kind names the enumerator and the functor math::Kind (backends/elementwise_math.h)
// with the op's math; name is the expression function (declared in expr.h) and the
// op's name in the table.  The list generates the enumerators below, the expression
// functions (ops/unary.cc) and math::for_each_unary, which gives each its row.
// negate (operator-) is not in the list: its enumerator sits with the arithmetic, and
// for_each_unary and ops/unary.cc name it by hand.
#define DYNET_LITE_UNARY_OPS(X, XA) \
  X(Tanh, tanh)                     \
  X(Logistic, logistic)             \
  X(Rectify, rectify)               \
  XA(Elu, elu)                      \
  X(Selu, selu)                     \
  XA(Silu, silu)                    \
  X(Softsign, softsign)             \
  X(Exp, exp)                       \
  X(Log, log)                       \
  X(Sqrt, sqrt)                     \
  X(Square, square)                 \
  X(Cube, cube)                     \
  X(Abs, abs)                       \
  X(Erf, erf)                       \
  X(LogSigmoid, log_sigmoid)

namespace dynet_lite {

enum class OpKind : uint16_t {
  // ops/inputs.cc: leaves
  Input,
  Constant,
  RandomNormal,
  RandomUniform,
  RandomBernoulli,
  RandomGumbel,
  Parameter,
  Lookup,
  // ops/arith.cc: arithmetic with broadcasting
  Add,
  Subtract,
  CMult,
  CDiv,
  Negate,
  AddScalar,
  MultiplyScalar,
  ScalarMinus,
  ScalarDivide,
  Pow,
  Max,
  Min,
  Sum,
#define DYNET_LITE_UNARY_ENUMERATOR(Kind, name) Kind,
  // ops/unary.cc: element-wise functions, from DYNET_LITE_UNARY_OPS
  DYNET_LITE_UNARY_OPS(DYNET_LITE_UNARY_ENUMERATOR, DYNET_LITE_UNARY_ENUMERATOR)
#undef DYNET_LITE_UNARY_ENUMERATOR
  // ops/matrix.cc: products
  MatMul,
  AffineTransform,
  Transpose,
  // ops/softmax.cc
  Softmax,
  LogSoftmax,
  RestrictedLogSoftmax,
  LogSumExp,
  PickNegLogSoftmax,
  // ops/losses.cc
  Hinge,
  BinaryLogLoss,
  SquaredDistance,
  L1Distance,
  HuberDistance,
  SquaredNorm,
  L2Norm,
  DotProduct,
  // ops/reduce.cc
  SumElems,
  SumBatches,
  SumDim,
  MeanElems,
  MeanBatches,
  MeanDim,
  MaxDim,
  MinDim,
  // ops/shape.cc: selecting, reshaping, joining
  Reshape,
  Pick,
  PickRange,
  PickBatchElems,
  SelectRows,
  SelectCols,
  Concatenate,
  ConcatenateToBatch,
  NoBackprop,
  FlipGradient,
  ScaleGradient,
  // ops/random.cc: dropout and noise
  Dropout,
  DropoutDim,
  DropoutBatch,
  BlockDropout,
  Noise,
  // ops/norm.cc
  LayerNorm,
  // ops/trig.cc: more element-wise functions
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Lgamma,
  Round,
  Ceil,
  Floor,
  // ops/stats.cc: moments, cumulative sums, pooling along dimensions
  MomentElems,
  MomentDim,
  MomentBatches,
  StdElems,
  StdDim,
  StdBatches,
  Cumsum,
  LogSumExpDim,
  FoldRows,
  KMaxPooling,
  KMHNGram,
  StridedSelect,
  // ops/structured.cc: structured outputs and losses
  Sparsemax,
  SparsemaxLoss,
  ConstrainedSoftmax,
  PoissonLoss,
  PairwiseRankLoss,
  HingeDim,
  Argmax,
  OneHot,
  // ops/conv.cc: convolutions and pooling
  Conv2D,
  MaxPooling2D,
  Filter1DNarrow,
  CircConv,
  CircCorr,
  // ops/linalg.cc: tensor contractions and matrix functions
  Contract3D1D,
  Contract3D1D1D,
  Inverse,
  LogDet,
  TraceOfProduct,
  WeightNorm,
  // ops/lstm.cc: fused LSTM operations
  VanillaLSTMGates,
  VanillaLSTMGatesDropout,
  VanillaLSTMC,
  VanillaLSTMH,
  // ops/treelstm.cc: fused N-ary Tree-LSTM operations
  TreeLSTMGates,
  TreeLSTMGatesAffine,
  TreeLSTMC,
  TreeLSTMH,
  // ops/device.cc: moving values between devices
  ToDevice,
  Count
};
constexpr unsigned kNumOps = static_cast<unsigned>(OpKind::Count);
// A unary function's row comes with its line in DYNET_LITE_UNARY_OPS; every other op
// is counted here by hand.
#define DYNET_LITE_COUNT_ONE(Kind, name) +1
constexpr unsigned kNumUnaryOps = 0 DYNET_LITE_UNARY_OPS(DYNET_LITE_COUNT_ONE, DYNET_LITE_COUNT_ONE);
#undef DYNET_LITE_COUNT_ONE
static_assert(kNumOps == 117 + kNumUnaryOps, "a new op needs its row in the table: update this count with it");

}  // namespace dynet_lite
