#include <cmath>
#include <fstream>
#include <random>

#include "dynet_lite/core/random.h"
#include "dynet_lite/param-init.h"

namespace dynet_lite {

void ParameterInitNormal::initialize_params(Tensor& values) const {
  TensorTools::randomize_normal(values, mean, std::sqrt(var));
}
void ParameterInitUniform::initialize_params(Tensor& values) const {
  TensorTools::randomize_uniform(values, left, right);
}
void ParameterInitConst::initialize_params(Tensor& values) const { TensorTools::constant(values, cnst); }
void ParameterInitIdentity::initialize_params(Tensor& values) const { TensorTools::identity(values); }

void ParameterInitGlorot::initialize_params(Tensor& values) const {
  unsigned dims = values.d.nd - (lookup ? 1 : 0);
  float sum = 0;
  for (unsigned i = 0; i < dims; ++i) sum += static_cast<float>(values.d[i]);
  float scale = gain * std::sqrt(3.0f * static_cast<float>(dims ? dims : 1)) / std::sqrt(sum > 0 ? sum : 1.f);
  TensorTools::randomize_uniform(values, -scale, scale);
}

void ParameterInitSaxe::initialize_params(Tensor& values) const {
  DYNET_LITE_DIM_CHECK(values.d.nd == 2 && values.d[0] == values.d[1],
                       "ParameterInitSaxe: needs a square matrix, got " << values.d);
  TensorTools::randomize_orthonormal(values, gain);
}

void ParameterInitFromFile::initialize_params(Tensor& values) const {
  std::ifstream in(filename);
  DYNET_LITE_CHECK(in.good(), io_error, "ParameterInitFromFile: cannot open '" << filename << "'");
  std::vector<float> v;
  float x;
  while (in >> x) v.push_back(x);
  DYNET_LITE_CHECK(in.eof(), io_error,
                   "ParameterInitFromFile: '" << filename << "': not a number after value " << v.size());
  DYNET_LITE_DIM_CHECK(v.size() == values.d.size(), "ParameterInitFromFile: '" << filename << "' has " << v.size()
                                                        << " values, the parameter " << values.d << " needs "
                                                        << values.d.size());
  TensorTools::set_elements(values, v);
}

void ParameterInitFromVector::initialize_params(Tensor& values) const {
  DYNET_LITE_DIM_CHECK(vec.size() == values.d.size(), "ParameterInitFromVector: " << vec.size()
                                                          << " values, the parameter " << values.d << " needs "
                                                          << values.d.size());
  TensorTools::set_elements(values, vec);
}

}  // namespace dynet_lite
