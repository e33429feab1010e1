#define BOOST_TEST_MODULE io
#include "test_files.h"
#include "test_utils.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "dynet_lite/io.h"

namespace fs = std::filesystem;
using dl::ParameterCollection;

namespace {

// A fresh directory per test case, removed afterwards.
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("dynet_lite_io") {}
};

using test::read_file;
using test::write_file;

std::vector<float> all_values(const dl::Parameter& p) { return dl::as_vector(p.get_storage().values); }
std::vector<float> all_values(const dl::LookupParameter& p) { return dl::as_vector(p.get_storage().all_values); }

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Values that are hard to round-trip through text.
std::vector<float> awkward_values(size_t n, float offset) {
  std::vector<float> v = test::test_values(n, offset);
  const float special[] = {1.f / 3.f,
                           -0.f,
                           std::numeric_limits<float>::max(),
                           -std::numeric_limits<float>::min(),
                           std::numeric_limits<float>::denorm_min(),
                           123456789.f,
                           1e-30f,
                           std::nextafter(1.f, 2.f)};
  for (size_t i = 0; i < n && i < 8; ++i) v[i] = special[(i + static_cast<size_t>(offset * 10)) % 8];
  return v;
}

// A collection with a subcollection and a sub-subcollection, parameters and lookups.
struct Model {
  ParameterCollection m;
  ParameterCollection enc, inner;
  dl::Parameter a, W, V;
  dl::LookupParameter E, F;
  Model() {
    a = m.add_parameters({2, 3}, "a");
    E = m.add_lookup_parameters(4, {3}, "E");
    enc = m.add_subcollection("enc");
    W = enc.add_parameters({3}, "W");
    inner = enc.add_subcollection("inner");
    V = inner.add_parameters({2, 2, 2}, "V");
    F = inner.add_lookup_parameters(3, {2, 2}, "F");
  }
  void fill(float offset) {
    a.set_value(awkward_values(6, offset));
    W.set_value(awkward_values(3, offset + 0.1f));
    V.set_value(awkward_values(8, offset + 0.2f));
    for (unsigned r = 0; r < 4; ++r) E.initialize(r, awkward_values(3, offset + 0.3f + r));
    for (unsigned r = 0; r < 3; ++r) F.initialize(r, awkward_values(4, offset + 0.4f + r));
  }
  void check_equal(const Model& o) const {
    BOOST_CHECK(bit_equal(all_values(a), all_values(o.a)));
    BOOST_CHECK(bit_equal(all_values(W), all_values(o.W)));
    BOOST_CHECK(bit_equal(all_values(V), all_values(o.V)));
    BOOST_CHECK(bit_equal(all_values(E), all_values(o.E)));
    BOOST_CHECK(bit_equal(all_values(F), all_values(o.F)));
  }
};

}  // namespace

// ================================================================ round trips

BOOST_AUTO_TEST_SUITE(round_trip)

BOOST_AUTO_TEST_CASE(collection_bit_exact) {
  TempDir t;
  Model src, dst;
  src.fill(0.f);
  dst.fill(0.5f);
  {
    dl::TextFileSaver s(t.file("m.txt"));
    s.save(src.m);
  }
  dl::TextFileLoader l(t.file("m.txt"));
  l.populate(dst.m);
  src.check_equal(dst);
  BOOST_CHECK(bit_equal(all_values(dst.a), awkward_values(6, 0.f)));
  std::vector<std::string> want{"/a", "/enc/W", "/enc/inner/V", "/E", "/enc/inner/F"};
  BOOST_CHECK(l.keys() == want);
}

