#include "dynet_lite/tensor.h"

#include <Eigen/Dense>
#include <cmath>
#include <ostream>

#include "dynet_lite/core/random.h"

namespace dynet_lite {

namespace {
// Host copy of a tensor's elements (a no-op view on the CPU).
std::vector<float> host_copy(const Tensor& t) {
  std::vector<float> out(t.d.size());
  if (!out.empty()) {
    DYNET_LITE_ARG_CHECK(t.v != nullptr, "tensor of shape " << t.d << " has no value yet (forward not run)");
    t.device->copy_to_host(out.data(), t.v, out.size());
  }
  return out;
}
void write_back(const Tensor& t, const std::vector<float>& host) {
  t.device->copy_from_host(t.v, host.data(), host.size());
}
Device* dev_of(const Tensor& t) { return t.device ? t.device : cpu_device(); }
}  // namespace

std::vector<Tensor> Tensor::batch_elems() const {
  std::vector<Tensor> r;
  for (unsigned b = 0; b < d.bd; ++b) r.push_back(batch_elem(b));
  return r;
}

bool Tensor::is_valid() const {
  for (float x : host_copy(*this))
    if (!std::isfinite(x)) return false;
  return true;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  std::vector<float> h = host_copy(t);
  size_t rows = t.d.rows(), per = t.d.batch_size(), cols = rows ? per / rows : 0;
  for (unsigned b = 0; b < t.d.bd; ++b) {
    if (t.d.bd > 1) os << (b ? "\n" : "") << "batch " << b << ":\n";
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) os << (c ? " " : "") << h[b * per + c * rows + r];
      os << '\n';
    }
  }
  return os;
}

std::vector<float> as_vector(const Tensor& t) { return host_copy(t); }

float as_scalar(const Tensor& t) {
  DYNET_LITE_DIM_CHECK(t.d.size() == 1, "as_scalar: tensor of shape " << t.d << " has " << t.d.size()
                                                                       << " elements, not 1");
  return host_copy(t)[0];
}

