#pragma once
// A CUDA GPU as a dynet_lite Device: device memory from cudaMalloc (the arenas
// take it in large chunks), one stream on which every kernel, copy and cuBLAS
// call of this device runs in order, and a pinned host staging ring through
// which inputs reach the GPU without blocking the host.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>

#include "dynet_lite/backends/cuda/cuda_check.h"
#include "dynet_lite/devices.h"

namespace dynet_lite {

class ExecContext;

class CudaDevice final : public Device {
 public:
  /// Device `ordinal` of the CUDA runtime, named "GPU:<ordinal>".
  explicit CudaDevice(int ordinal);
  ~CudaDevice() override;

  void* allocate(size_t bytes) override;
  void release(void* p) override;
  /// Waits for this device's queued work, then copies.
  void copy_to_host(float* host, const float* dev, size_t n) const override;
  /// Asynchronous: the host data is first copied into pinned staging memory, so
  /// the caller may reuse `host` as soon as this returns.
  void copy_from_host(float* dev, const float* host, size_t n) const override;
  void copy(float* dst, const float* src, size_t n) const override;
  void fill(float* dst, float value, size_t n) const override;
  /// One kernel for all the rows (cuda_backend.cc).
  void fill_rows(float* table, const unsigned* rows, unsigned n, size_t row, float value) override;
  float rows_squared_norm(const float* table, const unsigned* rows, unsigned n, size_t row) override;
  /// One kernel over all the vectors and one copy back.
  double squared_norms(const float* const* xs, const size_t* ns, unsigned k) override;

  /// Bytes from host to device through the staging ring (asynchronous, see copy_from_host).
  void upload(void* dev, const void* host, size_t bytes) const;
  /// Makes this device current for the calling thread (cheap when it already is).
  void activate() const;
  /// Waits until every queued kernel and copy of this device has finished.
  void synchronize() const;

  /// A device buffer of at least `bytes` for the backend's own calls outside a
  /// graph (the trainers' row lists), kept and grown; the caller holds
  /// own_buffer_mutex() from filling it until its kernels are queued.
  void* own_buffer(size_t bytes);
  std::mutex& own_buffer_mutex() { return own_mutex_; }

  /// While the device's work is recorded as a graph (backends/cuda/cuda_graph.cc),
  /// uploads go to device staging memory of the recording instead of the ring.
  struct Recording;
  Recording* recording() const { return recording_.get(); }
  void set_recording(std::unique_ptr<Recording> r);
  std::unique_ptr<Recording> take_recording();
  /// Set while a launched graph's host side is replayed (HostEffectsOnly,
  /// backends/device_graph.h): the accumulate functions queue no work.
  bool host_effects_only() const { return host_effects_only_; }
  void set_host_effects_only(bool on) { host_effects_only_ = on; }

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  int ordinal() const { return device_id; }

 private:
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  // Pinned staging ring: bytes [0, staging_used_) may still be read by queued
  // copies; when a request does not fit, the stream is drained and the ring restarts.
  mutable std::mutex staging_mutex_;
  mutable char* staging_ = nullptr;
  mutable size_t staging_size_ = 0;
  mutable size_t staging_used_ = 0;
  std::mutex own_mutex_;
  void* own_ = nullptr;
  size_t own_size_ = 0;
  std::unique_ptr<Recording> recording_;
  bool host_effects_only_ = false;
};

namespace cuda {
/// An upload made while `r` records: a device-to-device copy from staging memory
/// of the recording, filled before each launch (cuda_graph.cc).
void record_upload(CudaDevice& dev, CudaDevice::Recording& r, void* dst, const void* host, size_t bytes);
}  // namespace cuda

namespace cuda {
/// The CUDA device a kernel runs on (the context's device, made current).
CudaDevice& device_of(ExecContext& ctx);
/// The CUDA device of a tensor (made current); throws internal_error for another kind.
CudaDevice& device_of(const Device* d);
}  // namespace cuda

}  // namespace dynet_lite
