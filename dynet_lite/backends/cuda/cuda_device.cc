// CudaDevice: memory, copies and the staging ring.  Kernels live in the .cu files.
#include "dynet_lite/backends/cuda/cuda_device.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dynet_lite/backends/cuda/cublas_library.h"
#include "dynet_lite/backends/cuda/cuda_graph.h"
#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

namespace {
constexpr size_t kInitialStagingBytes = 4u << 20;
constexpr size_t kStagingAlign = 256;

// The device this thread last made current (-1: not known yet).
thread_local int current_ordinal = -1;
}  // namespace

CudaDevice::CudaDevice(int ordinal) : Device(DeviceType::GPU, ordinal, "GPU:" + std::to_string(ordinal)) {
  activate();
  DYNET_LITE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  const cuda::CublasLibrary& blas = cuda::cublas_library();
  DYNET_LITE_CUBLAS_CHECK(blas.create(&cublas_));
  DYNET_LITE_CUBLAS_CHECK(blas.set_stream(cublas_, stream_));
  // Products are compared with the CPU's: no reduced-precision tensor-core paths.
  DYNET_LITE_CUBLAS_CHECK(blas.set_math_mode(cublas_, CUBLAS_PEDANTIC_MATH));
  DYNET_LITE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging_), kInitialStagingBytes));
  staging_size_ = kInitialStagingBytes;
}

CudaDevice::~CudaDevice() {
  // Destructors must not throw: errors here are ignored (the process is ending).
  cudaSetDevice(device_id);
  cudaStreamSynchronize(stream_);
  if (staging_) cudaFreeHost(staging_);
  if (own_) cudaFree(own_);
  if (cublas_) cuda::cublas_library().destroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

void* CudaDevice::own_buffer(size_t bytes) {
  if (bytes > own_size_) {
    activate();
    // Queued kernels may still read the old buffer.
    DYNET_LITE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (own_) DYNET_LITE_CUDA_CHECK(cudaFree(own_));
    own_ = nullptr;
    size_t size = own_size_ ? own_size_ : 4096;
    while (size < bytes) size *= 2;
    DYNET_LITE_CUDA_CHECK(cudaMalloc(&own_, size));
    own_size_ = size;
  }
  return own_;
}

void CudaDevice::activate() const {
  if (current_ordinal == device_id) return;
  DYNET_LITE_CUDA_CHECK(cudaSetDevice(device_id));
  current_ordinal = device_id;
}

void CudaDevice::synchronize() const {
  activate();
  DYNET_LITE_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void* CudaDevice::allocate(size_t bytes) {
  activate();
  void* p = nullptr;
  cudaError_t st = cudaMalloc(&p, std::max<size_t>(bytes, 256));
  if (st == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error state of this call
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    DYNET_LITE_CHECK(false, cuda_error, name << ": out of memory allocating " << bytes << " bytes (" << free_b
                                             << " of " << total_b << " bytes free); use --dynet-mem or smaller batches");
  }
  DYNET_LITE_CUDA_CHECK(st);
  return p;
}

void CudaDevice::release(void* p) {
  if (!p) return;
  // Arenas and parameters may be freed from static destructors after the CUDA
  // runtime has shut down (its memory is gone with it): not an error then.
  cudaError_t st = cudaSetDevice(device_id);
  if (st == cudaSuccess) st = cudaFree(p);  // waits for the device: no queued kernel still uses p
  if (st == cudaErrorCudartUnloading || st == cudaErrorContextIsDestroyed) {
    cudaGetLastError();
    return;
  }
  current_ordinal = device_id;
  DYNET_LITE_CUDA_CHECK(st);
}

void CudaDevice::copy_to_host(float* host, const float* dev, size_t n) const {
  if (!n) return;
  activate();
  DYNET_LITE_CUDA_CHECK(cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  DYNET_LITE_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaDevice::copy_from_host(float* dev, const float* host, size_t n) const {
  upload(dev, host, n * sizeof(float));
}

void CudaDevice::upload(void* dev, const void* host, size_t bytes) const {
  if (!bytes) return;
  activate();
  if (recording_) {
    cuda::record_upload(const_cast<CudaDevice&>(*this), *recording_, dev, host, bytes);
    return;
  }
  std::lock_guard<std::mutex> lock(staging_mutex_);
  size_t rounded = (bytes + kStagingAlign - 1) & ~(kStagingAlign - 1);
  if (staging_used_ + rounded > staging_size_) {
    // Everything queued so far must have read its staging bytes before reuse.
    DYNET_LITE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    staging_used_ = 0;
    if (rounded > staging_size_) {
      size_t size = std::max(rounded, staging_size_ * 2);
      DYNET_LITE_CUDA_CHECK(cudaFreeHost(staging_));
      staging_ = nullptr;
      staging_size_ = 0;
      DYNET_LITE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging_), size));
      staging_size_ = size;
    }
  }
  char* slot = staging_ + staging_used_;
  std::memcpy(slot, host, bytes);
  DYNET_LITE_CUDA_CHECK(cudaMemcpyAsync(dev, slot, bytes, cudaMemcpyHostToDevice, stream_));
  staging_used_ += rounded;
}

void CudaDevice::copy(float* dst, const float* src, size_t n) const {
  if (!n || dst == src) return;
  activate();
  DYNET_LITE_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
}

void CudaDevice::fill(float* dst, float value, size_t n) const {
  if (!n) return;
  activate();
  if (value == 0.f && !std::signbit(value)) {
    DYNET_LITE_CUDA_CHECK(cudaMemsetAsync(dst, 0, n * sizeof(float), stream_));
    return;
  }
  cuda::launch_fill(dst, value, n, stream_);
}

namespace cuda {
CudaDevice& device_of(const Device* d) {
  DYNET_LITE_ASSERT(d != nullptr && d->type == DeviceType::GPU,
                    "a CUDA kernel was given memory of " << (d ? d->name : std::string("no device")));
  const CudaDevice& c = static_cast<const CudaDevice&>(*d);
  c.activate();
  return const_cast<CudaDevice&>(c);
}
CudaDevice& device_of(ExecContext& ctx) { return device_of(ctx.device()); }
}  // namespace cuda

}  // namespace dynet_lite
