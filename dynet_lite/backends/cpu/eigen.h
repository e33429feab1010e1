#pragma once
// Eigen views over tensor memory for the CPU kernels.  Column-major, like DyNet:
// element (r, c) of a matrix is at v[c * rows + r]; batch element b follows b-1.
#include <Eigen/Dense>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <algorithm>
#include <utility>

#include "dynet_lite/tensor.h"

namespace dynet_lite {
namespace cpu {

using MatMap = Eigen::Map<Eigen::MatrixXf>;
using VecMap = Eigen::Map<Eigen::VectorXf>;
using ArrMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrMap = Eigen::Map<const Eigen::ArrayXf>;

/// All elements as one vector / array.
inline VecMap vec(const Tensor& t) { return VecMap(t.v, static_cast<Eigen::Index>(t.d.size())); }
inline ArrMap arr(const Tensor& t) { return ArrMap(t.v, static_cast<Eigen::Index>(t.d.size())); }
/// rows x (everything else, batch included) — the batch elements side by side.
inline MatMap mat(const Tensor& t) {
  Eigen::Index r = t.d.rows();
  return MatMap(t.v, r, r ? static_cast<Eigen::Index>(t.d.size()) / r : 0);
}
/// Batch element b as rows x cols (broadcasting a batch of 1).
inline MatMap batch_mat(const Tensor& t, unsigned b) {
  Eigen::Index r = t.d.rows();
  return MatMap(t.batch_ptr(b), r, r ? static_cast<Eigen::Index>(t.d.batch_size()) / r : 0);
}
inline VecMap batch_vec(const Tensor& t, unsigned b) {
  return VecMap(t.batch_ptr(b), static_cast<Eigen::Index>(t.d.batch_size()));
}
inline ArrMap batch_arr(const Tensor& t, unsigned b) {
  return ArrMap(t.batch_ptr(b), static_cast<Eigen::Index>(t.d.batch_size()));
}

/// dst[0, n) = v where kAssign, else dst[0, n) += v.
template <bool kAssign, class V>
inline void put(float* dst, size_t n, const V& v) {
  if constexpr (kAssign)
    ArrMap(dst, static_cast<Eigen::Index>(n)) = v;
  else
    ArrMap(dst, static_cast<Eigen::Index>(n)) += v;
}
template <class V>
inline void put(bool assign, float* dst, size_t n, const V& v) {
  if (assign)
    put<true>(dst, n, v);
  else
    put<false>(dst, n, v);
}

namespace detail {
template <class Packet, size_t N, class Fn, size_t... K>
inline void on_padded(float (&pad)[sizeof...(K)][N], Fn& fn, std::index_sequence<K...>) {
  fn(Packet(pad[K])...);
}
}  // namespace detail

/// Runs fn over arrays of n floats at ptrs: over their whole packets (of the
/// instruction set this is compiled for) in place, then over the last n % packet
/// floats copied into one zero-padded packet each, of which the last array's
/// comes back.  Eigen runs a tail shorter than a packet one float at a time,
/// its transcendental functions included: with AVX-512, every tensor of
/// fewer than 16 floats.  fn takes one Eigen array map per pointer, all of one
/// type (whole packets: ArrMap; the tail: a fixed-size aligned map); the last
/// array is fn's output (written, or added to).
template <class Fn, class... P>
inline void in_packets(size_t n, Fn&& fn, P*... ptrs) {
  constexpr size_t kPacket = Eigen::internal::packet_traits<float>::size;
  constexpr size_t kArrays = sizeof...(P);
  const size_t whole = n / kPacket * kPacket, tail = n - whole;
  if (whole) fn(ArrMap(const_cast<float*>(ptrs), static_cast<Eigen::Index>(whole))...);
  if (!tail) return;
  const float* from[kArrays] = {ptrs...};
  float* out = const_cast<float*>(from[kArrays - 1]) + whole;
  using Packet = Eigen::Map<Eigen::Array<float, kPacket, 1>, Eigen::Aligned64>;
#if defined(__AVX512F__)
  static_assert(kPacket == 16, "AVX-512 packets of 16 floats");
  alignas(64) float pad[kArrays][kPacket];
  const __mmask16 mask = static_cast<__mmask16>((1u << tail) - 1);
  for (size_t k = 0; k < kArrays; ++k) _mm512_store_ps(pad[k], _mm512_maskz_loadu_ps(mask, from[k] + whole));
  detail::on_padded<Packet>(pad, fn, std::make_index_sequence<kArrays>());
  _mm512_mask_storeu_ps(out, mask, _mm512_load_ps(pad[kArrays - 1]));
#else
  alignas(64) float pad[kArrays][kPacket] = {};
  for (size_t k = 0; k < kArrays; ++k)
    for (size_t i = 0; i < tail; ++i) pad[k][i] = from[k][whole + i];
  detail::on_padded<Packet>(pad, fn, std::make_index_sequence<kArrays>());
  for (size_t i = 0; i < tail; ++i) out[i] = pad[kArrays - 1][i];
#endif
}

/// out (hid x bd) = tanh(c) for a column c of hid floats with a batch of 1
/// (broadcast) or bd: one call over the whole batch when it is contiguous.
inline void tanh_columns(float* out, const Tensor& c, size_t hid, unsigned bd) {
  const Eigen::Index h = static_cast<Eigen::Index>(hid);
  if (c.d.bd == bd) {
    ArrMap(out, h * bd) = ArrMap(c.v, h * bd).tanh();
    return;
  }
  for (unsigned b = 0; b < bd; ++b) ArrMap(out + b * hid, h) = ArrMap(c.batch_ptr(b), h).tanh();
}

/// The activations of recurrent gates on `cols` columns of `rows` floats: rows
/// [t0, t1) of every column get tanh, the others the logistic sigmoid, written to
/// y from `src` (y itself when null).  The sigmoid is computed as
/// 0.5 tanh(x / 2) + 0.5, so that one vectorised tanh runs over the whole block:
/// called per column and per gate, Eigen left a scalar tail on every column
/// (hidden sizes such as 50), and its exp with a division costs more than its tanh
/// (bench/lstm_kernels measures both).  The sigmoid then
/// saturates to exactly 0 or 1 beyond |x| of about 18, harmless for gates; the
/// logistic op, whose log a user may take, keeps 1 / (1 + e^-x).  With `bias`
/// (rows floats), act(y + bias): the bias is added in the same pass that halves
/// the sigmoid rows, instead of being copied into y beforehand.  The three passes
/// run a block of columns (about 16 KB) at a time, so that the second and third
/// find it in the L1 cache: a batched group's gates are megabytes (a Tree-LSTM
/// level of 500 nodes: 1.3 MB), which three whole passes read from the L3 cache.
inline void gate_activations(float* y, size_t rows, size_t cols, size_t t0, size_t t1, const float* bias = nullptr,
                             const float* src = nullptr) {
  const Eigen::Index head = static_cast<Eigen::Index>(t0), tail = static_cast<Eigen::Index>(rows - t1);
  const Eigen::Index mid = static_cast<Eigen::Index>(t1 - t0);
  if (!src) src = y;
  const size_t block = std::max<size_t>(1, 4096 / std::max<size_t>(rows, 1));
  for (size_t c0 = 0; c0 < cols; c0 += block) {
    const size_t c1 = std::min(cols, c0 + block);
    for (size_t c = c0; c < c1; ++c) {
      float* col = y + c * rows;
      const float* in = src + c * rows;
      if (bias) {
        if (head) ArrMap(col, head) = (ConstArrMap(in, head) + ConstArrMap(bias, head)) * 0.5f;
        if (mid) ArrMap(col + t0, mid) = ConstArrMap(in + t0, mid) + ConstArrMap(bias + t0, mid);
        if (tail) ArrMap(col + t1, tail) = (ConstArrMap(in + t1, tail) + ConstArrMap(bias + t1, tail)) * 0.5f;
      } else {
        if (head) ArrMap(col, head) = ConstArrMap(in, head) * 0.5f;
        if (mid && in != col) ArrMap(col + t0, mid) = ConstArrMap(in + t0, mid);
        if (tail) ArrMap(col + t1, tail) = ConstArrMap(in + t1, tail) * 0.5f;
      }
    }
    ArrMap part(y + c0 * rows, static_cast<Eigen::Index>(rows * (c1 - c0)));
    part = part.tanh();
    for (size_t c = c0; c < c1; ++c) {
      float* col = y + c * rows;
      if (head) ArrMap(col, head) = ArrMap(col, head) * 0.5f + 0.5f;
      if (tail) ArrMap(col + t1, tail) = ArrMap(col + t1, tail) * 0.5f + 0.5f;
    }
  }
}

}  // namespace cpu
}  // namespace dynet_lite
