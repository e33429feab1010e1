#include "dynet_lite/dim.h"

#include <algorithm>
#include <ostream>
#include <sstream>

namespace dynet_lite {

void Dim::delete_dim(unsigned i) {
  DYNET_LITE_DIM_CHECK(i < nd, "Dim::delete_dim: dimension " << i << " out of range for " << *this);
  if (nd == 1) {
    d[0] = 1;
    return;
  }
  for (unsigned k = i; k + 1 < nd; ++k) d[k] = d[k + 1];
  --nd;
}

void Dim::delete_dims(const std::vector<unsigned>& dims, bool reduce_batch) {
  std::vector<unsigned> sorted(dims);
  std::sort(sorted.begin(), sorted.end());
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) delete_dim(*it);
  if (reduce_batch) bd = 1;
}

void Dim::add_dim(unsigned n) {
  DYNET_LITE_DIM_CHECK(nd < DYNET_MAX_TENSOR_DIM, "Dim::add_dim: already " << nd << " dimensions");
  d[nd++] = n;
}

void Dim::insert_dim(unsigned i, unsigned n) {
  DYNET_LITE_DIM_CHECK(nd < DYNET_MAX_TENSOR_DIM && i <= nd,
                       "Dim::insert_dim: cannot insert at " << i << " into " << *this);
  for (unsigned k = nd; k > i; --k) d[k] = d[k - 1];
  d[i] = n;
  ++nd;
}

Dim Dim::transpose() const {
  DYNET_LITE_DIM_CHECK(nd <= 2, "transpose: only vectors and matrices, got " << *this);
  Dim r({cols(), rows()}, bd);
  return r;
}

void Dim::print_profile(std::ostream& out) const { out << *this; }

bool same_shape_ignoring_batch(const Dim& a, const Dim& b) {
  unsigned n = std::max(a.nd, b.nd);
  for (unsigned i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

std::ostream& operator<<(std::ostream& os, const Dim& d) {
  os << '{';
  for (unsigned i = 0; i < d.nd; ++i) {
    if (i) os << ',';
    os << d.d[i];
  }
  if (d.bd != 1) os << 'X' << d.bd;
  return os << '}';
}

std::ostream& operator<<(std::ostream& os, const std::vector<Dim>& ds) {
  os << '[';
  for (size_t i = 0; i < ds.size(); ++i) os << (i ? "," : "") << ds[i];
  return os << ']';
}

std::string to_string(const Dim& d) {
  std::ostringstream os;
  os << d;
  return os.str();
}

}  // namespace dynet_lite
