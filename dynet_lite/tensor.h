#pragma once
/// \file tensor.h
/// A view of float memory with a shape.  Tensors never own memory: values live
/// in graph arenas or parameter storage.
#include <iosfwd>
#include <utility>
#include <vector>

#include "dynet_lite/devices.h"
#include "dynet_lite/dim.h"
#include "dynet_lite/index-tensor.h"

namespace dynet_lite {

using real = float;

struct Tensor {
  Dim d;
  float* v = nullptr;
  Device* device = nullptr;
  DeviceMempool mem_pool = DeviceMempool::NONE;

  Tensor() = default;
  Tensor(const Dim& d, float* v, Device* dev, DeviceMempool mp) : d(d), v(v), device(dev), mem_pool(mp) {}

  /// Pointer to the first element of batch element b (broadcasting a batch of 1).
  float* batch_ptr(unsigned b) const { return v + (d.bd == 1 ? 0 : b) * d.batch_size(); }
  /// A view of batch element b.
  Tensor batch_elem(unsigned b) const {
    Tensor t(d.single_batch(), batch_ptr(b), device, mem_pool);
    return t;
  }
  std::vector<Tensor> batch_elems() const;
  bool is_valid() const;  ///< no NaN or infinity
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// All elements (batch elements one after the other), copied to the host.
std::vector<float> as_vector(const Tensor& t);
/// The only element of a one-element tensor; throws otherwise.
float as_scalar(const Tensor& t);

/// DyNet's helpers to read and write tensors.
struct TensorTools {
  static void clip(Tensor& d, float left, float right);
  static void constant(Tensor& d, float c);
  static void zero(Tensor& d);
  static void identity(Tensor& val);
  static void randomize_bernoulli(Tensor& val, real p, real scale = 1.0f);
  static void randomize_normal(Tensor& val, real mean = 0.0f, real stddev = 1.0f);
  static void randomize_uniform(Tensor& val, real left = -1.0f, real right = 1.0f);
  static void randomize_orthonormal(Tensor& val, real scale = 1.0f);
  static float access_element(const Tensor& v, int index);
  static float access_element(const Tensor& v, const Dim& index);
  static void set_element(const Tensor& v, int index, float value);
  static void copy_element(const Tensor& l, int lindex, Tensor& r, int rindex);
  static void set_elements(const Tensor& v, const std::vector<float>& vec);
  static std::vector<float> get_elements(const Tensor& v);
  static void copy_elements(Tensor& v, const Tensor& v_src);
  static void accumulate(Tensor& v, const Tensor& v_src);
  /// The index of the largest element along dimension `dim` (< v.d.nd) of every
  /// slice of v (batch elements included): shape v.d with d[dim] = 1; the first
  /// of equal maxima.  num must be 1 (as in DyNet); throws otherwise.
  static IndexTensor argmax(const Tensor& v, unsigned dim = 0, unsigned num = 1);
  /// A sample of each slice along `dim` read as log-probabilities (unnormalised
  /// is fine): argmax of v + Gumbel noise, from the global random engine
  /// (--dynet-seed).  num must be 1.
  static IndexTensor categorical_sample_log_prob(const Tensor& v, unsigned dim = 0, unsigned num = 1);
  /// The `num` largest elements along `dim` of every slice, largest first (equal
  /// values in index order), and their indices: shapes v.d with d[dim] = num.
  /// The values (host memory, CPU device) live as long as the returned
  /// IndexTensor or a copy of it.
  static std::pair<Tensor, IndexTensor> topk(const Tensor& v, unsigned dim = 0, unsigned num = 1);
};

}  // namespace dynet_lite
