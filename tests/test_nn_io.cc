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
}  // namespace

// Builders made in the same order in two models get the same parameter names, so
// a model saved from one populates the other and the outputs agree.
BOOST_AUTO_TEST_CASE(builders_round_trip_through_text_files) {
  const std::string path = "/tmp/dynet_lite_nn_io_" + std::to_string(::getpid()) + ".txt";
  ParameterCollection a, b;
  VanillaLSTMBuilder la(2, 3, 4, a, true);
  CoupledLSTMBuilder ca(1, 3, 2, a);
  GRUBuilder ga(1, 3, 2, a);
  SimpleRNNBuilder sa(1, 3, 2, a);
  VanillaLSTMBuilder lb(2, 3, 4, b, true);
  CoupledLSTMBuilder cb(1, 3, 2, b);
  GRUBuilder gb(1, 3, 2, b);
  SimpleRNNBuilder sb(1, 3, 2, b);
  BOOST_CHECK(run(la) != run(lb));
  {
    TextFileSaver saver(path);
    saver.save(a);
  }
  {
    TextFileLoader loader(path);
    loader.populate(b);
  }
  test::check_close(run(lb), run(la), 1e-6);
  test::check_close(run(cb), run(ca), 1e-6);
  test::check_close(run(gb), run(ga), 1e-6);
  test::check_close(run(sb), run(sa), 1e-6);
  // one builder's subcollection alone, under a key
  ParameterCollection c;
  GRUBuilder gc(1, 3, 2, c);
  {
    TextFileSaver saver(path);
    saver.save(ga.get_parameter_collection(), "gru");
  }
  {
    TextFileLoader loader(path);
    loader.populate(gc.get_parameter_collection(), "gru");
  }
  test::check_close(run(gc), run(ga), 1e-6);
  std::remove(path.c_str());
}