BOOST_AUTO_TEST_CASE(file_format) {
  TempDir t;
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({2, 2}, "p");
  p.set_value({1.f, -0.5f, 0.25f, 3.f});
  dl::LookupParameter e = m.add_lookup_parameters(3, {2}, "e");
  for (unsigned r = 0; r < 3; ++r) e.initialize(r, {float(r), -float(r)});
  dl::TextFileSaver(t.file("f.txt")).save(m);
  std::string text = read_file(t.file("f.txt"));
  std::istringstream in(text);
  std::string h1, d1, h2, d2;
  std::getline(in, h1);
  std::getline(in, d1);
  std::getline(in, h2);
  std::getline(in, d2);
  BOOST_CHECK_EQUAL(h1, "#Parameter# /p {2,2} " + std::to_string(d1.size() + 1) + " ZERO_GRAD");
  BOOST_CHECK_EQUAL(d1, "1.00000000e+00 -5.00000000e-01 2.50000000e-01 3.00000000e+00");
  BOOST_CHECK_EQUAL(h2, "#LookupParameter# /e {2,3} " + std::to_string(d2.size() + 1) + " ZERO_GRAD");
  BOOST_CHECK(in.peek() == EOF);
}

BOOST_AUTO_TEST_CASE(pending_gradient_round_trip) {
  TempDir t;
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({3}, "p");
  std::vector<float> g{0.5f, -1.f / 3.f, 2.f};
  p.get_storage().accumulate_grad(g.data());
  dl::LookupParameter e = m.add_lookup_parameters(2, {2}, "e");
  std::vector<float> ge{1.f, 2.f};
  e.get_storage().accumulate_grad(1, ge.data());
  dl::TextFileSaver(t.file("g.txt")).save(m);
  std::string text = read_file(t.file("g.txt"));
  BOOST_CHECK(text.find("#Parameter# /p {3}") != std::string::npos);
  BOOST_CHECK(text.find("FULL_GRAD") != std::string::npos);

  ParameterCollection m2;
  dl::Parameter p2 = m2.add_parameters({3}, "p");
  dl::LookupParameter e2 = m2.add_lookup_parameters(2, {2}, "e");
  dl::TextFileLoader(t.file("g.txt")).populate(m2);
  BOOST_CHECK(bit_equal(dl::as_vector(p2.get_storage().g), g));
  BOOST_CHECK(p2.get_storage().nonzero_grad);
  BOOST_CHECK(bit_equal(test::table_gradient(e2.get_storage()), {0.f, 0.f, 1.f, 2.f}));
  BOOST_CHECK(bit_equal(all_values(p2), all_values(p)));

  // A ZERO_GRAD entry clears a gradient the target had.
  p2.get_storage().clear_gradient();
  dl::TextFileSaver(t.file("z.txt")).save(p2, "/p");
  std::vector<float> junk{9.f, 9.f, 9.f};
  p.get_storage().accumulate_grad(junk.data());
  dl::TextFileLoader(t.file("z.txt")).populate(p, "/p");
  BOOST_CHECK(bit_equal(dl::as_vector(p.get_storage().g), {0.f, 0.f, 0.f}));
  BOOST_CHECK(!p.get_storage().nonzero_grad);
}

