// Recording a CUDA device's work as a CUDA graph and launching it again
// (backends/device_graph.h): a compiled program's forward pass, captured once
// and launched as one.  While recording, each upload from the host becomes a
// device-to-device copy from staging memory of the recording: staging for a
// copy from a program's slots (the live ranges) is refilled from the slots by
// one host-to-device copy per block before each launch; staging for any other
// copy holds what it held when recorded.  Steps marked while recording
// (mark_device_step) become branches of the graph that wait only for the steps
// they name, so independent work (the two directions of a BiLSTM, the words'
// output layers) runs side by side; cuBLAS records without a workspace then,
// as two of its products may run at once.
#include "dynet_lite/backends/cuda/cuda_graph.h"

#include <algorithm>
#include <cstring>

#include "dynet_lite/backends/cuda/cublas_library.h"
#include "dynet_lite/backends/cuda/cuda_check.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

namespace {
constexpr size_t kStageAlign = 256;
constexpr size_t kFirstStageBlock = 64 * 1024;

bool inside(const std::vector<HostRange>& ranges, const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (const HostRange& r : ranges) {
    const char* b = static_cast<const char*>(r.begin);
    if (c >= b && c + bytes <= b + r.bytes) return true;
  }
  return false;
}

/// The recorded forward of a compiled program on one GPU.
class CudaGraph final : public DeviceGraph {
 public:
  CudaGraph(CudaDevice& dev, cudaGraphExec_t exec, std::unique_ptr<CudaDevice::Recording> rec)
      : dev_(dev), exec_(exec), rec_(std::move(rec)) {}
  ~CudaGraph() override {
    // Errors are ignored: the runtime may be shutting down.
    cudaSetDevice(dev_.ordinal());
    cudaStreamSynchronize(dev_.stream());
    if (copied_) cudaEventDestroy(copied_);
    if (mirror_) cudaFreeHost(mirror_);
    cudaGraphExecDestroy(exec_);
    rec_->live_stage.release();
    rec_->fixed_stage.release();
  }

  /// Fills the fixed staging memory and the pinned mirror of the live blocks.
  void prepare() {
    for (const auto& c : rec_->fixed_copies)
      DYNET_LITE_CUDA_CHECK(cudaMemcpy(c.stage, c.data.data(), c.data.size(), cudaMemcpyHostToDevice));
    rec_->fixed_copies.clear();
    size_t total = 0;
    for (const auto& b : rec_->live_stage.blocks) {
      mirror_offsets_.push_back(total);
      total += b.used;
    }
    if (total) {
      DYNET_LITE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&mirror_), total));
      DYNET_LITE_CUDA_CHECK(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
    }
  }

  void launch() override {
    dev_.activate();
    if (mirror_) {
      // The previous launch's copies must have read the mirror before it is refilled.
      DYNET_LITE_CUDA_CHECK(cudaEventSynchronize(copied_));
      for (const auto& c : rec_->live_copies)
        std::memcpy(mirror_ + mirror_offsets_[c.block] + c.offset, c.src, c.bytes);
      const auto& blocks = rec_->live_stage.blocks;
      for (size_t b = 0; b < blocks.size(); ++b)
        DYNET_LITE_CUDA_CHECK(cudaMemcpyAsync(blocks[b].base, mirror_ + mirror_offsets_[b], blocks[b].used,
                                              cudaMemcpyHostToDevice, dev_.stream()));
      DYNET_LITE_CUDA_CHECK(cudaEventRecord(copied_, dev_.stream()));
    }
    DYNET_LITE_CUDA_CHECK(cudaGraphLaunch(exec_, dev_.stream()));
  }

 private:
  CudaDevice& dev_;
  cudaGraphExec_t exec_;
  std::unique_ptr<CudaDevice::Recording> rec_;
  char* mirror_ = nullptr;
  std::vector<size_t> mirror_offsets_;  // of each live block in the mirror
  cudaEvent_t copied_ = nullptr;
};

/// Appends the graph nodes the recording stream's next work would wait for.
cudaError_t append_capture_frontier(CudaDevice& dev, std::vector<cudaGraphNode_t>& out) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* deps = nullptr;
  size_t n = 0;
  const cudaError_t st = cudaStreamGetCaptureInfo(dev.stream(), &status, nullptr, nullptr, &deps, nullptr, &n);
  if (st == cudaSuccess) out.insert(out.end(), deps, deps + n);
  return st;
}

/// cuBLAS back on its own workspace (setting the stream restores it).
void restore_cublas_workspace(CudaDevice& dev) { cuda::cublas_library().set_stream(dev.cublas(), dev.stream()); }

}  // namespace

char* StagingBlocks::take(size_t bytes, size_t& block, size_t& offset) {
  const size_t rounded = (bytes + kStageAlign - 1) & ~(kStageAlign - 1);
  if (blocks.empty() || blocks.back().used + rounded > blocks.back().size) {
    const size_t size = std::max(rounded, blocks.empty() ? kFirstStageBlock : 2 * blocks.back().size);
    void* p = nullptr;
    // Allowed while the stream records (relaxed capture mode): not a stream operation.
    DYNET_LITE_CUDA_CHECK(cudaMalloc(&p, size));
    blocks.push_back({static_cast<char*>(p), size, 0});
  }
  Block& b = blocks.back();
  block = blocks.size() - 1;
  offset = b.used;
  b.used += rounded;
  return b.base + offset;
}

