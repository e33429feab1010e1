#include "dynet_lite/tensor.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <ostream>
#include <stdexcept>

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

// Sets every element of t to next() in order: straight into the tensor on the
// CPU, through a bounded host buffer elsewhere (a table of millions of floats
// is never copied whole).
template <class Next>
void fill_each(const Tensor& t, Next next) {
  const size_t n = t.d.size();
  Device* dev = dev_of(t);
  if (dev->type == DeviceType::CPU) {
    for (size_t i = 0; i < n; ++i) t.v[i] = next();
    return;
  }
  constexpr size_t kChunk = size_t(1) << 16;
  std::vector<float> h(std::min(n, kChunk));
  for (size_t at = 0; at < n; at += kChunk) {
    const size_t len = std::min(kChunk, n - at);
    for (size_t i = 0; i < len; ++i) h[i] = next();
    dev->copy_from_host(t.v + at, h.data(), len);
  }
}
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
  with_global_rng([&](std::mt19937& g) {
    std::bernoulli_distribution dist(p);
    fill_each(val, [&] { return dist(g) ? scale : 0.f; });
    return 0;
  });
}
void TensorTools::randomize_normal(Tensor& val, real mean, real stddev) {
  with_global_rng([&](std::mt19937& g) {
    std::normal_distribution<float> dist(mean, stddev);
    fill_each(val, [&] { return dist(g); });
    return 0;
  });
}
void TensorTools::randomize_uniform(Tensor& val, real left, real right) {
  with_global_rng([&](std::mt19937& g) {
    std::uniform_real_distribution<float> dist(left, right);
    fill_each(val, [&] { return dist(g); });
    return 0;
  });
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
// ------------------------------------------------------------ index tensors

IndexTensor IndexTensor::allocate(const Dim& d, size_t extra_floats) {
  const size_t n = d.size();
  const size_t bytes = n * sizeof(std::ptrdiff_t) + extra_floats * sizeof(float);
  auto* raw = static_cast<std::ptrdiff_t*>(::operator new(std::max<size_t>(bytes, 1)));
  IndexTensor t(d, raw, cpu_device(), DeviceMempool::NONE);
  t.memory_ = std::shared_ptr<std::ptrdiff_t>(raw, [](std::ptrdiff_t* p) { ::operator delete(p); });
  if (extra_floats) t.extra_ = reinterpret_cast<float*>(raw + n);
  return t;
}

std::vector<std::ptrdiff_t> as_vector(const IndexTensor& v) {
  DYNET_LITE_ARG_CHECK(v.v != nullptr || v.d.size() == 0, "as_vector: the IndexTensor of shape " << v.d
                                                                                                 << " has no memory");
  return std::vector<std::ptrdiff_t>(v.v, v.v + v.d.size());
}

namespace {
// The slices of a tensor along one dimension: element k of slice (o, i) is at
// (o * len + k) * inner + i, for o < outer (the batch included) and i < inner.
struct Slices {
  size_t inner = 1, len = 1, outer = 1;
  Slices(const Dim& d, unsigned dim) {
    for (unsigned k = 0; k < dim; ++k) inner *= d.d[k];
    len = d.d[dim];
    for (unsigned k = dim + 1; k < d.nd; ++k) outer *= d.d[k];
    outer *= d.bd;
  }
  size_t at(size_t o, size_t i, size_t k) const { return (o * len + k) * inner + i; }
};

void check_index_args(const char* op, const Tensor& v, unsigned dim, unsigned num, bool one_only) {
  DYNET_LITE_ARG_CHECK(v.v != nullptr, op << ": the tensor of shape " << v.d << " has no value yet (forward not run)");
  DYNET_LITE_DIM_CHECK(dim < std::max(1u, v.d.nd), op << ": dimension " << dim << " out of range for " << v.d);
  if (one_only)
    DYNET_LITE_CHECK(num == 1, std::runtime_error, op << ": num must be 1 (as in DyNet), got " << num);
  DYNET_LITE_ARG_CHECK(num >= 1 && num <= v.d.d[dim], op << ": num " << num << " must be in [1, " << v.d.d[dim]
                                                         << "] for dimension " << dim << " of " << v.d);
}

// Index of the largest of score(s, k) over k < len for every slice s.
template <class Score>
IndexTensor argmax_of(const Tensor& v, unsigned dim, Score score) {
  Dim out = v.d;
  out.d[dim] = 1;
  IndexTensor ids = IndexTensor::allocate(out);
  const Slices s(v.d, dim);
  for (size_t o = 0; o < s.outer; ++o)
    for (size_t i = 0; i < s.inner; ++i) {
      size_t best = 0;
      float top = score(s.at(o, i, 0));
      for (size_t k = 1; k < s.len; ++k) {
        const float x = score(s.at(o, i, k));
        if (x > top) top = x, best = k;
      }
      ids.v[o * s.inner + i] = static_cast<std::ptrdiff_t>(best);
    }
  return ids;
}
}  // namespace

IndexTensor TensorTools::argmax(const Tensor& v, unsigned dim, unsigned num) {
  check_index_args("TensorTools::argmax", v, dim, num, true);
  const std::vector<float> h = host_copy(v);
  return argmax_of(v, dim, [&](size_t e) { return h[e]; });
}

// Gumbel-max: argmax_k (v_k - log(-log u_k)), u uniform in (0, 1), is a sample of
// the distribution with log-probabilities v (normalised or not).
IndexTensor TensorTools::categorical_sample_log_prob(const Tensor& v, unsigned dim, unsigned num) {
  check_index_args("TensorTools::categorical_sample_log_prob", v, dim, num, true);
  std::vector<float> h = host_copy(v);
  with_global_rng([&](std::mt19937& g) {
    std::uniform_real_distribution<float> u(std::numeric_limits<float>::min(), 1.f);
    for (float& x : h) x -= std::log(-std::log(u(g)));
  });
  return argmax_of(v, dim, [&](size_t e) { return h[e]; });
}

std::pair<Tensor, IndexTensor> TensorTools::topk(const Tensor& v, unsigned dim, unsigned num) {
  check_index_args("TensorTools::topk", v, dim, num, false);
  const std::vector<float> h = host_copy(v);
  Dim out = v.d;
  out.d[dim] = num;
  IndexTensor ids = IndexTensor::allocate(out, out.size());
  Tensor vals(out, ids.extra(), cpu_device(), DeviceMempool::NONE);
  const Slices s(v.d, dim), r(out, dim);
  std::vector<size_t> order(s.len);
  for (size_t o = 0; o < s.outer; ++o)
    for (size_t i = 0; i < s.inner; ++i) {
      for (size_t k = 0; k < s.len; ++k) order[k] = k;
      std::partial_sort(order.begin(), order.begin() + num, order.end(), [&](size_t a, size_t b) {
        const float x = h[s.at(o, i, a)], y = h[s.at(o, i, b)];
        return x > y || (x == y && a < b);
      });
      for (size_t k = 0; k < num; ++k) {
        ids.v[r.at(o, i, k)] = static_cast<std::ptrdiff_t>(order[k]);
        vals.v[r.at(o, i, k)] = h[s.at(o, i, order[k])];
      }
    }
  return {vals, ids};
}

}  // namespace dynet_lite