BOOST_AUTO_TEST_CASE(reads_dynet_showpos_numbers) {
  TempDir t;
  std::string data = "+1.00000000e+00 -2.50000000e-01 +3.33333343e-01\n";
  write_file(t.file("d.txt"), "#Parameter# /w {3} " + std::to_string(data.size()) + " ZERO_GRAD\n" + data + "\n");
  ParameterCollection m;
  dl::Parameter w = m.add_parameters({3}, "w");
  dl::TextFileLoader(t.file("d.txt")).populate(m);
  BOOST_CHECK(bit_equal(all_values(w), {1.f, -0.25f, 1.f / 3.f}));
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ keys

BOOST_AUTO_TEST_SUITE(keys)

BOOST_AUTO_TEST_CASE(key_replaces_collection_prefix) {
  TempDir t;
  Model src;
  src.fill(0.f);
  dl::TextFileSaver(t.file("k.txt")).save(src.enc, "model");
  dl::TextFileLoader l(t.file("k.txt"));
  std::vector<std::string> want{"model/W", "model/inner/V", "model/inner/F"};
  BOOST_CHECK(l.keys() == want);

  // A collection of the same structure elsewhere in another model.
  ParameterCollection other;
  other.add_parameters({5}, "unrelated");
  ParameterCollection sub = other.add_subcollection("x");
  dl::Parameter W = sub.add_parameters({3}, "W");
  ParameterCollection sub2 = sub.add_subcollection("y");
  dl::Parameter V = sub2.add_parameters({2, 2, 2}, "V");
  dl::LookupParameter F = sub2.add_lookup_parameters(3, {2, 2}, "F");
  l.populate(sub, "model/");  // a trailing slash is the same key
  BOOST_CHECK(bit_equal(all_values(W), all_values(src.W)));
  BOOST_CHECK(bit_equal(all_values(V), all_values(src.V)));
  BOOST_CHECK(bit_equal(all_values(F), all_values(src.F)));
}

BOOST_AUTO_TEST_CASE(several_models_in_one_file) {
  TempDir t;
  ParameterCollection m1, m10, m2;
  dl::Parameter p1 = m1.add_parameters({2}, "p");
  dl::Parameter p10 = m10.add_parameters({2}, "p");
  dl::Parameter p2 = m2.add_parameters({2}, "p");
  p1.set_value({1.f, 1.f});
  p10.set_value({10.f, 10.f});
  p2.set_value({2.f, 2.f});
  {
    dl::TextFileSaver s(t.file("multi.txt"));
    s.save(m1, "m1");
    s.save(m10, "m10");
    s.save(m2, "m2");
  }
  dl::TextFileLoader l(t.file("multi.txt"));
  BOOST_CHECK((l.keys() == std::vector<std::string>{"m1/p", "m10/p", "m2/p"}));
  ParameterCollection c;
  dl::Parameter q = c.add_parameters({2}, "q");
  l.populate(c, "m1");  // "m1/" does not match "m10/p"
  BOOST_CHECK(bit_equal(all_values(q), {1.f, 1.f}));
  l.populate(c, "m10");
  BOOST_CHECK(bit_equal(all_values(q), {10.f, 10.f}));
  l.populate(q, "m2/p");
  BOOST_CHECK(bit_equal(all_values(q), {2.f, 2.f}));
}

BOOST_AUTO_TEST_CASE(single_parameters) {
  TempDir t;
  Model src;
  src.fill(0.f);
  {
    dl::TextFileSaver s(t.file("s.txt"));
    s.save(src.W);            // under its own name
    s.save(src.E, "emb");     // under a key
    s.save(src.V, "/v/V");
  }
  dl::TextFileLoader l(t.file("s.txt"));
  BOOST_CHECK((l.keys() == std::vector<std::string>{"/enc/W", "emb", "/v/V"}));

  Model dst;
  dst.fill(0.7f);
  l.populate(dst.W);  // empty key: the parameter's own full name
  l.populate(dst.E, "emb");
  BOOST_CHECK(bit_equal(all_values(dst.W), all_values(src.W)));
  BOOST_CHECK(bit_equal(all_values(dst.E), all_values(src.E)));

  ParameterCollection fresh;
  dl::Parameter v = l.load_param(fresh, "/v/V");
  BOOST_CHECK_EQUAL(v.dim(), dl::Dim({2, 2, 2}));
  BOOST_CHECK_EQUAL(v.get_fullname(), "/V");
  BOOST_CHECK(bit_equal(all_values(v), all_values(src.V)));
  dl::LookupParameter e = l.load_lookup_param(fresh, "emb");
  BOOST_CHECK_EQUAL(e.get_storage().num_rows(), 4u);
  BOOST_CHECK_EQUAL(e.dim(), dl::Dim({3}));
  BOOST_CHECK_EQUAL(e.get_fullname(), "/emb");
  BOOST_CHECK(bit_equal(all_values(e), all_values(src.E)));
  BOOST_CHECK_EQUAL(fresh.parameters_list().size(), 1u);
  BOOST_CHECK_EQUAL(fresh.lookup_parameters_list().size(), 1u);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ append and atomicity

BOOST_AUTO_TEST_SUITE(writing)

BOOST_AUTO_TEST_CASE(append_mode) {
  TempDir t;
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({2}, "a"), b = m.add_parameters({3}, "b");
  dl::TextFileSaver(t.file("ap.txt")).save(a);
  std::string first = read_file(t.file("ap.txt"));
  dl::TextFileSaver(t.file("ap.txt"), true).save(b);
  std::string both = read_file(t.file("ap.txt"));
  BOOST_CHECK_EQUAL(both.compare(0, first.size(), first), 0);  // old content kept in front
  BOOST_CHECK((dl::TextFileLoader(t.file("ap.txt")).keys() == std::vector<std::string>{"/a", "/b"}));
  // Append to a file that does not exist yet: just creates it.
  dl::TextFileSaver(t.file("new.txt"), true).save(a);
  BOOST_CHECK((dl::TextFileLoader(t.file("new.txt")).keys() == std::vector<std::string>{"/a"}));
  // Without append the file is replaced.
  dl::TextFileSaver(t.file("ap.txt")).save(b);
  BOOST_CHECK((dl::TextFileLoader(t.file("ap.txt")).keys() == std::vector<std::string>{"/b"}));
}

BOOST_AUTO_TEST_CASE(saver_accumulates_its_saves) {
  TempDir t;
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({2}, "a"), b = m.add_parameters({3}, "b");
  dl::TextFileSaver(t.file("x.txt")).save(b);
  {
    dl::TextFileSaver s(t.file("x.txt"));  // replaces the file on its first save
    s.save(a, "first");
    s.save(b, "second");
  }
  BOOST_CHECK((dl::TextFileLoader(t.file("x.txt")).keys() == std::vector<std::string>{"first", "second"}));
}

BOOST_AUTO_TEST_CASE(no_temporary_file_left) {
  TempDir t;
  ParameterCollection m;
  m.add_parameters({2}, "a");
  dl::TextFileSaver(t.file("c.txt")).save(m);
  size_t n = 0;
  for (auto& e : fs::directory_iterator(t.path())) {
    ++n;
    BOOST_CHECK_EQUAL(e.path().filename().string(), "c.txt");
  }
  BOOST_CHECK_EQUAL(n, 1u);
}

BOOST_AUTO_TEST_CASE(failed_save_keeps_old_file) {
  TempDir t;
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({4}, "a");
  const std::string path = t.file("keep.txt");
  dl::TextFileSaver(path).save(m);
  const std::string old = read_file(path);
  a.set_value({1.f, 2.f, 3.f, 4.f});

  // The temporary file cannot be created (a directory sits at its path).
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  fs::create_directory(tmp);
  test::check_throws_with<dl::io_error>([&] { dl::TextFileSaver(path).save(m); }, {"TextFileSaver", tmp.c_str()});
  BOOST_CHECK(read_file(path) == old);
  test::check_throws_with<dl::io_error>([&] { dl::TextFileSaver(path, true).save(a); }, {tmp.c_str()});
  BOOST_CHECK(read_file(path) == old);
  fs::remove(tmp);

  // A bad key and an empty parameter handle fail before anything is written.
  test::check_throws_with<std::invalid_argument>([&] { dl::TextFileSaver(path).save(a, "has space"); },
                                                 {"has space", path.c_str()});
  BOOST_CHECK(read_file(path) == old);
  test::check_throws_with<std::invalid_argument>([&] { dl::TextFileSaver(path).save(dl::Parameter()); },
                                                 {"Parameter"});
  BOOST_CHECK(read_file(path) == old);

  // A stale, truncated temporary file from a crashed save neither hurts the
  // old file nor the next save.
  write_file(tmp, "#Parameter# /a {4} 100 ZERO_GR");
  BOOST_CHECK(read_file(path) == old);
  dl::TextFileLoader(path).populate(m);  // still loads the old values
  dl::TextFileSaver(path).save(m);
  BOOST_CHECK(!fs::exists(tmp));
  BOOST_CHECK(read_file(path) == old);  // same values as before
}

BOOST_AUTO_TEST_CASE(missing_directory) {
  test::check_throws_with<dl::io_error>([] { dl::TextFileSaver("/nonexistent_dir_xyz/m.txt"); },
                                        {"/nonexistent_dir_xyz/m.txt", "does not exist"});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ corrupt files

BOOST_AUTO_TEST_SUITE(errors)

// Writes a file holding one parameter "/p" {3} with values 1 2 3 (byte count right).
std::string good_entry() {
  std::string data = "1 2 3\n";
  return "#Parameter# /p {3} " + std::to_string(data.size()) + " ZERO_GRAD\n" + data;
}

/// A temporary folder holding good_entry() in the file `name`, at `path`.
struct GoodEntryFile {
  TempDir t;
  std::string path;
  explicit GoodEntryFile(const std::string& name) : path(t.file(name)) { write_file(path, good_entry()); }
};

void populate_p(const std::string& path) {
  ParameterCollection m;
  m.add_parameters({3}, "p");
  dl::TextFileLoader(path).populate(m);
}

BOOST_AUTO_TEST_CASE(missing_file) {
  test::check_throws_with<dl::io_error>([] { dl::TextFileLoader("/tmp/definitely_missing_model.txt"); },
                                        {"/tmp/definitely_missing_model.txt", "cannot open"});
}

BOOST_AUTO_TEST_CASE(good_file_loads) {
  const GoodEntryFile ok("ok.txt");
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({3}, "p");
  dl::TextFileLoader(ok.path).populate(m);
  BOOST_CHECK(bit_equal(all_values(p), {1.f, 2.f, 3.f}));
}

BOOST_AUTO_TEST_CASE(truncated_file) {
  TempDir t;
  Model src;
  src.fill(0.f);
  dl::TextFileSaver(t.file("tr.txt")).save(src.m);
  std::string text = read_file(t.file("tr.txt"));
  write_file(t.file("tr.txt"), text.substr(0, text.size() - 10));
  Model dst;
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("tr.txt")).populate(dst.m); },
                                        {"tr.txt", "truncated", "/enc/inner/F", "line 9"});
  // Cut in the middle of a header.
  write_file(t.file("tr2.txt"), good_entry() + "#Parameter# /q {3");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("tr2.txt")).keys(); },
                                        {"tr2.txt", "line 3", "bad header"});
}

