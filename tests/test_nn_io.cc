#define BOOST_TEST_MODULE nn_io
#include "test_utils.h"

#include <cstdio>
#include <unistd.h>

#include "dynet_lite/cfsm-builder.h"
#include "dynet_lite/gru.h"
#include "dynet_lite/io.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/treelstm.h"

using namespace dynet_lite;

namespace {
std::vector<float> run(RNNBuilder& rnn) {
  ComputationGraph cg;
  rnn.new_graph(cg);
  rnn.start_new_sequence();
  rnn.add_input(input(cg, Dim({3}), test::test_values(3)));
  return as_vector(cg.forward(rnn.add_input(input(cg, Dim({3}), test::test_values(3, 0.4f)))));
}

/// One builder of each kind, made in this order in `m`.
struct Builders {
  VanillaLSTMBuilder lstm;
  CoupledLSTMBuilder coupled;
  GRUBuilder gru;
  SimpleRNNBuilder rnn;
  explicit Builders(ParameterCollection& m)
      : lstm(2, 3, 4, m, true), coupled(1, 3, 2, m), gru(1, 3, 2, m), rnn(1, 3, 2, m) {}
};
}  // namespace

// Builders made in the same order in two models get the same parameter names, so
// a model saved from one populates the other and the outputs agree.
BOOST_AUTO_TEST_CASE(builders_round_trip_through_text_files) {
  const std::string path = "/tmp/dynet_lite_nn_io_" + std::to_string(::getpid()) + ".txt";
  ParameterCollection a, b;
  Builders ba(a), bb(b);
  BOOST_CHECK(run(ba.lstm) != run(bb.lstm));
  {
    TextFileSaver saver(path);
    saver.save(a);
  }
  {
    TextFileLoader loader(path);
    loader.populate(b);
  }
  test::check_close(run(bb.lstm), run(ba.lstm), 1e-6);
  test::check_close(run(bb.coupled), run(ba.coupled), 1e-6);
  test::check_close(run(bb.gru), run(ba.gru), 1e-6);
  test::check_close(run(bb.rnn), run(ba.rnn), 1e-6);
  // one builder's subcollection alone, under a key
  ParameterCollection c;
  GRUBuilder gc(1, 3, 2, c);
  {
    TextFileSaver saver(path);
    saver.save(ba.gru.get_parameter_collection(), "gru");
  }
  {
    TextFileLoader loader(path);
    loader.populate(gc.get_parameter_collection(), "gru");
  }
  test::check_close(run(gc), run(ba.gru), 1e-6);
  std::remove(path.c_str());
}
