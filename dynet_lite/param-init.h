#pragma once
/// \file param-init.h
/// How new parameters are filled (DyNet's initializers).
#include <string>
#include <vector>

#include "dynet_lite/tensor.h"

namespace dynet_lite {

struct ParameterInit {
  virtual ~ParameterInit() = default;
  virtual void initialize_params(Tensor& values) const = 0;
};

/// Normal with mean m and *variance* v (DyNet's convention).
struct ParameterInitNormal : ParameterInit {
  explicit ParameterInitNormal(float m = 0.0f, float v = 1.0f) : mean(m), var(v) {}
  void initialize_params(Tensor& values) const override;
  float mean, var;
};

/// Uniform in [-scale, scale] or [l, r].
struct ParameterInitUniform : ParameterInit {
  explicit ParameterInitUniform(float scale) : left(-scale), right(scale) {
    DYNET_LITE_ARG_CHECK(scale != 0.0f, "ParameterInitUniform: scale must be non-zero");
  }
  ParameterInitUniform(float l, float r) : left(l), right(r) {
    DYNET_LITE_ARG_CHECK(l != r, "ParameterInitUniform: empty range [" << l << ", " << r << "]");
  }
  void initialize_params(Tensor& values) const override;
  float left, right;
};

struct ParameterInitConst : ParameterInit {
  explicit ParameterInitConst(float c) : cnst(c) {}
  void initialize_params(Tensor& values) const override;
  float cnst;
};

struct ParameterInitIdentity : ParameterInit {
  void initialize_params(Tensor& values) const override;
};

/// Glorot/Xavier uniform: scale gain * sqrt(3 * nd) / sqrt(sum of dims); for a
/// lookup table the last dimension (the vocabulary) is left out.
struct ParameterInitGlorot : ParameterInit {
  explicit ParameterInitGlorot(bool is_lookup = false, float gain = 1.f) : lookup(is_lookup), gain(gain) {}
  void initialize_params(Tensor& values) const override;
  bool lookup;
  float gain;
};

/// A random orthonormal matrix (Saxe et al. 2014) times gain.
struct ParameterInitSaxe : ParameterInit {
  explicit ParameterInitSaxe(float gain = 1.0f) : gain(gain) {}
  void initialize_params(Tensor& values) const override;
  float gain;
};

/// Whitespace-separated values read from a file.
struct ParameterInitFromFile : ParameterInit {
  explicit ParameterInitFromFile(std::string f) : filename(std::move(f)) {}
  void initialize_params(Tensor& values) const override;
  std::string filename;
};

struct ParameterInitFromVector : ParameterInit {
  explicit ParameterInitFromVector(std::vector<float> v) : vec(std::move(v)) {}
  void initialize_params(Tensor& values) const override;
  std::vector<float> vec;
};

}  // namespace dynet_lite
