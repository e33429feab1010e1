// xor: DyNet's classic first example.  A 2-8-1 network with tanh learns XOR
// with inputs and targets in {-1, +1}, squared loss and plain SGD.
//
// The graph is built once; its inputs are pointers to x_values / y_value, so
// each forward() reads the current pattern (DyNet's pointer inputs).
//
//   xor [--iterations N] [--dynet-seed S]
// Exits non-zero unless all four patterns end up on the right side of 0.
#include <iomanip>
#include <iostream>
#include <vector>

#include "common/cli.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/init.h"
#include "dynet_lite/training.h"

namespace dynet = dynet_lite;
using namespace dynet;

int train_xor(unsigned iterations) {
  const unsigned HIDDEN = 8;
  ParameterCollection model;
  Parameter p_W = model.add_parameters({HIDDEN, 2});
  Parameter p_b = model.add_parameters({HIDDEN});
  Parameter p_V = model.add_parameters({1, HIDDEN});
  Parameter p_a = model.add_parameters({1});
  SimpleSGDTrainer trainer(model, 0.1f);

  std::vector<float> x_values(2);
  float y_value = 0;
  ComputationGraph cg;
  Expression W = parameter(cg, p_W), b = parameter(cg, p_b);
  Expression V = parameter(cg, p_V), a = parameter(cg, p_a);
  Expression x = input(cg, {2}, &x_values);
  Expression y = input(cg, &y_value);
  Expression h = tanh(W * x + b);
  Expression y_pred = V * h + a;
  Expression loss = squared_distance(y_pred, y);

  auto set_pattern = [&](unsigned mi) {
    bool x1 = mi % 2, x2 = (mi / 2) % 2;
    x_values[0] = x1 ? 1.f : -1.f;
    x_values[1] = x2 ? 1.f : -1.f;
    y_value = (x1 != x2) ? 1.f : -1.f;
  };

  for (unsigned iter = 1; iter <= iterations; ++iter) {
    double total = 0;
    for (unsigned mi = 0; mi < 4; ++mi) {
      set_pattern(mi);
      total += as_scalar(cg.forward(loss));
      cg.backward(loss);
      trainer.update();
    }
    if (iter % 20 == 0 || iter == 1) std::cout << "iteration " << std::setw(4) << iter << "  loss " << total / 4 << "\n";
  }

  unsigned errors = 0;
  for (unsigned mi = 0; mi < 4; ++mi) {
    set_pattern(mi);
    float pred = as_scalar(cg.forward(y_pred));
    errors += (pred > 0) != (y_value > 0);
    std::cout << std::showpos << "x = (" << x_values[0] << ", " << x_values[1] << ")  target " << y_value
              << "  prediction " << std::fixed << std::setprecision(3) << pred << std::noshowpos
              << std::defaultfloat << "\n";
  }
  std::cout << "classification errors: " << errors << " / 4\n";
  return errors == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  unsigned iterations = 200;
  CLI::App app{"DyNet's first example: a 2-8-1 tanh network learns XOR.", "xor"};
  examples::init_cli(app);
  examples::add_count(app, "--iterations", iterations, "passes over the four patterns (default 200)");
  return examples::run_main(
      app, argc, argv, nullptr, [&] { return train_xor(iterations); }, examples::DefaultSeed::Random);
}
