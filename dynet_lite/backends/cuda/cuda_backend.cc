// The CUDA backend's entry points (backends/gpu_backend.h, update_rules.h,
// batch_copies.h): creating the GPU
// devices asked for by --dynet-gpus / --dynet-devices, filling the GPU column of
// the op table, the trainer hook, and the error formatting of cuda_check.h.
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "dynet_lite/backends/batch_copies.h"
#include "dynet_lite/backends/cuda/cuda_check.h"
#include "dynet_lite/backends/cuda/cuda_device.h"
#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/gpu_backend.h"
#include "dynet_lite/backends/update_rules.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

namespace cuda {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << call << " failed at " << file << ":" << line << ": " << cudaGetErrorName(status) << ": "
     << cudaGetErrorString(status);
  throw cuda_error(os.str());
}

const char* cublas_status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << call << " failed at " << file << ":" << line << ": " << cublas_status_name(status) << " ("
     << static_cast<int>(status) << ")";
  throw cuda_error(os.str());
}

const unsigned* upload_indices(ExecContext& ctx, const unsigned* host, unsigned n, bool persistent) {
  static_assert(sizeof(unsigned) == sizeof(float), "indices share the float arenas");
  float* mem = persistent ? ctx.persistent_floats(n) : ctx.scratch_floats(n);
  device_of(ctx).upload(mem, host, n * sizeof(unsigned));
  return reinterpret_cast<const unsigned*>(mem);
}

}  // namespace cuda

bool has_cuda_backend() { return true; }

