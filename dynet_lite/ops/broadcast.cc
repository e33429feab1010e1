#include "dynet_lite/ops/broadcast.h"

#include <algorithm>

namespace dynet_lite {

Dim broadcast_shape(const char* op, const Dim& a, const Dim& b) {
  unsigned nd = std::max(a.nd, b.nd);
  Dim r;
  r.resize(nd);
  for (unsigned i = 0; i < nd; ++i) {
    unsigned x = a[i], y = b[i];
    DYNET_LITE_DIM_CHECK(x == y || x == 1 || y == 1, op << ": shapes " << a << " and " << b << " do not broadcast: dimension "
                                                        << i << " is " << x << " vs " << y);
    r.d[i] = std::max(x, y);
  }
  DYNET_LITE_DIM_CHECK(a.bd == b.bd || a.bd == 1 || b.bd == 1,
                       op << ": shapes " << a << " and " << b << " have batch sizes " << a.bd << " and " << b.bd
                          << "; they must be equal or one of them 1");
  r.bd = std::max(a.bd, b.bd);
  return r;
}

BroadcastIndex::BroadcastIndex(const Dim& od, const Dim& ad) {
  size_t stride = 1;
  total_ = od.size();
  identity_ = ad.size() == od.size();
  for (unsigned k = 0; k < 8; ++k) {
    size_t osz = k < 7 ? od[k] : od.bd;
    size_t asz = k < 7 ? ad[k] : ad.bd;
    size_[k] = osz;
    astride_[k] = (asz == osz) ? stride : 0;
    stride *= asz;
  }
}

}  // namespace dynet_lite
