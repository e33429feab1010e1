#pragma once
/// \file index-tensor.h
/// A tensor of indices (DyNet's IndexTensor): what TensorTools::argmax, topk
/// and categorical_sample_log_prob return.
#include <cstddef>
#include <memory>
#include <vector>

#include "dynet_lite/devices.h"
#include "dynet_lite/dim.h"

// DyNet programs name the element type Eigen::DenseIndex (std::ptrdiff_t in
// Eigen); the same typedef, repeated here, lets them do so without Eigen, and
// agrees with Eigen's own where both are seen.
namespace Eigen {
typedef std::ptrdiff_t DenseIndex;
}

namespace dynet_lite {

/// Indices with a shape, laid out like a Tensor's values.  The ones TensorTools
/// returns live in host memory (device is the CPU) and own it: copies share it,
/// and the last copy releases it.  `v` has DyNet's element type (Eigen::DenseIndex
/// is std::ptrdiff_t).
struct IndexTensor {
  IndexTensor() = default;
  /// A view of indices someone else owns.
  IndexTensor(const Dim& d, std::ptrdiff_t* v, Device* dev, DeviceMempool mem)
      : d(d), v(v), device(dev), mem_pool(mem) {}

  Dim d;
  std::ptrdiff_t* v = nullptr;
  Device* device = nullptr;
  DeviceMempool mem_pool = DeviceMempool::NONE;

  /// Indices of shape `d` (and `extra_floats` floats after them) in new host
  /// memory owned by the tensor.
  static IndexTensor allocate(const Dim& d, size_t extra_floats = 0);
  /// The floats allocate() reserved after the indices.
  float* extra() const { return extra_; }

 private:
  std::shared_ptr<std::ptrdiff_t> memory_;
  float* extra_ = nullptr;
};

/// All indices, batch elements one after the other.
std::vector<std::ptrdiff_t> as_vector(const IndexTensor& v);

}  // namespace dynet_lite