namespace {

// Devices live as long as the process (like the CPU device): graphs and
// parameters anywhere may still point at them.
std::vector<CudaDevice*>& created_devices() {
  static std::vector<CudaDevice*> devices;
  return devices;
}

CudaDevice* device_for(int ordinal) {
  for (CudaDevice* d : created_devices())
    if (d->ordinal() == ordinal) return d;
  CudaDevice* d = new CudaDevice(ordinal);
  created_devices().push_back(d);
  register_device(d);
  return d;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

void initialize_gpu_devices(const DynetParams& params) {
  DYNET_LITE_ARG_CHECK(!(params.ngpus_requested && params.ids_requested),
                       "initialize: give either --dynet-gpus (" << params.requested_gpus << ") or --dynet-devices ('"
                                                                << params.devices << "'), not both");
  int count = 0;
  cudaError_t st = cudaGetDeviceCount(&count);
  if (st != cudaSuccess) {
    cudaGetLastError();  // leave no sticky error behind for later calls
    DYNET_LITE_CHECK(false, cuda_error,
                     "initialize: no CUDA device found (cudaGetDeviceCount: " << cudaGetErrorName(st) << ": "
                         << cudaGetErrorString(st) << "); a GPU was requested with "
                         << (params.ids_requested ? "--dynet-devices " + params.devices
                                                  : "--dynet-gpus " + std::to_string(params.requested_gpus)));
  }
  DYNET_LITE_CHECK(count > 0, cuda_error,
                   "initialize: no CUDA device found (cudaGetDeviceCount: 0 devices); a GPU was requested with "
                       << (params.ids_requested ? "--dynet-devices " + params.devices
                                                : "--dynet-gpus " + std::to_string(params.requested_gpus)));

  std::vector<int> ordinals;
  if (params.ids_requested) {
    std::stringstream ss(params.devices);
    std::string item;
    while (std::getline(ss, item, ',')) {
      std::string tok = trim(item);
      if (tok == "CPU") continue;
      DYNET_LITE_ARG_CHECK(tok.rfind("GPU:", 0) == 0 && tok.size() > 4,
                           "initialize: --dynet-devices '" << params.devices << "': unknown device '" << tok
                                                           << "' (expected CPU or GPU:<n>)");
      char* end = nullptr;
      long k = std::strtol(tok.c_str() + 4, &end, 10);
      DYNET_LITE_ARG_CHECK(*end == '\0' && k >= 0, "initialize: --dynet-devices '" << params.devices
                                                                                   << "': bad GPU number in '" << tok << "'");
      DYNET_LITE_INDEX_CHECK(k < count, "initialize: --dynet-devices '" << params.devices << "' names " << tok
                                                                        << " but this machine has " << count
                                                                        << " CUDA device(s)");
      for (int o : ordinals)
        DYNET_LITE_ARG_CHECK(o != k, "initialize: --dynet-devices '" << params.devices << "' names " << tok << " twice");
      ordinals.push_back(static_cast<int>(k));
    }
  } else {
    DYNET_LITE_ARG_CHECK(params.requested_gpus <= count, "initialize: --dynet-gpus " << params.requested_gpus
                                                                                     << " but this machine has " << count
                                                                                     << " CUDA device(s)");
    for (int k = 0; k < params.requested_gpus; ++k) ordinals.push_back(k);
  }
  if (ordinals.empty()) return;  // "--dynet-devices CPU": nothing to create
  CudaDevice* first = nullptr;
  for (int k : ordinals) {
    CudaDevice* d = device_for(k);
    if (!first) first = d;
  }
  // As in DyNet, the first GPU asked for becomes the default device.
  set_default_device(first);
}

void device_sgd_step_and_clear(Device* d, float* values, float* grads, size_t n, float rate) {
  DYNET_LITE_CHECK(d->type == DeviceType::GPU, unsupported_error,
                   "SimpleSGD: no update kernel for device " << d->name);
  CudaDevice& dev = cuda::device_of(d);
  cuda::launch_sgd_step_and_clear(values, grads, n, rate, dev.stream());
}

namespace {
// The pointer list of a gather or scatter in device memory (from `scratch`).
template <typename P>
P* const* upload_pointers(CudaDevice& dev, P* const* host, unsigned k, Arena& scratch) {
  P** mem = static_cast<P**>(scratch.allocate(size_t(k) * sizeof(P*)));
  dev.upload(mem, host, size_t(k) * sizeof(P*));
  return mem;
}
}  // namespace

void device_update_rule(Device* d, DeviceRule rule, const DeviceRuleArgs& args, float* values, const float* grads,
                        float* const* state, size_t n) {
  CudaDevice& dev = cuda::device_of(d);
  cuda::launch_update_rule(rule, args, values, grads, state, n, dev.stream());
}

namespace {
// Bytes of a list of n rows in the device's own buffer, padded so that what
// follows it is aligned.
size_t row_list_bytes(unsigned n) { return (size_t(n) * sizeof(unsigned) + 255) & ~size_t(255); }
// The row list in the device's own buffer, followed by `extra` bytes for the
// caller; the caller holds own_buffer_mutex() until its kernels are queued.
unsigned* upload_rows(CudaDevice& dev, const unsigned* rows, unsigned n, size_t extra = 0) {
  unsigned* drows = static_cast<unsigned*>(dev.own_buffer(row_list_bytes(n) + extra));
  dev.upload(drows, rows, size_t(n) * sizeof(unsigned));
  return drows;
}
}  // namespace

float CudaDevice::rows_squared_norm(const float* table, const unsigned* rows, unsigned n, size_t row) {
  if (!n) return 0.f;
  CudaDevice& dev = *this;
  std::vector<float> sums(n);
  {
    std::lock_guard<std::mutex> lock(dev.own_buffer_mutex());
    unsigned* drows = upload_rows(dev, rows, n, size_t(n) * sizeof(float));
    float* out = reinterpret_cast<float*>(reinterpret_cast<char*>(drows) + row_list_bytes(n));
    cuda::launch_rows_squared_norm(out, table, drows, n, row, dev.stream());
    dev.copy_to_host(sums.data(), out, n);
  }
  double s = 0;
  for (float v : sums) s += v;
  return static_cast<float>(s);
}

double CudaDevice::squared_norms(const float* const* xs, const size_t* ns, unsigned k) {
  if (!k) return 0.0;
  // The pointer and size lists and the k sums, one after the other in the own buffer.
  const size_t ptr_bytes = (size_t(k) * sizeof(float*) + 255) & ~size_t(255);
  const size_t size_bytes = (size_t(k) * sizeof(size_t) + 255) & ~size_t(255);
  std::vector<float> sums(k);
  {
    std::lock_guard<std::mutex> lock(own_buffer_mutex());
    char* buf = static_cast<char*>(own_buffer(ptr_bytes + size_bytes + size_t(k) * sizeof(float)));
    upload(buf, xs, size_t(k) * sizeof(float*));
    upload(buf + ptr_bytes, ns, size_t(k) * sizeof(size_t));
    float* out = reinterpret_cast<float*>(buf + ptr_bytes + size_bytes);
    cuda::launch_squared_norms(out, reinterpret_cast<const float* const*>(buf),
                               reinterpret_cast<const size_t*>(buf + ptr_bytes), k, stream());
    copy_to_host(sums.data(), out, k);
  }
  double s = 0;
  for (float v : sums) s += v;
  return s;
}

void device_sgd_rows_step_and_clear(Device* d, float* values, float* grads, const unsigned* rows, unsigned n,
                                    size_t row, float rate) {
  if (!n) return;
  CudaDevice& dev = cuda::device_of(d);
  std::lock_guard<std::mutex> lock(dev.own_buffer_mutex());
  cuda::launch_sgd_rows(values, grads, upload_rows(dev, rows, n), n, row, rate, dev.stream());
}

void CudaDevice::fill_rows(float* table, const unsigned* rows, unsigned n, size_t row, float value) {
  if (!n) return;
  CudaDevice& dev = *this;
  std::lock_guard<std::mutex> lock(dev.own_buffer_mutex());
  cuda::launch_fill_rows(table, upload_rows(dev, rows, n), n, row, value, dev.stream());
}

void device_gather(Device* d, float* dst, const float* const* srcs, size_t n, unsigned k, Arena& scratch) {
  CudaDevice& dev = cuda::device_of(d);
  const float* const* dsrcs = upload_pointers(dev, srcs, k, scratch);
  cuda::launch_gather(dst, dsrcs, n, k, dev.stream());
}

void device_scatter_add(Device* d, float* const* dsts, const float* src, size_t n, unsigned k, Arena& scratch) {
  CudaDevice& dev = cuda::device_of(d);
  float* const* ddsts = upload_pointers(dev, dsts, k, scratch);
  cuda::launch_scatter_add(ddsts, src, n, k, dev.stream());
}

void register_cuda_kernels(OpTable& t) {
  cuda::register_input_kernels(t);
  cuda::register_unary_kernels(t);
  cuda::register_arith_kernels(t);
  cuda::register_matrix_kernels(t);
  cuda::register_reduce_kernels(t);
  cuda::register_shape_kernels(t);
  cuda::register_lstm_kernels(t);
}

}  // namespace dynet_lite
