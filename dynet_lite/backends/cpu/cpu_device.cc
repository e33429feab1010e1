// The CPU device: 64-byte aligned heap memory and plain copies.  Blocks of a
// megabyte or more (the arenas' chunks) are mapped from the kernel directly:
// a released chunk goes back to it at once (the C library would keep a freed
// block of up to 32 MiB in its heap, so that an arena trading its chunks for
// one would hold both).  The largest are asked to be backed by transparent
// huge pages: a new chunk is then touched in 2 MiB pages instead of 4 KiB
// ones, which removes most of the page faults of a growing arena and many TLB
// misses of batched kernels.  The huge page in which an arena's use of a chunk
// ends would be resident whole: trim() gives back its part past the use.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "dynet_lite/devices.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

namespace {

class CpuDevice final : public Device {
  static constexpr size_t kHugePage = size_t(2) << 20;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  static constexpr size_t kMapFrom = size_t(1) << 20;
  // Pages of the kernel; from two huge pages on, whole huge pages aligned to
  // one (a mapping one page longer, trimmed).
  void* map(size_t bytes) {
    const bool huge = bytes >= 2 * kHugePage;
    const size_t page = huge ? kHugePage : size_t(4096);
    const size_t rounded = (bytes + page - 1) / page * page, span = huge ? rounded + kHugePage : rounded;
    void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    char* p = static_cast<char*>(raw);
    if (huge) {
      char* begin = p;
      p = begin + (kHugePage - reinterpret_cast<uintptr_t>(begin) % kHugePage) % kHugePage;
      if (p > begin) munmap(begin, static_cast<size_t>(p - begin));
      if (begin + span > p + rounded) munmap(p + rounded, static_cast<size_t>(begin + span - (p + rounded)));
      madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure changes nothing
    }
    std::lock_guard<std::mutex> lock(mapped_mutex_);
    mapped_.emplace(p, rounded);
    return p;
  }
  std::mutex mapped_mutex_;
  std::unordered_map<void*, size_t> mapped_;  // the mapped blocks and their lengths
#endif

 public:
  CpuDevice() : Device(DeviceType::CPU, 0, "CPU") {}
  void* allocate(size_t bytes) override {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= kMapFrom) return map(bytes);
#endif
    size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  /// A mapped block backed by huge pages: the huge page that `used` ends in
  /// is partly resident for nothing (a 2 MiB page is touched whole).  Its
  /// part past `used` is given back, and that page keeps small pages from now
  /// on (so that the kernel does not make it one huge page again); the pages
  /// after it stay huge.
  void trim(void* block, size_t used, size_t bytes) override {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes < 2 * kHugePage) return;  // not mapped with huge pages
    size_t length;  // of the mapping: whole huge pages
    {
      std::lock_guard<std::mutex> lock(mapped_mutex_);
      auto it = mapped_.find(block);
      if (it == mapped_.end()) return;
      length = it->second;
    }
    char* p = static_cast<char*>(block);
    const size_t from = (used + 4095) / 4096 * 4096, page = used / kHugePage * kHugePage;
    const size_t end = std::min(page + kHugePage, length);
    if (from >= end) return;  // ends on a huge page's boundary
    madvise(p + page, end - page, MADV_NOHUGEPAGE);
    madvise(p + from, end - from, MADV_DONTNEED);
#else
    (void)block, (void)used, (void)bytes;
#endif
  }
  void release(void* p) override {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    {
      std::lock_guard<std::mutex> lock(mapped_mutex_);
      auto it = mapped_.find(p);
      if (it != mapped_.end()) {
        munmap(p, it->second);
        mapped_.erase(it);
        return;
      }
    }
#endif
    std::free(p);
  }
  void copy_to_host(float* host, const float* dev, size_t n) const override {
    if (n) std::memcpy(host, dev, n * sizeof(float));
  }
  void copy_from_host(float* dev, const float* host, size_t n) const override {
    if (n) std::memcpy(dev, host, n * sizeof(float));
  }
  void copy(float* dst, const float* src, size_t n) const override {
    if (n && dst != src) std::memmove(dst, src, n * sizeof(float));
  }
  void fill(float* dst, float value, size_t n) const override {
    if (value == 0.f)
      std::memset(dst, 0, n * sizeof(float));
    else
      std::fill(dst, dst + n, value);
  }
};

struct Registry {
  std::mutex mutex;
  std::vector<Device*> devices;
  Device* default_dev = nullptr;
  bool default_set = false;  // by initialize() or set_default_device(): DyNet's pointer is non-null
  Registry() {
    static CpuDevice cpu;
    devices.push_back(&cpu);
    default_dev = &cpu;
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

Device* cpu_device() { return registry().devices.front(); }
DefaultDevice default_device;

Device* DefaultDevice::operator()() const { return registry().default_dev; }
DefaultDevice::operator Device*() const { return registry().default_set ? registry().default_dev : nullptr; }
DefaultDevice& DefaultDevice::operator=(Device* d) {
  if (d) {
    set_default_device(d);
  } else {
    registry().default_dev = cpu_device();
    registry().default_set = false;
  }
  return *this;
}

void set_default_device(Device* d) {
  DYNET_LITE_ARG_CHECK(d != nullptr, "set_default_device: null device");
  registry().default_dev = d;
  registry().default_set = true;
}
const std::vector<Device*>& all_devices() { return registry().devices; }

void register_device(Device* d) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().devices.push_back(d);
}

Device* get_device_manager_device(const std::string& name) {
  for (Device* d : registry().devices)
    if (d->name == name) return d;
  std::string known;
  for (Device* d : registry().devices) known += (known.empty() ? "" : ", ") + d->name;
  DYNET_LITE_CHECK(false, std::invalid_argument,
                   "get_device_manager_device: no device named '" << name << "' (known: " << known << ")");
}

}  // namespace dynet_lite
