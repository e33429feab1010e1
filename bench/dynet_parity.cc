// dynet_parity: a DyNet 2.1 program that saves and restores trainers
// (Trainer::save / populate) and trains with moving averages of the
// parameters, built twice: against DyNet itself (bench/dynet_parity) and,
// ported the way the README tells DyNet users (the include prefix and
// `namespace dynet = dynet_lite;`, nothing else), against dynet_lite
// (bench/ported_dynet_parity).  Both print the same numbers.
//
// For each trainer, a small network y = V tanh(W x + b) is fitted to eight
// fixed points, from fixed initial values (no random numbers):
//   - run A trains two epochs, saves the model (TextFileSaver) and the trainer,
//     then trains a third epoch;
//   - run B builds a new model and trainer, loads both and trains the third
//     epoch: its loss and parameters equal A's;
//   - A's parameters are swapped for their moving average (exponential, beta
//     0.9, with and without bias correction; or cumulative) and the loss
//     evaluated with them, then the weights are swapped back.
// Each line: the trainer, the average kept, the loss of epochs 2 and 3 (A), of
// epoch 3 after the restore (B), with the averaged parameters, and the sum of
// A's final parameters.
//
//   dynet_parity [--dir DIR]     (DIR, default /tmp, holds the saved files)
#include <dynet/dynet.h>
#include <dynet/expr.h>
#include <dynet/init.h>
#include <dynet/io.h>
#include <dynet/training.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace dynet;

namespace {

constexpr unsigned kIn = 3, kHidden = 4;

// Fixed initial values: a pattern in [-0.5, 0.5].
std::vector<float> pattern(unsigned n, float phase) {
  std::vector<float> v(n);
  for (unsigned i = 0; i < n; ++i) v[i] = 0.5f * static_cast<float>(((i * 7 + static_cast<unsigned>(phase * 10)) % 11)) / 10.f - 0.25f;
  return v;
}

struct Net {
  ParameterCollection model;
  Parameter W, b, V;
  Net() {
    W = model.add_parameters({kHidden, kIn}, 0.0f, "W");
    b = model.add_parameters({kHidden}, 0.0f, "b");
    V = model.add_parameters({1, kHidden}, 0.0f, "V");
    W.set_value(pattern(kHidden * kIn, 0.1f));
    b.set_value(pattern(kHidden, 0.3f));
    V.set_value(pattern(kHidden, 0.7f));
  }
  Expression loss(ComputationGraph& cg, const std::vector<float>& x, float y) {
    Expression h = tanh(affine_transform({parameter(cg, b), parameter(cg, W), input(cg, {kIn}, x)}));
    return squared_distance(parameter(cg, V) * h, input(cg, y));
  }
  float sum_of_parameters() {
    float s = 0;
    for (Parameter* p : {&W, &b, &V})
      for (float v : as_vector(*p->values())) s += v;
    return s;
  }
};

// Eight points of y = x0 - 2 x1 + 0.5 x2, squashed.
const std::vector<std::pair<std::vector<float>, float>>& data() {
  static const std::vector<std::pair<std::vector<float>, float>> points = [] {
    std::vector<std::pair<std::vector<float>, float>> d;
    for (int k = 0; k < 8; ++k) {
      std::vector<float> x = {0.3f * k - 1.f, 0.5f - 0.2f * k, (k % 3) * 0.4f - 0.4f};
      d.push_back({x, 0.3f * (x[0] - 2 * x[1] + 0.5f * x[2])});
    }
    return d;
  }();
  return points;
}

// One epoch of updates; the summed loss.
float train_epoch(Net& net, Trainer& trainer) {
  float total = 0;
  for (const auto& p : data()) {
    ComputationGraph cg;
    Expression l = net.loss(cg, p.first, p.second);
    total += as_scalar(cg.forward(l));
    cg.backward(l);
    trainer.update();
  }
  return total;
}

// The summed loss without updating.
float evaluate(Net& net) {
  float total = 0;
  for (const auto& p : data()) {
    ComputationGraph cg;
    total += as_scalar(cg.forward(net.loss(cg, p.first, p.second)));
  }
  return total;
}

using MakeTrainer = std::function<std::unique_ptr<Trainer>(ParameterCollection&)>;

void run(const std::string& name, const MakeTrainer& make, bool exponential, const std::string& dir) {
  const std::string model_file = dir + "/dynet_parity.model", trainer_file = dir + "/dynet_parity.trainer";
  Net a;
  std::unique_ptr<Trainer> ta = make(a.model);
  if (exponential)
    ta->exponential_moving_average(0.9f);
  else
    ta->cumulative_moving_average();
  train_epoch(a, *ta);
  float epoch2 = train_epoch(a, *ta);
  {
    TextFileSaver saver(model_file);
    saver.save(a.model);
    std::ofstream out(trainer_file);
    ta->save(out);
  }
  float epoch3 = train_epoch(a, *ta);

  Net b;
  std::unique_ptr<Trainer> tb = make(b.model);
  {
    TextFileLoader loader(model_file);
    loader.populate(b.model);
    std::ifstream in(trainer_file);
    tb->populate(in);
  }
  float restored = train_epoch(b, *tb);

  ta->swap_params_to_moving_average();
  float averaged = evaluate(a);
  ta->swap_params_to_weights();
  float corrected = averaged;
  if (exponential) {
    ta->swap_params_to_moving_average(true, true);
    corrected = evaluate(a);
    ta->swap_params_to_weights();
  }
  std::cout << std::left << std::setw(19) << name << (exponential ? " ema" : " cma") << std::setprecision(6)
            << " epoch2=" << epoch2 << " epoch3=" << epoch3 << " restored=" << restored << " averaged=" << averaged
            << " corrected=" << corrected << " params=" << a.sum_of_parameters() << "\n";
  std::remove(model_file.c_str());
  std::remove(trainer_file.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  dynet::initialize(argc, argv);
  std::string dir = "/tmp";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--dir") dir = argv[i + 1];
  dir += "/dynet_parity_" + std::to_string(getpid());
  if (system(("mkdir -p '" + dir + "'").c_str()) != 0) {
    std::cerr << "dynet_parity: cannot create " << dir << "\n";
    return 1;
  }
  const std::vector<std::pair<std::string, MakeTrainer>> trainers = {
      {"SimpleSGDTrainer", [](ParameterCollection& m) { return std::unique_ptr<Trainer>(new SimpleSGDTrainer(m, 0.1f)); }},
      {"MomentumSGDTrainer", [](ParameterCollection& m) { return std::unique_ptr<Trainer>(new MomentumSGDTrainer(m, 0.05f)); }},
      {"AdagradTrainer", [](ParameterCollection& m) { return std::unique_ptr<Trainer>(new AdagradTrainer(m, 0.1f)); }},
      {"AdadeltaTrainer", [](ParameterCollection& m) { return std::unique_ptr<Trainer>(new AdadeltaTrainer(m)); }},
      {"RMSPropTrainer", [](ParameterCollection& m) { return std::unique_ptr<Trainer>(new RMSPropTrainer(m, 0.01f)); }},
      {"AdamTrainer", [](ParameterCollection& m) { return std::unique_ptr<Trainer>(new AdamTrainer(m, 0.01f)); }},
      {"AmsgradTrainer", [](ParameterCollection& m) { return std::unique_ptr<Trainer>(new AmsgradTrainer(m, 0.01f)); }},
  };
  for (const auto& t : trainers) {
    run(t.first, t.second, true, dir);
    run(t.first, t.second, false, dir);
  }
  rmdir(dir.c_str());
  return 0;
}