BOOST_AUTO_TEST_CASE(bad_number) {
  TempDir t;
  std::string data = "1 2x 3\n";
  write_file(t.file("bn.txt"), good_entry() + "#Parameter# /q {3} " + std::to_string(data.size()) +
                                   " ZERO_GRAD\n" + data);
  ParameterCollection m;
  m.add_parameters({3}, "p");
  m.add_parameters({3}, "q");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("bn.txt")).populate(m); },
                                        {"bn.txt", "line 4", "bad number '2x'", "/q"});
}

BOOST_AUTO_TEST_CASE(wrong_count) {
  TempDir t;
  std::string data = "1 2\n";
  write_file(t.file("wc.txt"), "#Parameter# /p {3} " + std::to_string(data.size()) + " ZERO_GRAD\n" + data);
  test::check_throws_with<dl::io_error>([&] { populate_p(t.file("wc.txt")); },
                                        {"wc.txt", "line 2", "wrong number of values", "expected 3, found 2"});
  data = "1 2 3 4\n";
  write_file(t.file("wc2.txt"), "#Parameter# /p {3} " + std::to_string(data.size()) + " ZERO_GRAD\n" + data);
  test::check_throws_with<dl::io_error>([&] { populate_p(t.file("wc2.txt")); }, {"wc2.txt", "found 4"});
  // FULL_GRAD with a short gradient line.
  data = "1 2 3\n1 2\n";
  write_file(t.file("wc3.txt"), "#Parameter# /p {3} " + std::to_string(data.size()) + " FULL_GRAD\n" + data);
  test::check_throws_with<dl::io_error>([&] { populate_p(t.file("wc3.txt")); }, {"wc3.txt", "line 3", "found 2"});
}

