#pragma once
// Learning-rate schedules shared by the trainers (internal).
#include <algorithm>
#include <cmath>

namespace dynet_lite {
namespace train_detail {

/// The triangular cyclical rate of update k (Smith 2017): it climbs from lo to
/// hi in step_size updates, falls back in step_size more, and the amplitude is
/// multiplied by gamma^k.
inline float cyclical_rate(float lo, float hi, float step_size, float gamma, unsigned k) {
  double pos = static_cast<double>(k) / step_size;      // half-cycles done
  double cycle = std::floor(1 + pos / 2);               // 1-based cycle index
  double x = std::fabs(pos - 2 * cycle + 1);            // 1 at the ends, 0 at the peak
  double amp = std::max(0.0, 1 - x) * std::pow(static_cast<double>(gamma), static_cast<double>(k));
  return static_cast<float>(lo + (hi - lo) * amp);
}

}  // namespace train_detail
}  // namespace dynet_lite
