#pragma once
/// \file devices.h
/// Devices own memory and run kernels.  The CPU device always exists; a CUDA
/// device is registered by the CUDA backend when it is built and a GPU is asked for.
#include <cstddef>
#include <string>
#include <vector>

namespace dynet_lite {

enum class DeviceType : unsigned char { CPU = 0, GPU = 1 };
constexpr unsigned kNumDeviceTypes = 2;

/// Which pool a tensor's memory belongs to (DyNet's names).
enum class DeviceMempool { FXS = 0, DEDFS = 1, PS = 2, SCS = 3, NONE = 4 };

/// A place where tensors live.  Memory is taken in large chunks by the arenas;
/// the virtual calls below are never made per operation on a hot path.
class Device {
 public:
  Device(DeviceType type, int device_id, std::string name)
      : type(type), device_id(device_id), name(std::move(name)) {}
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  /// Of a block from allocate() of `bytes`, no use ever reaches past its first
  /// `used` bytes so far: a device may give back what its pages hold beyond
  /// them (their contents are then undefined, and a later use is free to reach
  /// them).  Called rarely (when an arena's use grows); nothing by default.
  virtual void trim(void* /*block*/, size_t /*used*/, size_t /*bytes*/) {}
  /// Copies between host memory and this device's memory.
  virtual void copy_to_host(float* host, const float* dev, size_t n) const = 0;
  virtual void copy_from_host(float* dev, const float* host, size_t n) const = 0;
  virtual void copy(float* dst, const float* src, size_t n) const = 0;
  virtual void fill(float* dst, float value, size_t n) const = 0;
  /// The rows `rows[0, n)` (each `row` floats) of a table in this device's
  /// memory (a lookup parameter's): set to `value`, and the sum of their squared
  /// elements.  Row by row through fill / copy_to_host unless a device does it at once.
  virtual void fill_rows(float* table, const unsigned* rows, unsigned n, size_t row, float value);
  virtual float rows_squared_norm(const float* table, const unsigned* rows, unsigned n, size_t row);
  /// The sum of the squared elements of k vectors in this device's memory
  /// (vector j: xs[j], ns[j] floats), read back once (a trainer's gradient norm).
  virtual double squared_norms(const float* const* xs, const size_t* ns, unsigned k);

  const DeviceType type;
  const int device_id;
  const std::string name;
};

/// The process-wide CPU device (memory from the C++ heap, 64-byte aligned).
Device* cpu_device();
/// DyNet's global `default_device`: the device new parameters and graph nodes
/// go to.  As in DyNet, it reads as a null pointer until initialize() or
/// set_default_device() sets it, so that
/// `if (default_device == nullptr) initialize(argc, argv);` works;
/// `default_device()` and `default_device->name` give the device in use, the
/// CPU until another is set.
class DefaultDevice {
 public:
  /// The device in use (never null).
  Device* operator()() const;
  /// DyNet's pointer: null until initialize() or an assignment.
  operator Device*() const;
  Device* operator->() const { return (*this)(); }
  /// set_default_device(d); null makes it read as unset again (the CPU is used).
  DefaultDevice& operator=(Device* d);
  friend bool operator==(const DefaultDevice& a, std::nullptr_t) { return static_cast<Device*>(a) == nullptr; }
  friend bool operator!=(const DefaultDevice& a, std::nullptr_t) { return static_cast<Device*>(a) != nullptr; }
};
extern DefaultDevice default_device;
/// Makes `d` the default device; throws std::invalid_argument on null.
void set_default_device(Device* d);
/// Every device known to this process, CPU first.
const std::vector<Device*>& all_devices();
/// Looks a device up by DyNet's name: "CPU", "GPU:0".  Throws naming the device.
Device* get_device_manager_device(const std::string& name);

}  // namespace dynet_lite