void TensorTools::clip(Tensor& d, float left, float right) {
  auto h = host_copy(d);
  for (float& x : h) x = std::min(right, std::max(left, x));
  write_back(d, h);
}
void TensorTools::constant(Tensor& d, float c) { dev_of(d)->fill(d.v, c, d.d.size()); }
void TensorTools::zero(Tensor& d) { constant(d, 0.f); }
void TensorTools::identity(Tensor& val) {
  DYNET_LITE_DIM_CHECK(val.d.nd == 2 && val.d[0] == val.d[1],
                       "TensorTools::identity: needs a square matrix, got " << val.d);
  std::vector<float> h(val.d.size(), 0.f);
  unsigned n = val.d[0];
  for (unsigned b = 0; b < val.d.bd; ++b)
    for (unsigned i = 0; i < n; ++i) h[b * n * n + i * n + i] = 1.f;
  write_back(val, h);
}
void TensorTools::randomize_bernoulli(Tensor& val, real p, real scale) {
  std::vector<float> h(val.d.size());
  with_global_rng([&](std::mt19937& g) {
    std::bernoulli_distribution dist(p);
    for (float& x : h) x = dist(g) ? scale : 0.f;
    return 0;
  });
  write_back(val, h);
}
void TensorTools::randomize_normal(Tensor& val, real mean, real stddev) {
  std::vector<float> h(val.d.size());
  with_global_rng([&](std::mt19937& g) {
    std::normal_distribution<float> dist(mean, stddev);
    for (float& x : h) x = dist(g);
    return 0;
  });
  write_back(val, h);
}
void TensorTools::randomize_uniform(Tensor& val, real left, real right) {
  std::vector<float> h(val.d.size());
  with_global_rng([&](std::mt19937& g) {
    std::uniform_real_distribution<float> dist(left, right);
    for (float& x : h) x = dist(g);
    return 0;
  });
  write_back(val, h);
}
void TensorTools::randomize_orthonormal(Tensor& val, real scale) {
  DYNET_LITE_DIM_CHECK(val.d.nd == 2 && val.d[0] == val.d[1],
                       "randomize_orthonormal: needs a square matrix, got " << val.d);
  randomize_uniform(val, -1.f, 1.f);
  auto h = host_copy(val);
  int n = static_cast<int>(val.d[0]);
  Eigen::Map<Eigen::MatrixXf> m(h.data(), n, n);
  Eigen::JacobiSVD<Eigen::MatrixXf> svd(m, Eigen::ComputeFullU);
  m = svd.matrixU() * scale;
  write_back(val, h);
}
float TensorTools::access_element(const Tensor& v, int index) {
  DYNET_LITE_INDEX_CHECK(index >= 0 && static_cast<size_t>(index) < v.d.size(),
                         "TensorTools::access_element: index " << index << " out of range for " << v.d);
  float x;
  dev_of(v)->copy_to_host(&x, v.v + index, 1);
  return x;
}
float TensorTools::access_element(const Tensor& v, const Dim& index) {
  size_t off = 0, stride = 1;
  for (unsigned i = 0; i < index.nd; ++i) {
    DYNET_LITE_INDEX_CHECK(index.d[i] < v.d[i], "TensorTools::access_element: index " << index
                                                                                     << " out of range for " << v.d);
    off += index.d[i] * stride;
    stride *= v.d[i];
  }
  return access_element(v, static_cast<int>(off));
}
void TensorTools::set_element(const Tensor& v, int index, float value) {
  DYNET_LITE_INDEX_CHECK(index >= 0 && static_cast<size_t>(index) < v.d.size(),
                         "TensorTools::set_element: index " << index << " out of range for " << v.d);
  dev_of(v)->copy_from_host(v.v + index, &value, 1);
}
void TensorTools::copy_element(const Tensor& l, int lindex, Tensor& r, int rindex) {
  set_element(r, rindex, access_element(l, lindex));
}
void TensorTools::set_elements(const Tensor& v, const std::vector<float>& vec) {
  DYNET_LITE_DIM_CHECK(vec.size() == v.d.size(), "TensorTools::set_elements: " << vec.size()
                                                     << " values for a tensor of shape " << v.d << " ("
                                                     << v.d.size() << " elements)");
  dev_of(v)->copy_from_host(v.v, vec.data(), vec.size());
}
std::vector<float> TensorTools::get_elements(const Tensor& v) { return host_copy(v); }
void TensorTools::copy_elements(Tensor& v, const Tensor& v_src) {
  DYNET_LITE_DIM_CHECK(v.d.size() == v_src.d.size(),
                       "TensorTools::copy_elements: shapes " << v.d << " and " << v_src.d << " differ in size");
  set_elements(v, host_copy(v_src));
}
void TensorTools::accumulate(Tensor& v, const Tensor& v_src) {
  DYNET_LITE_DIM_CHECK(v.d.size() == v_src.d.size(),
                       "TensorTools::accumulate: shapes " << v.d << " and " << v_src.d << " differ in size");
  auto a = host_copy(v), b = host_copy(v_src);
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  write_back(v, a);
}
std::vector<unsigned> TensorTools::argmax(const Tensor& v, unsigned dim) {
  DYNET_LITE_DIM_CHECK(dim == 0, "TensorTools::argmax: only dimension 0 is supported, got " << dim);
  auto h = host_copy(v);
  unsigned rows = v.d.rows();
  size_t ncols = rows ? v.d.size() / rows : 0;
  std::vector<unsigned> out(ncols);
  for (size_t c = 0; c < ncols; ++c) {
    unsigned best = 0;
    for (unsigned r = 1; r < rows; ++r)
      if (h[c * rows + r] > h[c * rows + best]) best = r;
    out[c] = best;
  }
  return out;
}

}  // namespace dynet_lite
