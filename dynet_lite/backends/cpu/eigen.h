#pragma once
// Eigen views over tensor memory for the CPU kernels.  Column-major, like DyNet:
// element (r, c) of a matrix is at v[c * rows + r]; batch element b follows b-1.
#include <Eigen/Dense>

#include "dynet_lite/tensor.h"

namespace dynet_lite {
namespace cpu {

using MatMap = Eigen::Map<Eigen::MatrixXf>;
using VecMap = Eigen::Map<Eigen::VectorXf>;
using ArrMap = Eigen::Map<Eigen::ArrayXf>;

/// All elements as one vector / array.
inline VecMap vec(const Tensor& t) { return VecMap(t.v, static_cast<Eigen::Index>(t.d.size())); }
inline ArrMap arr(const Tensor& t) { return ArrMap(t.v, static_cast<Eigen::Index>(t.d.size())); }
/// rows x (everything else, batch included) — the batch elements side by side.
inline MatMap mat(const Tensor& t) {
  Eigen::Index r = t.d.rows();
  return MatMap(t.v, r, r ? static_cast<Eigen::Index>(t.d.size()) / r : 0);
}
/// Batch element b as rows x cols (broadcasting a batch of 1).
inline MatMap batch_mat(const Tensor& t, unsigned b) {
  Eigen::Index r = t.d.rows();
  return MatMap(t.batch_ptr(b), r, r ? static_cast<Eigen::Index>(t.d.batch_size()) / r : 0);
}
inline VecMap batch_vec(const Tensor& t, unsigned b) {
  return VecMap(t.batch_ptr(b), static_cast<Eigen::Index>(t.d.batch_size()));
}
inline ArrMap batch_arr(const Tensor& t, unsigned b) {
  return ArrMap(t.batch_ptr(b), static_cast<Eigen::Index>(t.d.batch_size()));
}

}  // namespace cpu
}  // namespace dynet_lite
