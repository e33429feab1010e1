#define BOOST_TEST_MODULE memory
#include "test_utils.h"
#include "alloc_counter.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "dynet_lite/core/arena.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/training.h"

using dl::Arena;
using dl::ComputationGraph;
using dl::Dim;
using dl::Expression;

namespace {

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % Arena::kAlign == 0; }

/// Resident set size of this process in kB (VmRSS in /proc/self/status), or -1.
long resident_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

/// Resident memory is a measure of the allocator: the sanitizers' allocators
/// keep freed blocks (quarantine) and shadow memory, so it grows by design
/// there.  The test that measures it is skipped, and reported so.
boost::test_tools::assertion_result not_under_sanitizer(boost::unit_test::test_unit_id) {
#ifdef DYNET_LITE_SANITIZED
  boost::test_tools::assertion_result r(false);
  r.message() << "SKIPPED: built with sanitizers, whose allocators grow resident memory by design";
  std::cout << "SKIPPED: built with sanitizers, whose allocators grow resident memory by design" << std::endl;
  return r;
#else
  return true;
#endif
}

/// x = input(4 values); `steps` times x = tanh(x * p + 0.5); loss = sum_elems(x).
Expression chain(ComputationGraph& cg, dl::Parameter& p, unsigned steps) {
  Expression w = dl::parameter(cg, p);
  Expression x = dl::input(cg, Dim({4}), {0.1f, -0.2f, 0.3f, -0.4f});
  for (unsigned s = 0; s < steps; ++s) x = dl::tanh(dl::cmult(x, w) + 0.5f);
  return dl::sum_elems(x);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(arena)

BOOST_AUTO_TEST_CASE(allocations_are_aligned_and_disjoint) {
  Arena a(dl::cpu_device(), 64 * 1024);
  char* p1 = static_cast<char*>(a.allocate(1));
  char* p2 = static_cast<char*>(a.allocate(100));
  char* p3 = static_cast<char*>(a.allocate(64));
  BOOST_CHECK(aligned(p1) && aligned(p2) && aligned(p3));
  BOOST_CHECK(p2 >= p1 + 1);
  BOOST_CHECK(p3 >= p2 + 100);
  BOOST_CHECK_EQUAL(a.used_bytes(), 64u + 128u + 64u);
  BOOST_CHECK_EQUAL(a.num_chunks(), 1u);
  BOOST_CHECK_EQUAL(a.capacity_bytes(), 64u * 1024u);
  BOOST_CHECK(a.device() == dl::cpu_device());
}

BOOST_AUTO_TEST_CASE(initial_size_is_only_a_hint) {
  Arena a(dl::cpu_device(), 10);  // too small: rounded up to a sensible minimum
  BOOST_CHECK_GE(a.capacity_bytes(), 4u * 1024u);
  float* f = a.allocate_floats(1000);
  for (int i = 0; i < 1000; ++i) f[i] = static_cast<float>(i);
  BOOST_CHECK_EQUAL(f[999], 999.f);
}

BOOST_AUTO_TEST_CASE(reset_keeps_the_chunk) {
  Arena a(dl::cpu_device(), 64 * 1024);
  void* first = a.allocate(1000);
  a.allocate(5000);
  size_t cap = a.capacity_bytes();
  a.reset();
  BOOST_CHECK_EQUAL(a.used_bytes(), 0u);
  BOOST_CHECK_EQUAL(a.capacity_bytes(), cap);
  BOOST_CHECK_EQUAL(a.num_chunks(), 1u);
  // The memory is handed out again from the start: nothing was freed.
  BOOST_CHECK(a.allocate(1000) == first);
}

// A chunk mapped with huge pages is touched 2 MiB at a time: at a reset, the
// rest of the huge page in which a chunk's use has ended is given back
// (Device::trim), and the memory that was used keeps its contents.  (Where the
// kernel backs no memory with huge pages, those pages were never resident.)
BOOST_AUTO_TEST_CASE(reset_gives_back_the_pages_past_the_use) {
  // A use ending 64 kB into the second 2 MiB of an 8 MiB chunk, and 64 kB into
  // the last 2 MiB of a 5 MiB chunk (mapped as 6 MiB: whole huge pages).
  for (const size_t chunk : {size_t(8) << 20, size_t(5) << 20}) {
    const size_t used = (chunk == (size_t(8) << 20) ? size_t(2) << 20 : size_t(4) << 20) + 64 * 1024;
    const size_t to = (used / (size_t(2) << 20) + 1) * (size_t(2) << 20);  // the end of that huge page
    Arena a(dl::cpu_device(), chunk);
    char* p = static_cast<char*>(a.allocate(used));
    std::memset(p, 7, used);
    a.reset();
#if defined(__linux__)
    const size_t page = 4096, from = (used + page - 1) / page * page;
    BOOST_REQUIRE_EQUAL(reinterpret_cast<std::uintptr_t>(p) % page, 0u);
    std::vector<unsigned char> resident((to - from) / page);
    BOOST_REQUIRE_EQUAL(mincore(p + from, to - from, resident.data()), 0);
    size_t pages = 0;
    for (unsigned char r : resident) pages += r & 1;
    BOOST_CHECK_EQUAL(pages, 0u);
#endif
    char* q = static_cast<char*>(a.allocate(used));
    BOOST_REQUIRE(q == p);
    BOOST_CHECK(q[0] == 7 && q[used / 2] == 7 && q[used - 1] == 7);
  }
}

BOOST_AUTO_TEST_CASE(grows_past_the_first_chunk) {
  Arena a(dl::cpu_device(), 64 * 1024);
  std::vector<float*> blocks;
  // 10 blocks of 40 kB = 400 kB, far more than the first 64 kB chunk.
  for (int k = 0; k < 10; ++k) {
    float* f = a.allocate_floats(10 * 1024);
    BOOST_REQUIRE(aligned(f));
    for (int i = 0; i < 10 * 1024; ++i) f[i] = static_cast<float>(k);
    blocks.push_back(f);
  }
  BOOST_CHECK_GT(a.num_chunks(), 1u);
  BOOST_CHECK_GE(a.capacity_bytes(), 400u * 1024u);
  // Earlier blocks were not moved or overwritten by the growth.
  for (int k = 0; k < 10; ++k) {
    BOOST_CHECK_EQUAL(blocks[k][0], static_cast<float>(k));
    BOOST_CHECK_EQUAL(blocks[k][10 * 1024 - 1], static_cast<float>(k));
  }
  // A request larger than twice the last chunk gets a chunk of its own size.
  float* big = a.allocate_floats(4 * 1024 * 1024);
  big[4 * 1024 * 1024 - 1] = 1.f;
  BOOST_CHECK_GE(a.capacity_bytes(), 16u * 1024u * 1024u);

  // After reset the chunks are kept (their pages are already touched): the same
  // sequence fits again with no new chunk and no new memory.
  size_t cap = a.capacity_bytes(), chunks = a.num_chunks();
  a.reset();
  BOOST_CHECK_EQUAL(a.num_chunks(), chunks);
  BOOST_CHECK_EQUAL(a.capacity_bytes(), cap);
  for (int k = 0; k < 10; ++k) a.allocate_floats(10 * 1024);
  a.allocate_floats(4 * 1024 * 1024);
  BOOST_CHECK_EQUAL(a.num_chunks(), chunks);
  BOOST_CHECK_EQUAL(a.capacity_bytes(), cap);
}

// Graphs that keep growing add chunks; past Arena::kMaxChunks (or when they
// hold far more than the graphs use) they are merged into one at reset, so the
// count stays bounded and the next graph of the same size fits without growth.
BOOST_AUTO_TEST_CASE(chunk_count_stays_bounded) {
  Arena a(dl::cpu_device(), 64 * 1024);
  for (int r = 0; r < 14; ++r) {
    a.reset();
    BOOST_CHECK_LE(a.num_chunks(), Arena::kMaxChunks);
    const size_t pieces = size_t(1) << (r / 2);
    for (size_t k = 0; k < pieces; ++k) {
      float* f = a.allocate_floats(16 * 1024 + 16 * r);
      f[0] = f[16 * 1024 - 1] = 1.f;
    }
    a.reset();  // the chunks may be merged here, never below the graph's need
    const size_t cap = a.capacity_bytes();
    for (size_t k = 0; k < pieces; ++k) a.allocate_floats(16 * 1024 + 16 * r);  // the same graph: no new memory
    BOOST_CHECK_EQUAL(a.capacity_bytes(), cap);
  }
}

// Doubling can leave most of the memory unused: a graph that needs one large
// block after small ones adds a chunk of twice the last, and the next graph
// needs little.  Chunks holding more than twice the most ever used (and
// kMergeSlack more) become one chunk of that peak and a quarter more, in which
// the largest graph seen fits again without growth.
BOOST_AUTO_TEST_CASE(wasted_chunks_are_merged_to_the_peak) {
  Arena a(dl::cpu_device(), 64 * 1024);
  const size_t block = 3 * 1024 * 1024;  // floats: 12 MB
  auto graph = [&] {
    float* f = a.allocate_floats(block);
    f[0] = f[block - 1] = 1.f;
    // Scratch taken and given back: part of the peak though not in use at reset.
    const Arena::Mark m = a.mark();
    a.allocate_floats(block / 4)[0] = 2.f;
    a.rewind(m);
  };
  for (int k = 0; k < 8; ++k) a.allocate_floats(64 * 1024);  // 2 MB in growing chunks
  graph();
  const size_t peak = a.peak_bytes();
  BOOST_CHECK_EQUAL(peak, (2 + 12 + 3) * (size_t(1) << 20));
  BOOST_CHECK_GT(a.capacity_bytes(), 2 * peak + Arena::kMergeSlack);
  a.reset();
  BOOST_CHECK_EQUAL(a.num_chunks(), 1u);
  BOOST_CHECK_GE(a.capacity_bytes(), peak);
  BOOST_CHECK_LE(a.capacity_bytes(), peak + peak / 4 + (64 << 10));
  const size_t cap = a.capacity_bytes();
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 8; ++k) a.allocate_floats(64 * 1024);
    graph();
    BOOST_CHECK_EQUAL(a.num_chunks(), 1u);
    a.reset();
    BOOST_CHECK_EQUAL(a.capacity_bytes(), cap);
  }
}

