#pragma once
/// \file dim.h
/// Shapes: up to 7 dimensions plus a batch dimension, as in DyNet.
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "dynet_lite/except.h"

namespace dynet_lite {

constexpr unsigned DYNET_MAX_TENSOR_DIM = 7;

struct Dim;
std::ostream& operator<<(std::ostream& os, const Dim& d);

/// The shape of a tensor: `nd` dimensions `d[0..nd)` and `bd` batch elements.
/// Dimensions past `nd` read as 1, so a vector {n} is also an n x 1 matrix.
struct Dim {
  unsigned d[DYNET_MAX_TENSOR_DIM] = {};
  unsigned nd = 0;
  unsigned bd = 1;

  Dim() = default;
  Dim(std::initializer_list<unsigned> x) { set_dims(x.begin(), x.end()); }
  Dim(std::initializer_list<unsigned> x, unsigned b) : Dim(x) { set_batch(b); }
  explicit Dim(const std::vector<long>& x) { set_dims(x.begin(), x.end()); }
  Dim(const std::vector<long>& x, unsigned b) : Dim(x) { set_batch(b); }
  explicit Dim(const std::vector<unsigned>& x) { set_dims(x.begin(), x.end()); }
  Dim(const std::vector<unsigned>& x, unsigned b) : Dim(x) { set_batch(b); }

  /// The most elements a shape may have, batch included (2^40): far beyond any
  /// memory, and small enough that size() never overflows.
  static constexpr size_t kMaxElements = size_t(1) << 40;

  /// Elements of all batch elements together.
  size_t size() const { return batch_size() * bd; }
  /// Elements of one batch element.
  size_t batch_size() const {
    size_t p = 1;
    for (unsigned i = 0; i < nd; ++i) p *= d[i];
    return p;
  }
  unsigned sum_dims() const {
    unsigned s = 0;
    for (unsigned i = 0; i < nd; ++i) s += d[i];
    return s;
  }
  /// Drops trailing dimensions of size 1 (keeps at least one).
  Dim truncate() const {
    Dim r = *this;
    while (r.nd > 1 && r.d[r.nd - 1] == 1) --r.nd;
    return r;
  }
  /// The same shape with one batch element.
  Dim single_batch() const {
    Dim r = *this;
    r.bd = 1;
    return r;
  }
  void resize(unsigned i) {
    DYNET_LITE_DIM_CHECK(i <= DYNET_MAX_TENSOR_DIM, "Dim::resize: " << i << " dimensions, at most "
                                                                    << DYNET_MAX_TENSOR_DIM);
    while (nd < i) d[nd++] = 1;
    nd = i;
  }
  unsigned ndims() const { return nd; }
  unsigned rows() const { return nd > 0 ? d[0] : 1; }
  unsigned cols() const { return nd > 1 ? d[1] : 1; }
  unsigned num_nonone_dims() const {
    unsigned n = 0;
    for (unsigned i = 0; i < nd; ++i) n += d[i] != 1;
    return n;
  }
  unsigned batch_elems() const { return bd; }
  void set(unsigned i, unsigned s) {
    DYNET_LITE_DIM_CHECK(i < nd || s == 1, "Dim::set: dimension " << i << " out of range for " << *this);
    if (i >= nd) return;
    d[i] = s;
  }
  unsigned size(unsigned i) const { return (*this)[i]; }
  unsigned operator[](unsigned i) const { return i < nd ? d[i] : 1; }
  void delete_dim(unsigned i);
  void delete_dims(const std::vector<unsigned>& dims, bool reduce_batch);
  void add_dim(unsigned n);
  void insert_dim(unsigned i, unsigned n);
  /// Swaps rows and columns of a matrix (a vector {n} becomes {1,n}).
  Dim transpose() const;
  void print_profile(std::ostream& out) const;

  /// Throws unless the shape has at most kMaxElements elements.
  void check_size() const {
    size_t p = bd;
    for (unsigned i = 0; i < nd; ++i) {
      DYNET_LITE_DIM_CHECK(!__builtin_mul_overflow(p, size_t(d[i]), &p) && p <= kMaxElements,
                           "Dim: shape " << *this << " has more than 2^40 elements");
    }
    DYNET_LITE_DIM_CHECK(p <= kMaxElements, "Dim: shape " << *this << " has more than 2^40 elements");
  }

 private:
  void set_batch(unsigned b) {
    bd = b;
    check_size();
  }
  template <class It>
  void set_dims(It b, It e) {
    for (; b != e; ++b) {
      DYNET_LITE_DIM_CHECK(nd < DYNET_MAX_TENSOR_DIM,
                           "Dim: more than " << DYNET_MAX_TENSOR_DIM << " dimensions");
      DYNET_LITE_DIM_CHECK(*b >= 0, "Dim: negative dimension " << *b);
      DYNET_LITE_DIM_CHECK(static_cast<unsigned long long>(*b) <= 0xffffffffu, "Dim: dimension " << *b << " is too large");
      d[nd++] = static_cast<unsigned>(*b);
    }
    check_size();
  }
};

/// Equal dimensions (trailing 1s are significant only up to nd) and batch size.
inline bool operator==(const Dim& a, const Dim& b) {
  if (a.nd != b.nd || a.bd != b.bd) return false;
  for (unsigned i = 0; i < a.nd; ++i)
    if (a.d[i] != b.d[i]) return false;
  return true;
}
inline bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

/// Same shape ignoring trailing 1s and the batch dimension.
bool same_shape_ignoring_batch(const Dim& a, const Dim& b);

/// `{2,3}` or `{2,3X4}` with a batch of 4 (DyNet's notation).
std::ostream& operator<<(std::ostream& os, const Dim& d);
std::ostream& operator<<(std::ostream& os, const std::vector<Dim>& ds);
std::string to_string(const Dim& d);

}  // namespace dynet_lite
