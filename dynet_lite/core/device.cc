// What every device can do through its own fill and copies: the row operations
// of a lookup table, one row at a time (a backend may override them with one kernel).
#include <vector>

#include "dynet_lite/devices.h"

namespace dynet_lite {

void Device::fill_rows(float* table, const unsigned* rows, unsigned n, size_t row, float value) {
  for (unsigned k = 0; k < n; ++k) fill(table + size_t(rows[k]) * row, value, row);
}

float Device::rows_squared_norm(const float* table, const unsigned* rows, unsigned n, size_t row) {
  std::vector<float> h(row);
  float s = 0;
  for (unsigned k = 0; k < n; ++k) {
    copy_to_host(h.data(), table + size_t(rows[k]) * row, row);
    double r = 0;
    for (float x : h) r += static_cast<double>(x) * x;
    s += static_cast<float>(r);
  }
  return s;
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