BOOST_AUTO_TEST_CASE(byte_count_mismatch) {
  TempDir t;
  write_file(t.file("bc.txt"), "#Parameter# /p {3} 5 ZERO_GRAD\n1 2 3\n");
  test::check_throws_with<dl::io_error>([&] { populate_p(t.file("bc.txt")); },
                                        {"bc.txt", "line 2", "byte count 5"});
}

BOOST_AUTO_TEST_CASE(bad_headers) {
  TempDir t;
  const std::pair<const char*, const char*> cases[] = {
      {"#Param# /p {3} 6 ZERO_GRAD\n1 2 3\n", "bad header"},
      {"hello\n", "bad header"},
      {"#Parameter# /p {3} 6\n1 2 3\n", "bad header"},
      {"#Parameter# /p {3} 6 ZERO_GRAD extra\n1 2 3\n", "bad header"},
      {"#Parameter# /p {3x} 6 ZERO_GRAD\n1 2 3\n", "bad dimension '{3x}'"},
      {"#Parameter# /p {3,} 6 ZERO_GRAD\n1 2 3\n", "bad dimension"},
      {"#Parameter# /p {0} 6 ZERO_GRAD\n1 2 3\n", "bad dimension"},
      {"#Parameter# /p {3} six ZERO_GRAD\n1 2 3\n", "bad byte count 'six'"},
      {"#Parameter# /p {3} 6 SOME_GRAD\n1 2 3\n", "bad gradient flag 'SOME_GRAD'"},
      {"#LookupParameter# /p {3} 6 ZERO_GRAD\n1 2 3\n", "number of rows"},
  };
  for (auto& c : cases) {
    write_file(t.file("bh.txt"), c.first);
    test::check_throws_with<dl::io_error>([&] { populate_p(t.file("bh.txt")); }, {"bh.txt", "line 1", c.second});
  }
  // The error points at the right line after valid entries and blank lines.
  write_file(t.file("bh2.txt"), good_entry() + "\n#Bad# x\n");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("bh2.txt")).keys(); },
                                        {"bh2.txt", "line 4", "bad header"});
}

