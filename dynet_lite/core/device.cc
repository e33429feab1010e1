// What every device can do through its own fill and copies: the row operations
// of a lookup table and the squared norms of vectors, one row or vector at a time
// (a backend may override them with one kernel).
#include <vector>

#include "dynet_lite/devices.h"

namespace dynet_lite {

void Device::fill_rows(float* table, const unsigned* rows, unsigned n, size_t row, float value) {
  for (unsigned k = 0; k < n; ++k) fill(table + size_t(rows[k]) * row, value, row);
}

float Device::rows_squared_norm(const float* table, const unsigned* rows, unsigned n, size_t row) {
  std::vector<const float*> xs(n);
  for (unsigned k = 0; k < n; ++k) xs[k] = table + size_t(rows[k]) * row;
  const std::vector<size_t> ns(n, row);
  return static_cast<float>(squared_norms(xs.data(), ns.data(), n));
}

double Device::squared_norms(const float* const* xs, const size_t* ns, unsigned k) {
  std::vector<float> h;
  double s = 0;
  for (unsigned j = 0; j < k; ++j) {
    h.resize(ns[j]);
    copy_to_host(h.data(), xs[j], ns[j]);
    for (float x : h) s += static_cast<double>(x) * x;
  }
  return s;
}

}  // namespace dynet_lite
