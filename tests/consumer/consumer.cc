// Fits y = 2 x0 - 3 x1 + 1 with a 3-parameter linear model (W {1,2}, b {1})
// through an installed dynet_lite.  Prints the loss of each step and fails
// when the loss does not fall.
#include <cstdio>
#include <vector>

#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"
#include "dynet_lite/training.h"

namespace dynet = dynet_lite;

int main() {
  dynet::ParameterCollection model;
  dynet::Parameter p_W = model.add_parameters({1, 2});
  dynet::Parameter p_b = model.add_parameters({1});
  dynet::SimpleSGDTrainer trainer(model, 0.05f);

  const std::vector<std::vector<float>> xs = {{1, 0}, {0, 1}, {1, 1}, {-1, 2}, {0.5f, -1}};
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    float total = 0;
    for (const auto& x : xs) {
      dynet::ComputationGraph cg;
      dynet::Expression W = dynet::parameter(cg, p_W);
      dynet::Expression b = dynet::parameter(cg, p_b);
      dynet::Expression y = W * dynet::input(cg, {2}, x) + b;
      dynet::Expression loss = dynet::squared_distance(y, dynet::input(cg, 2 * x[0] - 3 * x[1] + 1));
      total += dynet::as_scalar(cg.forward(loss));
      cg.backward(loss);
      trainer.update();
    }
    if (step == 0) first = total;
    last = total;
    std::printf("step %2d loss %.6f\n", step, total);
  }
  if (!(last < 0.01f * first)) {
    std::printf("FAIL: the loss did not fall (%.6f -> %.6f)\n", first, last);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
