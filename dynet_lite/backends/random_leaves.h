#pragma once
// The random leaves' draws, made on the host from the graph's engine for the CPU
// kernels (ops/inputs.cc) and the CUDA ones (backends/cuda/inputs.cu, which
// upload them), so both devices give the same numbers in the same order.
#include <cmath>
#include <cstddef>
#include <random>

#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/op_kind.h"

namespace dynet_lite {

template <class Draw>
void draw_each(float* out, size_t n, std::mt19937& g, Draw draw) {
  for (size_t i = 0; i < n; ++i) out[i] = draw(g);
}

/// out[0, n) = the draws of random leaf `op` with parameters p:
///   random_normal     y ~ N(a, b^2)
///   random_uniform    y ~ U(a, b)
///   random_bernoulli  y = b with probability a, else 0
///   random_gumbel     y = a - b log(-log u), u ~ U(0, 1)
inline void draw_random_leaf(OpKind op, const op_params::FillParams& p, std::mt19937& g, float* out, size_t n) {
  switch (op) {
    case OpKind::RandomNormal: {
      std::normal_distribution<float> d(p.a, p.b);
      draw_each(out, n, g, [&](std::mt19937& e) { return d(e); });
      break;
    }
    case OpKind::RandomUniform: {
      std::uniform_real_distribution<float> d(p.a, p.b);
      draw_each(out, n, g, [&](std::mt19937& e) { return d(e); });
      break;
    }
    case OpKind::RandomBernoulli: {
      std::bernoulli_distribution d(p.a);
      const float scale = p.b;
      draw_each(out, n, g, [&](std::mt19937& e) { return d(e) ? scale : 0.f; });
      break;
    }
    default: {  // OpKind::RandomGumbel
      std::uniform_real_distribution<float> d(0.f, 1.f);
      const float mu = p.a, beta = p.b;
      draw_each(out, n, g, [&](std::mt19937& e) {
        float u = d(e);
        while (u <= 0.f || u >= 1.f) u = d(e);
        return mu - beta * std::log(-std::log(u));
      });
      break;
    }
  }
}

}  // namespace dynet_lite
