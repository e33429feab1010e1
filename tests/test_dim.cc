#define BOOST_TEST_MODULE dim
#include "test_utils.h"

#include "dynet_lite/dim.h"

using dl::Dim;

BOOST_AUTO_TEST_SUITE(dim)

BOOST_AUTO_TEST_CASE(default_is_empty_with_one_batch) {
  Dim d;
  BOOST_CHECK_EQUAL(d.nd, 0u);
  BOOST_CHECK_EQUAL(d.bd, 1u);
  BOOST_CHECK_EQUAL(d.batch_size(), 1u);  // the empty product
  BOOST_CHECK_EQUAL(d.rows(), 1u);
  BOOST_CHECK_EQUAL(d.cols(), 1u);
  BOOST_CHECK_EQUAL(dl::to_string(d), "{}");
}

BOOST_AUTO_TEST_CASE(initializer_list_constructors) {
  Dim v({5});
  BOOST_CHECK_EQUAL(v.nd, 1u);
  BOOST_CHECK_EQUAL(v.rows(), 5u);
  BOOST_CHECK_EQUAL(v.cols(), 1u);
  BOOST_CHECK_EQUAL(v.size(), 5u);

  Dim m({2, 3}, 4);
  BOOST_CHECK_EQUAL(m.nd, 2u);
  BOOST_CHECK_EQUAL(m.rows(), 2u);
  BOOST_CHECK_EQUAL(m.cols(), 3u);
  BOOST_CHECK_EQUAL(m.bd, 4u);
  BOOST_CHECK_EQUAL(m.batch_elems(), 4u);
  BOOST_CHECK_EQUAL(m.batch_size(), 6u);
  BOOST_CHECK_EQUAL(m.size(), 24u);
  BOOST_CHECK_EQUAL(m.sum_dims(), 5u);
  BOOST_CHECK_EQUAL(m.ndims(), 2u);
}

BOOST_AUTO_TEST_CASE(vector_constructors) {
  Dim a(std::vector<long>{2, 3, 4});
  BOOST_CHECK_EQUAL(a.nd, 3u);
  BOOST_CHECK_EQUAL(a.size(), 24u);
  Dim b(std::vector<long>{2, 3}, 5);
  BOOST_CHECK_EQUAL(b.bd, 5u);
  BOOST_CHECK_EQUAL(b.size(), 30u);
  Dim c(std::vector<unsigned>{7, 1});
  BOOST_CHECK_EQUAL(c.nd, 2u);
  BOOST_CHECK_EQUAL(c.size(), 7u);
  Dim e(std::vector<unsigned>{7}, 3);
  BOOST_CHECK_EQUAL(e.size(), 21u);
}

BOOST_AUTO_TEST_CASE(constructor_errors) {
  test::check_throws_with<dl::dim_error>([] { Dim d(std::vector<long>{2, -3}); }, {"Dim", "negative", "-3"});
  test::check_throws_with<dl::dim_error>([] { Dim d({1, 2, 3, 4, 5, 6, 7, 8}); }, {"Dim", "7"});
}

BOOST_AUTO_TEST_CASE(index_past_nd_reads_one) {
  Dim d({4, 5});
  BOOST_CHECK_EQUAL(d[0], 4u);
  BOOST_CHECK_EQUAL(d[1], 5u);
  BOOST_CHECK_EQUAL(d[2], 1u);
  BOOST_CHECK_EQUAL(d[6], 1u);
  BOOST_CHECK_EQUAL(d.size(1), 5u);
  BOOST_CHECK_EQUAL(d.size(3), 1u);
}

BOOST_AUTO_TEST_CASE(zero_dimension_has_no_elements) {
  Dim d({3, 0});
  BOOST_CHECK_EQUAL(d.size(), 0u);
  BOOST_CHECK_EQUAL(d.batch_size(), 0u);
}

BOOST_AUTO_TEST_CASE(truncate_drops_trailing_ones) {
  Dim d({3, 1, 1}, 2);
  Dim t = d.truncate();
  BOOST_CHECK_EQUAL(t.nd, 1u);
  BOOST_CHECK_EQUAL(t.bd, 2u);
  BOOST_CHECK_EQUAL(t[0], 3u);
  // Inner 1s stay; at least one dimension stays.
  BOOST_CHECK_EQUAL(Dim({1, 4, 1}).truncate(), Dim({1, 4}));
  BOOST_CHECK_EQUAL(Dim({1, 1}).truncate(), Dim({1}));
  // The original is unchanged.
  BOOST_CHECK_EQUAL(d.nd, 3u);
}

BOOST_AUTO_TEST_CASE(single_batch_keeps_shape) {
  Dim d({2, 3}, 8);
  Dim s = d.single_batch();
  BOOST_CHECK_EQUAL(s, Dim({2, 3}));
  BOOST_CHECK_EQUAL(s.bd, 1u);
  BOOST_CHECK_EQUAL(d.bd, 8u);
}

BOOST_AUTO_TEST_CASE(delete_dim) {
  Dim d({2, 3, 4}, 5);
  d.delete_dim(1);
  BOOST_CHECK_EQUAL(d, Dim({2, 4}, 5));
  d.delete_dim(0);
  BOOST_CHECK_EQUAL(d, Dim({4}, 5));
  // Deleting the only dimension leaves {1}.
  d.delete_dim(0);
  BOOST_CHECK_EQUAL(d, Dim({1}, 5));
  test::check_throws_with<dl::dim_error>([&] { d.delete_dim(3); }, {"delete_dim", "3", "{1X5}"});
}

