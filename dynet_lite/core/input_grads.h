#pragma once
// Terms dx (+)= W^T d that backward kernels of a compiled program leave for
// later (ExecContext::input_grads, core/op_info.h ColumnProduct): the nodes that
// share W give their operands' gradients in one column-exact product instead of
// one matrix-vector product each.  The program's tape decides where the pending
// terms are summed (before any step that reads or writes one of their targets),
// so that every gradient gets the same additions in the same order as the
// nodes' own calls would give it.
#include <cstddef>
#include <vector>

namespace dynet_lite {

class InputGradSink {
 public:
  /// The column-exact kernel of the terms (backends/cpu/gemm.h detail::columns_product_t).
  using Fn = void (*)(const float* w, size_t m, size_t k, const float* const* d, float* const* dx, size_t n,
                      bool accumulate);

  /// dx (k floats) (+)= W^T d (W m x k, d m floats); `d` and `w` must stay as
  /// they are until the flush.
  void add(Fn fn, const float* w, size_t m, size_t k, const float* d, float* dx, bool accumulate) {
    terms_.push_back({fn, w, m, k, accumulate});
    ds_.push_back(d);
    dxs_.push_back(dx);
  }
  bool empty() const { return terms_.empty(); }
  /// Sums every pending term, one call per run of terms of the same W.
  void flush() {
    for (size_t a = 0; a < terms_.size();) {
      size_t b = a + 1;
      while (b < terms_.size() && terms_[b].same(terms_[a])) ++b;
      const Term& t = terms_[a];
      t.fn(t.w, t.m, t.k, ds_.data() + a, dxs_.data() + a, b - a, t.accumulate);
      a = b;
    }
    clear();
  }
  void clear() {
    terms_.clear();
    ds_.clear();
    dxs_.clear();
  }

 private:
  struct Term {
    Fn fn;
    const float* w;
    size_t m, k;
    bool accumulate;
    bool same(const Term& o) const {
      return fn == o.fn && w == o.w && m == o.m && k == o.k && accumulate == o.accumulate;
    }
  };
  std::vector<Term> terms_;
  std::vector<const float*> ds_;
  std::vector<float*> dxs_;
};

}  // namespace dynet_lite