void StagingBlocks::release() {
  for (Block& b : blocks) cudaFree(b.base);
  blocks.clear();
}

void CudaDevice::set_recording(std::unique_ptr<Recording> r) { recording_ = std::move(r); }
std::unique_ptr<CudaDevice::Recording> CudaDevice::take_recording() { return std::move(recording_); }

namespace cuda {
void record_upload(CudaDevice& dev, CudaDevice::Recording& r, void* dst, const void* host, size_t bytes) {
  size_t block = 0, offset = 0;
  char* stage;
  if (inside(r.live, host, bytes)) {
    stage = r.live_stage.take(bytes, block, offset);
    r.live_copies.push_back({block, offset, bytes, host});
  } else {
    stage = r.fixed_stage.take(bytes, block, offset);
    const char* h = static_cast<const char*>(host);
    r.fixed_copies.push_back({stage, std::vector<char>(h, h + bytes)});
  }
  DYNET_LITE_CUDA_CHECK(cudaMemcpyAsync(dst, stage, bytes, cudaMemcpyDeviceToDevice, dev.stream()));
}
}  // namespace cuda

bool can_record_device_graph(const Device* d) { return d && d->type == DeviceType::GPU; }

HostEffectsOnly::HostEffectsOnly(Device* d) : d_(d) { cuda::device_of(d).set_host_effects_only(true); }
HostEffectsOnly::~HostEffectsOnly() { cuda::device_of(d_).set_host_effects_only(false); }

void begin_device_graph(Device* d, std::vector<HostRange> live) {
  CudaDevice& dev = cuda::device_of(d);
  DYNET_LITE_CHECK(!dev.recording(), std::logic_error, dev.name << ": a graph is already being recorded");
  dev.synchronize();
  auto rec = std::make_unique<CudaDevice::Recording>();
  rec->live = std::move(live);
  dev.set_recording(std::move(rec));
  // Products of steps that may run at once must not share cuBLAS's workspace.
  const cublasStatus_t ws = cuda::cublas_library().set_workspace(dev.cublas(), nullptr, 0);
  if (ws != CUBLAS_STATUS_SUCCESS) {
    dev.take_recording();
    DYNET_LITE_CUBLAS_CHECK(ws);
  }
  // Relaxed: the arenas may still take device memory while recording.
  const cudaError_t st = cudaStreamBeginCapture(dev.stream(), cudaStreamCaptureModeRelaxed);
  if (st != cudaSuccess) {
    dev.take_recording();
    restore_cublas_workspace(dev);
    DYNET_LITE_CUDA_CHECK(st);
  }
}

void mark_device_step(Device* d, const uint32_t* after, size_t n) {
  CudaDevice& dev = cuda::device_of(d);
  CudaDevice::Recording* r = dev.recording();
  if (!r) return;
  std::vector<cudaGraphNode_t> ended;
  DYNET_LITE_CUDA_CHECK(append_capture_frontier(dev, ended));
  if (r->marked)
    r->step_ends.push_back(std::move(ended));
  else
    r->before_steps = std::move(ended);
  r->marked = true;
  std::vector<cudaGraphNode_t> deps;
  for (size_t k = 0; k < n; ++k) {
    DYNET_LITE_CHECK(after[k] < r->step_ends.size(), internal_error,
                     dev.name << ": recorded step " << r->step_ends.size() << " waits for step " << after[k]
                              << ", which is not an earlier one");
    const std::vector<cudaGraphNode_t>& e = r->step_ends[after[k]];
    deps.insert(deps.end(), e.begin(), e.end());
  }
  // A step waiting for no earlier step (or for steps that queued nothing)
  // still follows what was queued before the first mark.
  if (deps.empty()) deps = r->before_steps;
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  DYNET_LITE_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(dev.stream(), deps.data(), nullptr, deps.size(),
                                                            cudaStreamSetCaptureDependencies));
}

std::unique_ptr<DeviceGraph> end_device_graph(Device* d) {
  CudaDevice& dev = cuda::device_of(d);
  std::unique_ptr<CudaDevice::Recording> rec = dev.take_recording();
  if (rec && rec->marked) {
    // The graph ends when all its branches have: the stream joins them.  No
    // check here: a capture that failed is reported by cudaStreamEndCapture.
    std::vector<cudaGraphNode_t> all;
    append_capture_frontier(dev, all);
    for (const auto& e : rec->step_ends) all.insert(all.end(), e.begin(), e.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    cudaStreamUpdateCaptureDependencies(dev.stream(), all.data(), nullptr, all.size(),
                                        cudaStreamSetCaptureDependencies);
  }
  cudaGraph_t graph = nullptr;
  cudaError_t st = cudaStreamEndCapture(dev.stream(), &graph);
  restore_cublas_workspace(dev);
  cudaGraphExec_t exec = nullptr;
  if (st == cudaSuccess && graph) st = cudaGraphInstantiate(&exec, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  if (st != cudaSuccess || !exec) {
    // Not recordable (a kernel waited for the device, or an unsupported call):
    // the caller runs the work kernel by kernel.
    cudaGetLastError();
    if (rec) {
      rec->live_stage.release();
      rec->fixed_stage.release();
    }
    return nullptr;
  }
  auto g = std::make_unique<CudaGraph>(dev, exec, std::move(rec));
  g->prepare();
  return g;
}

}  // namespace dynet_lite