BOOST_AUTO_TEST_CASE(dimension_mismatch) {
  const GoodEntryFile dm("dm.txt");
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({4}, "p");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(dm.path).populate(m); },
                                        {"dm.txt", "line 1", "dimension mismatch", "{3}", "{4}", "/p"});
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(dm.path).populate(p); }, {"dm.txt", "{3}", "{4}"});
  ParameterCollection m2;
  dl::LookupParameter e = m2.add_lookup_parameters(2, {3}, "e");
  dl::TextFileSaver(dm.t.file("dl.txt")).save(e);
  ParameterCollection m3;
  dl::LookupParameter e3 = m3.add_lookup_parameters(3, {3}, "e");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(dm.t.file("dl.txt")).populate(e3); },
                                        {"dl.txt", "{3,2}", "{3,3}"});
}

BOOST_AUTO_TEST_CASE(missing_key_and_wrong_kind) {
  const GoodEntryFile mk("mk.txt");
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({3}, "other");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(mk.path).populate(p, "/nope"); },
                                        {"mk.txt", "no entry named '/nope'", "'/p'"});
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(mk.path).populate(p); }, {"mk.txt", "'/other'"});
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(mk.path).load_param(m, "/q"); }, {"mk.txt", "'/q'"});
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(mk.path).load_lookup_param(m, "/p"); },
                                        {"mk.txt", "line 1", "is a Parameter, not a LookupParameter"});
  BOOST_CHECK_EQUAL(m.parameters_list().size(), 1u);  // nothing created by the failed loads
  BOOST_CHECK_EQUAL(m.lookup_parameters_list().size(), 0u);
}

