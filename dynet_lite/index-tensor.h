#pragma once
/// \file index-tensor.h
/// A tensor of indices (DyNet's IndexTensor): what TensorTools::argmax, topk
/// and categorical_sample_log_prob return.
#include <cstddef>
#include <memory>
#include <vector>

#include "dynet_lite/devices.h"
#include "dynet_lite/dim.h"

/// DyNet's index type, Eigen::DenseIndex, named without including Eigen in
/// every program: Eigen declares it as the same type (std::ptrdiff_t, unless a
/// program sets EIGEN_DEFAULT_DENSE_INDEX_TYPE, which then fails to compile
/// here rather than mixing two index types).
namespace Eigen {
using DenseIndex = std::ptrdiff_t;
}  // namespace Eigen

namespace dynet_lite {

/// Indices with a shape, laid out like a Tensor's values.  The ones TensorTools
/// returns live in host memory (device is the CPU) and own it: copies share it,
/// and the last copy releases it.
struct IndexTensor {
  IndexTensor() = default;
  /// A view of indices someone else owns.
  IndexTensor(const Dim& d, Eigen::DenseIndex* v, Device* dev, DeviceMempool mem)
      : d(d), v(v), device(dev), mem_pool(mem) {}

  Dim d;
  Eigen::DenseIndex* v = nullptr;
  Device* device = nullptr;
  DeviceMempool mem_pool = DeviceMempool::NONE;

  /// Indices of shape `d` (and `extra_floats` floats after them) in new host
  /// memory owned by the tensor.
  static IndexTensor allocate(const Dim& d, size_t extra_floats = 0);
  /// The floats allocate() reserved after the indices.
  float* extra() const { return extra_; }

 private:
  std::shared_ptr<Eigen::DenseIndex> memory_;
  float* extra_ = nullptr;
};

/// All indices, batch elements one after the other.
std::vector<Eigen::DenseIndex> as_vector(const IndexTensor& v);

}  // namespace dynet_lite