BOOST_AUTO_TEST_CASE(delete_dims_and_batch) {
  Dim d({2, 3, 4}, 5);
  d.delete_dims({0, 2}, false);
  BOOST_CHECK_EQUAL(d, Dim({3}, 5));
  Dim e({2, 3, 4}, 5);
  e.delete_dims({2, 1}, true);
  BOOST_CHECK_EQUAL(e, Dim({2}));
}

BOOST_AUTO_TEST_CASE(add_insert_resize_set) {
  Dim d({2});
  d.add_dim(3);
  BOOST_CHECK_EQUAL(d, Dim({2, 3}));
  d.insert_dim(0, 7);
  BOOST_CHECK_EQUAL(d, Dim({7, 2, 3}));
  d.insert_dim(3, 9);
  BOOST_CHECK_EQUAL(d, Dim({7, 2, 3, 9}));
  d.resize(2);
  BOOST_CHECK_EQUAL(d, Dim({7, 2}));
  d.resize(4);
  BOOST_CHECK_EQUAL(d, Dim({7, 2, 1, 1}));
  d.set(1, 6);
  BOOST_CHECK_EQUAL(d, Dim({7, 6, 1, 1}));
  test::check_throws_with<dl::dim_error>([&] { d.set(5, 2); }, {"Dim::set", "5"});
  test::check_throws_with<dl::dim_error>([&] { d.resize(8); }, {"resize", "8"});
  test::check_throws_with<dl::dim_error>([&] { d.insert_dim(6, 2); }, {"insert_dim", "6"});
  Dim full({1, 1, 1, 1, 1, 1, 1});
  test::check_throws_with<dl::dim_error>([&] { full.add_dim(2); }, {"add_dim", "7"});
}

BOOST_AUTO_TEST_CASE(transpose) {
  BOOST_CHECK_EQUAL(Dim({2, 3}).transpose(), Dim({3, 2}));
  BOOST_CHECK_EQUAL(Dim({4}).transpose(), Dim({1, 4}));
  BOOST_CHECK_EQUAL(Dim({2, 3}, 6).transpose(), Dim({3, 2}, 6));
  test::check_throws_with<dl::dim_error>([] { Dim({2, 3, 4}).transpose(); }, {"transpose", "{2,3,4}"});
}

BOOST_AUTO_TEST_CASE(printing) {
  BOOST_CHECK_EQUAL(dl::to_string(Dim({2, 3})), "{2,3}");
  BOOST_CHECK_EQUAL(dl::to_string(Dim({2, 3}, 4)), "{2,3X4}");
  BOOST_CHECK_EQUAL(dl::to_string(Dim({7})), "{7}");
  BOOST_CHECK_EQUAL(dl::to_string(Dim({7}, 1)), "{7}");
  std::ostringstream os;
  os << std::vector<Dim>{Dim({1}), Dim({2, 2}, 3)};
  BOOST_CHECK_EQUAL(os.str(), "[{1},{2,2X3}]");
  std::ostringstream prof;
  Dim({5, 6}).print_profile(prof);
  BOOST_CHECK_EQUAL(prof.str(), "{5,6}");
}

BOOST_AUTO_TEST_CASE(equality) {
  BOOST_CHECK(Dim({2, 3}) == Dim({2, 3}));
  BOOST_CHECK(Dim({2, 3}) != Dim({3, 2}));
  BOOST_CHECK(Dim({2, 3}) != Dim({2, 3}, 2));
  // Trailing ones count in ==, not in same_shape_ignoring_batch.
  BOOST_CHECK(Dim({2, 3}) != Dim({2, 3, 1}));
  BOOST_CHECK(dl::same_shape_ignoring_batch(Dim({2, 3}), Dim({2, 3, 1}, 4)));
  BOOST_CHECK(!dl::same_shape_ignoring_batch(Dim({2, 3}), Dim({2, 4})));
  // Values past nd do not matter.
  Dim a({2});
  Dim b({2, 9});
  b.resize(1);
  BOOST_CHECK(a == b);
}

BOOST_AUTO_TEST_CASE(num_nonone_dims) {
  BOOST_CHECK_EQUAL(Dim({1, 3, 1, 4}).num_nonone_dims(), 2u);
  BOOST_CHECK_EQUAL(Dim({1}).num_nonone_dims(), 0u);
}

BOOST_AUTO_TEST_SUITE_END()

// A shape whose element count would overflow (or exceed 2^40) is refused where
// it is made, from the API and from model files.
BOOST_AUTO_TEST_CASE(shapes_too_large_are_refused) {
  test::check_throws_with<std::invalid_argument>([] { dl::Dim d({3340214413u, 2761311370u, 2u}); }, {"2^40"});
  test::check_throws_with<std::invalid_argument>([] { dl::Dim d({1u << 20, 1u << 20}, 2); }, {"2^40"});
  test::check_throws_with<std::invalid_argument>([] { dl::Dim d(std::vector<long>{1L << 33}); }, {"too large"});
  BOOST_CHECK_EQUAL(dl::Dim({1u << 20, 1u << 19}, 2).size(), size_t(1) << 40);
}