BOOST_AUTO_TEST_CASE(entry_counts) {
  TempDir t;
  write_file(t.file("ec.txt"), good_entry() + good_entry());
  ParameterCollection one;
  one.add_parameters({3}, "p");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("ec.txt")).populate(one); },
                                        {"ec.txt", "line 3", "too many Parameter entries"});
  ParameterCollection three;
  for (int i = 0; i < 3; ++i) three.add_parameters({3});
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("ec.txt")).populate(three); },
                                        {"ec.txt", "too few entries", "2 Parameter", "has 3"});
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("ec.txt")).populate(three, "nokey"); },
                                        {"ec.txt", "key 'nokey'", "0 Parameter"});
}

BOOST_AUTO_TEST_CASE(failed_populate_changes_nothing) {
  TempDir t;
  std::string bad = "1 2 zz\n";
  write_file(t.file("fp.txt"),
             good_entry() + "#Parameter# /q {3} " + std::to_string(bad.size()) + " ZERO_GRAD\n" + bad);
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({3}, "p");
  dl::Parameter q = m.add_parameters({3}, "q");
  p.set_value({7.f, 8.f, 9.f});
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("fp.txt")).populate(m); }, {"fp.txt"});
  BOOST_CHECK(bit_equal(all_values(p), {7.f, 8.f, 9.f}));
}

BOOST_AUTO_TEST_SUITE_END()

// Hostile headers: a byte count that wraps around (or is 2^63), a shape that
// asks for far more values than the file holds, a shape whose element count
// overflows; and values that are not finite.  Each a clear error, at once.
BOOST_AUTO_TEST_CASE(hostile_headers_and_values) {
  TempDir t;
  const std::string good = errors::good_entry();
  for (const char* bytes : {"18446744073709551615", "18446744073709551600", "9223372036854775808"}) {
    write_file(t.file("wrap.txt"), good + "#Parameter# /q {3} " + bytes + " ZERO_GRAD\n1 2 3\n");
    test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("wrap.txt")).keys(); },
                                          {"wrap.txt", "line 3", "truncated"});
    ParameterCollection m;
    dl::Parameter p = m.add_parameters({3}, "p");
    test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("wrap.txt")).populate(p, "/q"); },
                                          {"wrap.txt", "truncated"});
  }
  // 4e9 values claimed by a 6-byte entry: refused before any allocation.
  write_file(t.file("big.txt"), "#Parameter# /p {100000,40000} 6 ZERO_GRAD\n1 2 3\n");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("big.txt")).keys(); },
                                        {"big.txt", "line 1", "needs 4000000000 values"});
  write_file(t.file("ovf.txt"), "#Parameter# /p {3340214413,2761311370,2} 6 ZERO_GRAD\n1 2 3\n");
  test::check_throws_with<dl::io_error>([&] { dl::TextFileLoader(t.file("ovf.txt")).keys(); },
                                        {"ovf.txt", "bad dimension"});
  for (const char* bad : {"nan", "inf", "-inf"}) {
    const std::string data = std::string("1 ") + bad + " 3\n";
    write_file(t.file("nan.txt"), "#Parameter# /p {3} " + std::to_string(data.size()) + " ZERO_GRAD\n" + data);
    test::check_throws_with<dl::io_error>([&] { errors::populate_p(t.file("nan.txt")); },
                                          {"nan.txt", "line 2", "finite numbers only"});
  }
}