// A request that no chunk holds while nothing is in use (a backward pass's
// gradient block, larger than the last one) trades every chunk for one that
// holds it: the old chunks are not kept mapped beside the new one.
BOOST_AUTO_TEST_CASE(a_first_request_larger_than_every_chunk_replaces_them) {
  Arena a(dl::cpu_device(), 64 * 1024);
  for (int k = 0; k < 8; ++k) a.allocate_floats(32 * 1024);  // 1 MB in growing chunks
  BOOST_REQUIRE_GT(a.num_chunks(), 2u);
  const size_t peak = a.peak_bytes();
  a.reset();
  const size_t block = 3 * 1024 * 1024;  // floats: 12 MB, more than every chunk
  float* f = a.allocate_floats(block);
  BOOST_REQUIRE(aligned(f));
  f[0] = f[block - 1] = 1.f;
  BOOST_CHECK_EQUAL(a.num_chunks(), 1u);
  BOOST_CHECK_GE(a.capacity_bytes(), block * sizeof(float));
  BOOST_CHECK_LE(a.capacity_bytes(), block * sizeof(float) * 5 / 4 + (64 << 10));
  BOOST_CHECK_GE(a.capacity_bytes(), peak);
  // The next pass of the same size lands in the same place, with no new memory.
  const size_t cap = a.capacity_bytes();
  a.reset();
  BOOST_CHECK(a.allocate_floats(block) == f);
  BOOST_CHECK_EQUAL(a.capacity_bytes(), cap);
  // With something in use, a large request adds a chunk and keeps the others.
  a.reset();
  float* small = a.allocate_floats(16);
  small[0] = 2.f;
  a.allocate_floats(2 * block)[0] = 3.f;
  BOOST_CHECK_EQUAL(a.num_chunks(), 2u);
  BOOST_CHECK_EQUAL(small[0], 2.f);
}

