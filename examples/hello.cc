// hello: fit y = 2x + 1 with a one-input linear model, one graph per instance.
#include <iostream>

#include "dynet_lite/expr.h"
#include "dynet_lite/init.h"
#include "dynet_lite/training.h"

namespace dynet = dynet_lite;  // a DyNet program needs only this line and its includes
using namespace dynet;

int main(int argc, char** argv) {
  initialize(argc, argv);  // reads --dynet-seed, --dynet-mem, ...
  ParameterCollection model;
  Parameter p_a = model.add_parameters({1});
  Parameter p_b = model.add_parameters({1});
  SimpleSGDTrainer trainer(model, 0.1f);

  float loss_sum = 0;
  for (int epoch = 1; epoch <= 40; ++epoch) {
    loss_sum = 0;
    for (float x : {-1.f, -0.5f, 0.f, 0.5f, 1.f}) {
      ComputationGraph cg;  // cheap: its memory comes from the previous graph's arenas
      Expression y_pred = parameter(cg, p_a) * input(cg, x) + parameter(cg, p_b);
      Expression loss = squared_distance(y_pred, input(cg, 2 * x + 1));
      loss_sum += as_scalar(cg.forward(loss));
      cg.backward(loss);  // gradients go into the model's parameters
      trainer.update();
    }
    if (epoch % 10 == 0) std::cout << "epoch " << epoch << "  loss " << loss_sum << "\n";
  }
  std::cout << "learned y = " << as_scalar(*p_a.values()) << " x + " << as_scalar(*p_b.values()) << "\n";
  return loss_sum < 1e-3f ? 0 : 1;
}