BOOST_AUTO_TEST_CASE(rewind_within_a_chunk) {
  Arena a(dl::cpu_device(), 64 * 1024);
  a.allocate(128);
  Arena::Mark m = a.mark();
  size_t used = a.used_bytes();
  void* p = a.allocate(256);
  a.allocate(512);
  a.rewind(m);
  BOOST_CHECK_EQUAL(a.used_bytes(), used);
  BOOST_CHECK(a.allocate(256) == p);
  // Rewinding to a later mark than the current position does nothing.
  Arena::Mark later = a.mark();
  a.rewind(m);
  a.rewind(later);
  BOOST_CHECK_EQUAL(a.used_bytes(), used);
}

BOOST_AUTO_TEST_CASE(rewind_across_chunks) {
  Arena a(dl::cpu_device(), 64 * 1024);
  a.allocate(1024);
  Arena::Mark m = a.mark();
  void* p = a.allocate(1024);
  for (int k = 0; k < 8; ++k) a.allocate(60 * 1024);  // spills into new chunks
  size_t chunks = a.num_chunks();
  BOOST_CHECK_GT(chunks, 1u);
  a.rewind(m);
  BOOST_CHECK(a.allocate(1024) == p);
  // The spilled chunks are reused, not reallocated.
  for (int k = 0; k < 8; ++k) a.allocate(60 * 1024);
  BOOST_CHECK_EQUAL(a.num_chunks(), chunks);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(graph_memory)

BOOST_AUTO_TEST_CASE(graph_larger_than_the_initial_arena) {
  // 2M floats per node (8 MB), several nodes: far past the default 1 MB arena.
  const unsigned n = 2 * 1024 * 1024;
  std::vector<float> data(n);
  for (unsigned i = 0; i < n; ++i) data[i] = static_cast<float>(i % 7) - 3.f;
  ComputationGraph cg;
  Expression x = dl::input(cg, Dim({n}), data);
  Expression y = dl::square(x) + 1.f;
  Expression z = dl::sum_elems(dl::cmult(y, x));
  // sum over i of (v^2 + 1) v, with v cycling over -3..3: each period sums to 0.
  double want = 0;
  for (unsigned i = 0; i < n; ++i) want += (double(data[i]) * data[i] + 1) * data[i];
  BOOST_CHECK_CLOSE(dl::as_scalar(cg.forward(z)), want, 1e-3);
  BOOST_CHECK_GE(cg.arena_capacity_bytes(), 3u * n * sizeof(float));
  std::vector<float> yv = dl::as_vector(y.value());
  BOOST_CHECK_EQUAL(yv[0], 10.f);  // (-3)^2 + 1
  BOOST_CHECK_EQUAL(yv[n - 1], data[n - 1] * data[n - 1] + 1.f);
}

BOOST_AUTO_TEST_CASE(capacity_constant_over_graphs_of_one_size) {
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({4});
  size_t cap = 0;
  for (int g = 0; g < 500; ++g) {
    ComputationGraph cg;
    Expression loss = chain(cg, p, 300);
    cg.forward(loss);
    cg.backward(loss);
    if (g == 2) cap = cg.arena_capacity_bytes();
    if (g > 2) BOOST_REQUIRE_EQUAL(cg.arena_capacity_bytes(), cap);
  }
  BOOST_CHECK_GT(cap, 0u);
}

BOOST_AUTO_TEST_CASE(capacity_constant_when_one_graph_is_cleared) {
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({4});
  ComputationGraph cg;
  size_t cap = 0;
  for (int g = 0; g < 500; ++g) {
    cg.clear();
    Expression loss = chain(cg, p, 300);
    cg.forward(loss);
    cg.backward(loss);
    if (g == 2) cap = cg.arena_capacity_bytes();
    if (g > 2) BOOST_REQUIRE_EQUAL(cg.arena_capacity_bytes(), cap);
  }
}

// A warm training loop allocates nothing: each graph takes the arenas, the
// node chunks and the executor its thread's last graph left, and forward,
// backward and the update reuse their memory.  Plain and batched, with a
// recurrence, lookups and a loss per step.
BOOST_AUTO_TEST_CASE(a_warm_training_loop_allocates_nothing) {
  dl::ParameterCollection pc;
  dl::Parameter W = pc.add_parameters({8, 8}), b = pc.add_parameters({8});
  dl::LookupParameter E = pc.add_lookup_parameters(30, {8});
  dl::SimpleSGDTrainer trainer(pc, 0.05f);
  std::vector<dl::Expression> losses;  // the test's own, kept
  for (int strategy : {0, 1}) {
    auto step = [&](unsigned r) {
      dl::ComputationGraph cg;
      cg.set_autobatch(strategy);
      losses.clear();
      for (unsigned s = 0; s < 3; ++s) {
        dl::Expression h = dl::lookup(cg, E, (r + s) % 30);
        for (unsigned t = 0; t < 4; ++t)
          h = dl::tanh(dl::affine_transform({dl::parameter(cg, b), dl::parameter(cg, W), h}) +
                       dl::lookup(cg, E, (r * 7 + s * 3 + t) % 30));
        losses.push_back(dl::pickneglogsoftmax(h, (r + s) % 8));
      }
      dl::Expression loss = dl::sum(losses);
      cg.forward(loss);
      cg.backward(loss);
      trainer.update();
    };
    for (unsigned r = 0; r < 60; ++r) step(r);
    const long allocations = test::allocations_during([&] {
      for (unsigned r = 0; r < 500; ++r) step(r);
    });
    if (allocations >= 0) BOOST_CHECK_EQUAL(allocations, 0);
  }
}

// An LSTM builder's gates are its own: no caller holds them.  Plain backward
// gives a step's gates gradient memory to the next step's once the step has
// passed it on, so a sequence's gates hold a few slots, not one a step.  The
// parameters' gradients are those of a backward that keeps every gradient;
// the gates' gradients can no longer be read, and get_gradient says how to
// keep them.
BOOST_AUTO_TEST_CASE(an_lstm_builders_gates_share_their_gradient_memory) {
  const unsigned in = 16, hid = 32, steps = 40;
  dl::ParameterCollection m;
  dl::VanillaLSTMBuilder lstm(2, in, hid, m);
  dl::LookupParameter emb = m.add_lookup_parameters(50, {in});
  struct Run {
    std::vector<std::vector<float>> grads;
    std::set<const float*> gates_memory;
    unsigned gates = 0;
    bool gates_readable = true;
  };
  auto run = [&](bool full) {
    Run r;
    m.reset_gradient();
    ComputationGraph cg;
    lstm.new_graph(cg);
    lstm.start_new_sequence();
    std::vector<Expression> hs;
    for (unsigned t = 0; t < steps; ++t) hs.push_back(lstm.add_input(dl::lookup(cg, emb, (7 * t) % 50)));
    Expression loss = dl::sum_elems(dl::tanh(dl::sum(hs)));
    cg.forward(loss);
    cg.backward(loss, full);
    for (dl::VariableIndex i = 0; i <= loss.i; ++i) {
      if (!cg.node(i).internal) continue;
      ++r.gates;
      r.gates_memory.insert(cg.node(i).grad);
      if (r.gates == 1) {
        try {
          cg.get_gradient(i);
        } catch (const std::runtime_error& e) {
          r.gates_readable = false;
          BOOST_CHECK(std::string(e.what()).find("backward(loss, true)") != std::string::npos);
        }
      }
    }
    for (auto& p : m.parameters_list()) r.grads.push_back(dl::as_vector(p->g));
    r.grads.push_back(test::table_gradient(emb.get_storage()));
    for (const Expression& h : hs) r.grads.push_back(dl::as_vector(h.gradient()));  // the caller's steps stay readable
    return r;
  };
  const Run kept = run(true), reused = run(false);
  BOOST_CHECK_EQUAL(kept.gates, 2 * steps);
  BOOST_CHECK_EQUAL(reused.gates, 2 * steps);
  BOOST_CHECK_EQUAL(kept.gates_memory.size(), 2 * steps);
  BOOST_CHECK_LE(reused.gates_memory.size(), 4u);
  BOOST_CHECK(kept.gates_readable);
  BOOST_CHECK(!reused.gates_readable);
  BOOST_REQUIRE_EQUAL(kept.grads.size(), reused.grads.size());
  for (size_t p = 0; p < kept.grads.size(); ++p) test::check_close(reused.grads[p], kept.grads[p], 1e-5);
}

BOOST_AUTO_TEST_CASE(resident_memory_flat_over_100000_graphs, *boost::unit_test::precondition(not_under_sanitizer)) {
  long start = resident_kb();
  if (start < 0) {
    BOOST_TEST_MESSAGE("no /proc/self/status: skipped");
    return;
  }
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({4});
  std::mt19937 rng(12345);
  std::uniform_int_distribution<unsigned> steps(1, 200);
  long at_10000 = 0;
  double checksum = 0;
  for (int g = 1; g <= 100000; ++g) {
    ComputationGraph cg;
    Expression loss = chain(cg, p, steps(rng));
    checksum += dl::as_scalar(cg.forward(loss));
    if (g % 4 == 0) cg.backward(loss);
    if (g == 10000) at_10000 = resident_kb();
  }
  long at_100000 = resident_kb();
  BOOST_TEST_MESSAGE("VmRSS: start " << start << " kB, graph 10000 " << at_10000 << " kB, graph 100000 "
                                     << at_100000 << " kB");
  BOOST_CHECK(std::isfinite(checksum));
  // Graph memory is reused: 90,000 more graphs may not grow the process (256 kB
  // leaves room for allocator noise, far below one leaked node per graph).
  BOOST_CHECK_LT(at_100000 - at_10000, 256);
}

// What a backward call keeps for its node's other calls and for the weight
// gradients left for later (an LSTM's gate derivatives and tanh(c), 2.5 kB a
// step here) is taken back between nodes once those terms are summed: a long
// recurrence's backward holds little more than its values and gradients, not
// another three quarters of its values.  Plain and batched execution agree.
BOOST_AUTO_TEST_CASE(backward_memory_of_a_long_recurrence_is_taken_back) {
  const unsigned in = 64, hid = 128, steps = 3000;
  dl::ParameterCollection m;
  dl::Parameter wx = m.add_parameters({4 * hid, in}), wh = m.add_parameters({4 * hid, hid}),
                b = m.add_parameters({4 * hid});
  std::vector<float> xs(in);
  for (unsigned i = 0; i < in; ++i) xs[i] = 0.01f * static_cast<float>(i % 13) - 0.06f;
  struct Run {
    size_t peak = 0;
    std::vector<float> dwx, dwh;
  };
  auto run = [&](bool batched) {
    Run r;
    // A thread of its own: its graphs' arenas are new, so their peak is this graph's.
    std::thread t([&] {
      ComputationGraph cg;
      if (batched) cg.set_autobatch(1);
      Expression Wx = dl::parameter(cg, wx), Wh = dl::parameter(cg, wh), B = dl::parameter(cg, b);
      Expression h = dl::zeros(cg, Dim({hid})), c = h;
      for (unsigned s = 0; s < steps; ++s) {
        Expression g = dl::vanilla_lstm_gates(dl::input(cg, Dim({in}), xs), h, Wx, Wh, B);
        c = dl::vanilla_lstm_c(c, g);
        h = dl::vanilla_lstm_h(c, g);
      }
      Expression loss = dl::sum_elems(h);
      cg.forward(loss);
      cg.backward(loss);
      r.peak = cg.arena_peak_bytes();
      r.dwx = dl::as_vector(Wx.gradient());
      r.dwh = dl::as_vector(Wh.gradient());
    });
    t.join();
    return r;
  };
  // Values: an input (64), the gates (512), c and h (128 each) a step; the
  // gradients as many and the parameters'.
  const size_t values = size_t(steps) * (in + 4 * hid + 2 * hid) * sizeof(float);
  const size_t params = size_t(4 * hid) * (in + hid + 1) * sizeof(float);
  const Run plain = run(false), batched = run(true);
  BOOST_TEST_MESSAGE("peak " << plain.peak << " (plain), " << batched.peak << " (batched) bytes; values " << values);
  // Kept memory and the weight sums' scratch come to about 4 MB; 2.5 kB a step
  // kept to the end (7.5 MB) and the sums' scratch reach 13.6 MB.
  BOOST_CHECK_LT(plain.peak, 2 * values + params + (6u << 20));
  BOOST_CHECK_LT(batched.peak, 2 * values + params + (6u << 20));
  BOOST_REQUIRE_EQUAL(plain.dwx.size(), batched.dwx.size());
  double norm = 0;
  for (float v : plain.dwx) norm = std::max(norm, std::abs(double(v)));
  BOOST_REQUIRE_GT(norm, 0.0);
  for (size_t i = 0; i < plain.dwx.size(); ++i) BOOST_REQUIRE_SMALL(plain.dwx[i] - batched.dwx[i], 1e-4f * float(norm));
  for (size_t i = 0; i < plain.dwh.size(); ++i) BOOST_REQUIRE_SMALL(plain.dwh[i] - batched.dwh[i], 1e-4f * float(norm));
}

// An output layer over many columns read only by pickneglogsoftmax keeps no
// gradient of its scores: plain backward remakes it from the loss a block of
// columns at a time for the layer's backward, and get_gradient remakes it
// whole.  Every gradient is that of a pass that keeps every node's own (full),
// and the peak is lower by more than half the scores.  A second reader of the
// scores keeps theirs stored.
BOOST_AUTO_TEST_CASE(loss_scores_gradient_made_on_demand) {
  // Scores of 4096 x 1536 floats (24 MB): three blocks of 512 columns.
  const unsigned vocab = 4096, hid = 16, cols = 1536;
  dl::ParameterCollection m;
  dl::Parameter w = m.add_parameters({vocab, hid}), b = m.add_parameters({vocab}), p = m.add_parameters({hid, hid});
  std::vector<float> xs(size_t(hid) * cols);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.05f * static_cast<float>(i % 17) - 0.4f;
  std::vector<unsigned> targets(cols);
  for (unsigned c = 0; c < cols; ++c) targets[c] = (c * 2654435761u) % vocab;
  struct Run {
    size_t peak = 0;
    std::vector<std::vector<float>> grads;  // w, b, p, the scores' (twice), W, B and h nodes'
  };
  auto run = [&](bool full, bool second_reader) {
    Run r;
    m.reset_gradient();
    std::thread t([&] {  // new arenas: their peak is this graph's
      ComputationGraph cg;
      Expression W = dl::parameter(cg, w), B = dl::parameter(cg, b), P = dl::parameter(cg, p);
      Expression h = dl::tanh(P * dl::input(cg, Dim({hid}, cols), xs));
      Expression scores = dl::affine_transform({B, W, h});
      Expression loss = dl::sum_batches(dl::pickneglogsoftmax(scores, targets));
      if (second_reader) loss = loss + dl::sum_batches(dl::sum_elems(dl::square(scores))) * 0.01f;
      cg.forward(loss);
      cg.backward(loss, full);
      r.peak = cg.arena_peak_bytes();
      for (dl::Parameter q : {w, b, p}) r.grads.push_back(dl::as_vector(q.get_storage().g));
      r.grads.push_back(dl::as_vector(scores.gradient()));
      r.grads.push_back(dl::as_vector(scores.gradient()));  // asked again
      for (const Expression& e : {W, B, h}) r.grads.push_back(dl::as_vector(e.gradient()));
    });
    t.join();
    return r;
  };
  const size_t scores_bytes = size_t(vocab) * cols * sizeof(float);
  const Run kept = run(true, false), made = run(false, false);
  BOOST_TEST_MESSAGE("peak " << made.peak << " (on demand), " << kept.peak << " (full) bytes; scores "
                             << scores_bytes);
  BOOST_CHECK_GT(kept.peak, made.peak + scores_bytes / 2);
  for (size_t i = 0; i < kept.grads.size(); ++i) test::check_close(made.grads[i], kept.grads[i], 1e-5);
  double norm = 0;
  for (float v : made.grads[3]) norm = std::max(norm, std::abs(double(v)));
  BOOST_CHECK_GT(norm, 0.0);
  // Two graphs on two threads at once: one of them adds straight into the
  // parameters' gradients, the other through its nodes; together, twice one's.
  m.reset_gradient();
  auto graph = [&] {
    ComputationGraph cg;
    Expression W = dl::parameter(cg, w), B = dl::parameter(cg, b), P = dl::parameter(cg, p);
    Expression h = dl::tanh(P * dl::input(cg, Dim({hid}, cols), xs));
    Expression loss = dl::sum_batches(dl::pickneglogsoftmax(dl::affine_transform({B, W, h}), targets));
    cg.forward(loss);
    cg.backward(loss);
  };
  std::thread t1(graph), t2(graph);
  t1.join();
  t2.join();
  for (size_t i = 0; i < 3; ++i) {
    std::vector<float> twice = made.grads[i];
    for (float& v : twice) v *= 2.f;
    test::check_close(dl::as_vector(std::vector<dl::Parameter>{w, b, p}[i].get_storage().g), twice, 1e-5);
  }
  const Run kept2 = run(true, true), stored2 = run(false, true);
  BOOST_TEST_MESSAGE("with a second reader: peak " << stored2.peak << ", " << kept2.peak << " (full) bytes");
  BOOST_CHECK_GT(stored2.peak, made.peak + scores_bytes / 2);
  for (size_t i = 0; i < kept2.grads.size(); ++i) test::check_close(stored2.grads[i], kept2.grads[i], 1e-5);
}

// The same with automatic batching: a loss and an output layer per column, as
// a minibatch of sentences built one by one, batched into one group each.  The
// scores' group keeps no gradient; every gradient is that of a full pass.
// A group of one block (24 columns here) remakes it whole in backward's kept
// memory, so that the weight's thin term may wait to be summed with others.
// Columns past 1200 repeat earlier ones (the same word looked up): merging
// makes one node of their scores, which two losses read.
BOOST_AUTO_TEST_CASE(batched_loss_scores_gradient_made_on_demand) {
  for (const unsigned cols : {1536u, 24u}) {
  const unsigned vocab = 4096, hid = 16;
  dl::ParameterCollection m;
  dl::Parameter w = m.add_parameters({vocab, hid}), b = m.add_parameters({vocab}), p = m.add_parameters({hid, hid});
  dl::LookupParameter words = m.add_lookup_parameters(1200, {hid});
  struct Run {
    size_t peak = 0;
    std::vector<std::vector<float>> grads;  // w, b, p, then two columns' scores and h
  };
  auto run = [&](bool full, bool second_reader) {
    Run r;
    m.reset_gradient();
    std::thread t([&] {
      ComputationGraph cg;
      cg.set_autobatch(1);
      Expression W = dl::parameter(cg, w), B = dl::parameter(cg, b), P = dl::parameter(cg, p);
      std::vector<Expression> losses, scores, hs;
      for (unsigned c = 0; c < cols; ++c) {
        hs.push_back(dl::tanh(P * dl::lookup(cg, words, c < 1200 ? c : c - 1200)));
        scores.push_back(dl::affine_transform({B, W, hs.back()}));
        losses.push_back(dl::pickneglogsoftmax(scores.back(), (c * 2654435761u) % vocab));
      }
      if (second_reader) losses.push_back(dl::sum_elems(dl::square(scores[7])) * 0.01f);
      Expression loss = dl::sum(losses);
      cg.forward(loss);
      cg.backward(loss, full);
      r.peak = cg.arena_peak_bytes();
      for (dl::Parameter q : {w, b, p}) r.grads.push_back(dl::as_vector(q.get_storage().g));
      for (unsigned c : {0u, 7u, cols - 1}) {
        if (c >= 1200 || (c < 336 && cols > 1200)) continue;  // merged: get_gradient throws
        r.grads.push_back(dl::as_vector(scores[c].gradient()));
        r.grads.push_back(dl::as_vector(hs[c].gradient()));
      }
    });
    t.join();
    return r;
  };
  const size_t scores_bytes = size_t(vocab) * std::min(cols, 1200u) * sizeof(float);  // merged
  const Run kept = run(true, false), made = run(false, false);
  BOOST_TEST_MESSAGE("batched: peak " << made.peak << " (on demand), " << kept.peak << " (full) bytes; scores "
                                      << scores_bytes);
  for (size_t i = 0; i < kept.grads.size(); ++i) test::check_close(made.grads[i], kept.grads[i], 1e-5);
  if (cols < 1536) continue;
  BOOST_CHECK_GT(kept.peak, made.peak + scores_bytes / 2);
  // A second reader of one column keeps the group's gradient stored.
  const Run kept2 = run(true, true), stored2 = run(false, true);
  BOOST_TEST_MESSAGE("batched, a second reader: peak " << stored2.peak << ", " << kept2.peak << " (full) bytes");
  BOOST_CHECK_GT(stored2.peak, made.peak + scores_bytes / 2);
  for (size_t i = 0; i < kept2.grads.size(); ++i) test::check_close(stored2.grads[i], kept2.grads[i], 1e-5);
  }
}

// Plain backward sizes its gradient block from a running count of the nodes'
// values: it must shrink with a revert and cover a pass from an inner node.
BOOST_AUTO_TEST_CASE(gradients_after_a_revert_and_from_an_inner_node) {
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({4});
  std::vector<float> want;
  {
    ComputationGraph fresh;
    Expression w = dl::parameter(fresh, p);
    Expression loss = dl::sum_elems(dl::square(w * 2.f));
    fresh.forward(loss);
    fresh.backward(loss);
    want = dl::as_vector(w.gradient());
  }
  ComputationGraph cg;
  Expression w = dl::parameter(cg, p);
  cg.checkpoint();
  Expression big = dl::sum_elems(dl::input(cg, Dim({5000}), std::vector<float>(5000, 1.f)) * 2.f);
  cg.forward(big);
  cg.revert();
  Expression loss = dl::sum_elems(dl::square(w * 2.f));
  cg.forward(loss);
  cg.backward(loss);
  test::check_close(dl::as_vector(w.gradient()), want);
  // Nodes after the one backward starts from get no gradient.
  Expression later = dl::concatenate({loss * 3.f, dl::input(cg, Dim({3000}), std::vector<float>(3000, 1.f))});
  cg.forward(later);
  cg.backward(loss);
  test::check_close(dl::as_vector(w.gradient()), want);
}

// Plain backward on the CPU sums a parameter node's deferred weight-gradient
// terms straight into the parameter's gradient while that is zero (and zeroes
// other gradients only where a kernel adds to them).  The parameters' gradients
// are those of a pass that keeps every node's own (full), to the bit; a
// parameter node's gradient reads the parameter's while nothing else has
// written to it, and is kept apart when a second use of the parameter would.
BOOST_AUTO_TEST_CASE(parameter_gradients_summed_into_the_parameters) {
  dl::ParameterCollection m;
  // Gradients of more than 256 floats, most of the gradients' floats (backward
  // zeroes smaller ones when it gives them, and a graph of small nodes at once).
  dl::Parameter w = m.add_parameters({48, 40}), u = m.add_parameters({48, 48}), b = m.add_parameters({48});
  dl::SimpleSGDTrainer trainer(m, 0.1f);
  std::vector<std::vector<float>> xs;
  for (unsigned t = 0; t < 7; ++t) {
    std::vector<float> x(40);
    for (unsigned i = 0; i < 40; ++i) x[i] = 0.1f * static_cast<float>((3 * t + i) % 7) - 0.3f;
    xs.push_back(x);
  }
  struct Pass {
    std::vector<std::vector<float>> params, nodes;  // w, u, b; then W, U, U2 nodes
  };
  // A recurrence h = tanh(W x_t + U h + b); `second_u` uses u through a second node at the last step.
  auto pass = [&](bool full, bool second_u, bool update_before_reading) {
    Pass r;
    m.reset_gradient();
    ComputationGraph cg;
    Expression W = dl::parameter(cg, w), U = dl::parameter(cg, u), B = dl::parameter(cg, b);
    Expression U2 = second_u ? dl::parameter(cg, u) : U;
    Expression h = dl::tanh(W * dl::input(cg, Dim({40}), xs[0]) + B);
    for (unsigned t = 1; t < xs.size(); ++t)
      h = dl::tanh(W * dl::input(cg, Dim({40}), xs[t]) + (t + 1 == xs.size() ? U2 : U) * h + B);
    Expression loss = dl::sum_elems(dl::square(h));
    cg.forward(loss);
    cg.backward(loss, full);
    for (dl::Parameter p : {w, u, b}) r.params.push_back(dl::as_vector(p.get_storage().g));
    if (update_before_reading) {
      trainer.update();
      test::check_throws_with<std::runtime_error>([&] { (void)W.gradient(); },
                                                  {"get_gradient: node", "parameter", "changed since"});
      return r;
    }
    for (const Expression& e : {W, U, U2}) r.nodes.push_back(dl::as_vector(e.gradient()));
    return r;
  };
  for (bool second_u : {false, true}) {
    const Pass kept = pass(true, second_u, false), summed = pass(false, second_u, false);
    for (size_t i = 0; i < kept.params.size(); ++i) BOOST_CHECK(kept.params[i] == summed.params[i]);
    for (size_t i = 0; i < kept.nodes.size(); ++i) BOOST_CHECK(kept.nodes[i] == summed.nodes[i]);
    if (second_u) {  // the two nodes of u add up to its gradient
      std::vector<float> both = summed.nodes[1];
      for (size_t i = 0; i < both.size(); ++i) both[i] += summed.nodes[2][i];
      test::check_close(both, summed.params[1]);
      BOOST_CHECK(summed.nodes[1] != summed.nodes[2]);
    }
  }
  pass(false, false, true);
}

// A large parameter's node that one product alone reads, with a product wide
// enough not to be left for later: the product writes its gradient straight
// into the parameter's, while that is zero, and the node's gradient reads the
// parameter's.  A second reader, or a parameter gradient already written (a
// second backward before the update): the node keeps its own.  Every way, and
// with two graphs at once on two threads, the gradients are those of a pass
// that keeps every node's own.
BOOST_AUTO_TEST_CASE(large_parameter_gradient_written_into_the_parameter) {
  const unsigned rows = 512, in = 160, cols = 256;  // W: 81,920 floats
  dl::ParameterCollection m;
  dl::Parameter w = m.add_parameters({rows, in}), b = m.add_parameters({rows});
  dl::SimpleSGDTrainer trainer(m, 0.1f);
  std::vector<float> xs(size_t(in) * cols);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.03f * static_cast<float>(i % 23) - 0.3f;
  auto build = [&](ComputationGraph& cg, Expression& W, bool second_reader) {
    W = dl::parameter(cg, w);
    Expression x = dl::input(cg, Dim({in}, cols), xs);
    Expression loss =
        dl::sum_batches(dl::sum_elems(dl::square(dl::tanh(dl::affine_transform({dl::parameter(cg, b), W, x})))));
    return second_reader ? loss + dl::sum_batches(dl::sum_elems(W * x)) * 0.5f : loss;
  };
  struct Pass {
    std::vector<float> param, node;  // w's gradient; W's node's (of the last graph)
    bool node_reads_parameter = false;
  };
  auto pass = [&](bool full, bool second_reader, bool twice) {
    Pass r;
    m.reset_gradient();
    for (int k = 0; k < (twice ? 2 : 1); ++k) {
      ComputationGraph cg;
      Expression W;
      Expression loss = build(cg, W, second_reader);
      cg.forward(loss);
      cg.backward(loss, full);
      const dl::Tensor& g = W.gradient();
      r.node = dl::as_vector(g);
      r.node_reads_parameter = g.v == w.get_storage().g.v;
    }
    r.param = dl::as_vector(w.get_storage().g);
    return r;
  };
  for (bool second_reader : {false, true})
    for (bool twice : {false, true}) {
      const Pass kept = pass(true, second_reader, twice), direct = pass(false, second_reader, twice);
      BOOST_TEST_CONTEXT("second reader " << second_reader << ", two passes " << twice) {
        test::check_close(direct.param, kept.param, 1e-5);
        test::check_close(direct.node, kept.node, 1e-5);
        BOOST_CHECK(!kept.node_reads_parameter);
        BOOST_CHECK_EQUAL(direct.node_reads_parameter, !second_reader && !twice);
      }
    }
  // Read after an update: the parameter's gradient is no longer the node's.
  {
    m.reset_gradient();
    ComputationGraph cg;
    Expression W;
    Expression loss = build(cg, W, false);
    cg.forward(loss);
    cg.backward(loss);
    trainer.update();
    test::check_throws_with<std::runtime_error>([&] { (void)W.gradient(); },
                                                {"get_gradient: node", "parameter", "changed since"});
  }
  // Two graphs at once: one writes into the parameter's gradient, the other adds to it.
  const Pass one = pass(false, false, false);
  m.reset_gradient();
  auto graph = [&] {
    ComputationGraph cg;
    Expression W;
    Expression loss = build(cg, W, false);
    cg.forward(loss);
    cg.backward(loss);
  };
  std::thread t1(graph), t2(graph);
  t1.join();
  t2.join();
  std::vector<float> twice = one.param;
  for (float& v : twice) v *= 2.f;
  test::check_close(dl::as_vector(w.get_storage().g), twice, 1e-5);
}

BOOST_AUTO_TEST_CASE(checkpoint_and_revert) {
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({4});
  ComputationGraph cg;
  Expression x = dl::input(cg, Dim({2}), {1.f, 2.f});
  Expression y = 2.f * x;
  cg.checkpoint();
  unsigned kept = cg.size();
  Expression z = dl::square(y);
  test::check_close(dl::as_vector(z.value()), {4.f, 16.f});
  cg.revert();
  BOOST_CHECK_EQUAL(cg.size(), kept);
  BOOST_CHECK(z.is_stale());
  BOOST_CHECK(!y.is_stale());
  test::check_throws_with<std::invalid_argument>([&] { dl::tanh(z); }, {"tanh", "stale"});
  // Older values survive the revert; new nodes can be added and computed.
  test::check_close(dl::as_vector(y.value()), {2.f, 4.f});
  Expression w = y + 1.f;
  test::check_close(dl::as_vector(w.value()), {3.f, 5.f});

  // Nested checkpoints revert in reverse order.
  cg.checkpoint();
  Expression a = w * 3.f;
  cg.checkpoint();
  Expression b = a * 3.f;
  test::check_close(dl::as_vector(b.value()), {27.f, 45.f});
  cg.revert();
  BOOST_CHECK(b.is_stale());
  BOOST_CHECK(!a.is_stale());
  cg.revert();
  BOOST_CHECK(a.is_stale());
  BOOST_CHECK(!w.is_stale());

  // Repeated checkpoint/extend/revert does not grow the graph's memory.
  size_t cap = 0;
  for (int k = 0; k < 200; ++k) {
    cg.checkpoint();
    Expression loss = dl::sum_elems(w * chain(cg, p, 100));
    cg.forward(loss);
    cg.backward(loss);
    if (k == 2) cap = cg.arena_capacity_bytes();
    if (k > 2) BOOST_REQUIRE_EQUAL(cg.arena_capacity_bytes(), cap);
    cg.revert();
    BOOST_REQUIRE_EQUAL(cg.size(), w.i + 1);
  }
  test::check_close(dl::as_vector(w.value()), {3.f, 5.f});
}

BOOST_AUTO_TEST_CASE(checkpoint_and_revert_with_batching) {
  // Batched groups copy arguments side by side (kept apart from the values for
  // backward); a revert gives that memory back too.  Fused (exec/fusion.h), the
  // same element-wise groups read their arguments in place and copy nothing.
  for (bool fusion : {false, true}) {
    dl::ParameterCollection m;
    dl::Parameter p = m.add_parameters({1000});
    ComputationGraph cg;
    cg.set_autobatch(1);
    cg.set_fusion(fusion);
    Expression base = dl::parameter(cg, p);
    float sum_p = 0.f;
    for (float v : dl::as_vector(base.value())) sum_p += v;
    size_t cap = 0;
    for (int k = 0; k < 100; ++k) {
      cg.checkpoint();
      std::vector<Expression> xs, ys;
      for (int i = 0; i < 8; ++i) xs.push_back(base * static_cast<float>(i + 1));
      // One argument in the order of xs, the other reversed: one of them is copied.
      for (int i = 0; i < 8; ++i) ys.push_back(xs[i] + xs[7 - i]);
      Expression loss = dl::sum_elems(dl::sum(ys));
      // incremental_forward: forward() would recompute (and free) everything.
      BOOST_REQUIRE_CLOSE(dl::as_scalar(cg.incremental_forward(loss)), 72.f * sum_p, 1e-2);
      cg.backward(loss);
      if (k == 2) cap = cg.arena_capacity_bytes();
      if (k > 2) BOOST_REQUIRE_EQUAL(cg.arena_capacity_bytes(), cap);
      cg.revert();
      BOOST_REQUIRE_EQUAL(cg.size(), base.i + 1);
    }
    if (fusion)
      BOOST_CHECK_GT(cg.autobatch_stats().fused_regions, 0u);
    else
      BOOST_CHECK_GT(cg.autobatch_stats().bytes_gathered, 0u);
  }
}

BOOST_AUTO_TEST_CASE(cleared_graph_reuses_memory_and_ids_change) {
  ComputationGraph cg;
  Expression x = dl::input(cg, Dim({3}), {1.f, 2.f, 3.f});
  unsigned id = cg.get_id();
  cg.clear();
  BOOST_CHECK_NE(cg.get_id(), id);
  BOOST_CHECK_EQUAL(cg.size(), 0u);
  BOOST_CHECK(x.is_stale());
}

BOOST_AUTO_TEST_SUITE_END()
