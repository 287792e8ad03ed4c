// One launch API over two devices: the CPU emulator and the CUDA driver.
//
//   std::unique_ptr<Device> dev = ...;             // MakeEmulator() or a CUDA device
//   auto a = Buffer<float>::Allocate(*dev, n);      // typed device memory (RAII)
//   a->CopyFrom(host_a);
//   auto k = dev->Load(kernel);                     // ir::Kernel -> loaded kernel
//   dev->Launch(**k, {.grid = {blocks}, .block = {256}}, {*a, *b, *c, n});
//   c->CopyTo(host_c);
//
// Arguments are checked against the kernel's params (count, size, type);
// a mismatch is an error naming the param. Integers must match in
// signedness too: an int for a u32 param is an error (a negative count
// would become a huge one); pass a uint32_t.
//
// Lifetimes: buffers, views and loaded kernels may outlive their device;
// once it is destroyed, using them is an error ("the device ... was
// destroyed") and a buffer's destructor frees nothing. A kernel launches only
// on the device that loaded it. A device's own calls are thread-safe
// (concurrent launches included); destroying it while another thread uses
// it is not.
#ifndef PTXFORGE_RUNTIME_DEVICE_H_
#define PTXFORGE_RUNTIME_DEVICE_H_

#include <cstdint>
#include <cstring>
#include <atomic>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace ptxforge::runtime {

enum class DeviceKind { kEmulator, kCuda };

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_shared_bytes = 0;
};

// A kernel argument: a scalar with its IR type, or a device address.
struct KernelArg {
  ir::ScalarType type = ir::ScalarType::kNone;
  uint64_t bits = 0;
  bool is_address = false;  // from a buffer or a view

  KernelArg() = default;
  template <typename T>
    requires std::is_arithmetic_v<T>
  KernelArg(T v) : type(TypeOf<T>()) {  // NOLINT: implicit by design
    static_assert(sizeof(T) <= 8);
    std::memcpy(&bits, &v, sizeof(T));
  }
  static KernelArg Address(uint64_t address) {
    KernelArg a;
    a.type = ir::ScalarType::kU64;
    a.bits = address;
    a.is_address = true;
    return a;
  }

  template <typename T>
  static constexpr ir::ScalarType TypeOf() {
    if constexpr (std::is_same_v<T, bool>) return ir::ScalarType::kU8;
    else if constexpr (std::is_same_v<T, float>) return ir::ScalarType::kF32;
    else if constexpr (std::is_same_v<T, double>) return ir::ScalarType::kF64;
    else if constexpr (std::is_signed_v<T>) {
      return sizeof(T) == 1 ? ir::ScalarType::kS8 : sizeof(T) == 2 ? ir::ScalarType::kS16
                            : sizeof(T) == 4 ? ir::ScalarType::kS32 : ir::ScalarType::kS64;
    } else {
      return sizeof(T) == 1 ? ir::ScalarType::kU8 : sizeof(T) == 2 ? ir::ScalarType::kU16
                            : sizeof(T) == 4 ? ir::ScalarType::kU32 : ir::ScalarType::kU64;
    }
  }
};

class Device;

// What a buffer or kernel keeps of its device: a number no other device gets,
// and a token that expires when the device is destroyed.
struct DeviceRef {
  uint64_t id = 0;
  std::weak_ptr<const void> alive;
  bool gone() const { return alive.expired(); }
};

// A kernel made ready to run on one device (decoded, or JIT-compiled).
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  const std::string& name() const { return name_; }
  const std::vector<ir::Param>& params() const { return params_; }
  const ir::LaunchBounds& bounds() const { return bounds_; }
  // The device that loaded it.
  const DeviceRef& device_ref() const { return device_; }

 protected:
  LoadedKernel(const ir::Kernel& kernel, const Device& device);

 private:
  std::string name_;
  std::vector<ir::Param> params_;
  ir::LaunchBounds bounds_;
  DeviceRef device_;
};

// Checks `args` against the kernel's params; the message names the kernel and
// the param ("kernel vector_add_f32: param 3 'n' is u32 (4 bytes), got f64 (8 bytes)").
absl::Status CheckArgs(const LoadedKernel& kernel, std::span<const KernelArg> args);
// Byte offsets of the params in the param buffer (each at its natural
// alignment); the total size goes to *total.
std::vector<uint32_t> ParamOffsets(const std::vector<ir::Param>& params, uint32_t* total);
// Lays the arguments out as the param buffer (each at its natural alignment).
std::vector<uint8_t> PackArgs(const LoadedKernel& kernel, std::span<const KernelArg> args);
// Grid and block limits (CUDA's: grid x <= 2^31-1, y and z <= 65535; 1024
// threads per block), and the kernel's .reqntid / .maxntid.
absl::Status CheckLaunchConfig(const LoadedKernel& kernel, const LaunchConfig& config);

class Device {
 public:
  Device();
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  virtual DeviceKind kind() const = 0;
  virtual std::string name() const = 0;
  // This device's identity, for the buffers and kernels it makes.
  DeviceRef ref() const { return DeviceRef{id_, alive_}; }

  // Raw memory. Addresses are device addresses (what a kernel's pointer
  // params hold). Buffer<T> below is the owning, typed way to use these.
  virtual absl::StatusOr<uint64_t> Allocate(size_t bytes) = 0;
  virtual absl::Status Free(uint64_t address) = 0;
  virtual absl::Status CopyToDevice(uint64_t dst, const void* src, size_t bytes) = 0;
  virtual absl::Status CopyToHost(void* dst, uint64_t src, size_t bytes) = 0;

  // Prepares a verified kernel for launching.
  virtual absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const ir::Kernel& kernel) = 0;
  // Checks the configuration and arguments, then runs the kernel.
  absl::Status Launch(LoadedKernel& kernel, const LaunchConfig& config, std::span<const KernelArg> args) {
    if (absl::Status s = CheckOwnKernel(kernel, "Launch"); !s.ok()) return s;
    if (absl::Status s = CheckLaunchConfig(kernel, config); !s.ok()) return s;
    if (absl::Status s = CheckArgs(kernel, args); !s.ok()) return s;
    return DoLaunch(kernel, config, args);
  }
  absl::Status Launch(LoadedKernel& kernel, const LaunchConfig& config, std::initializer_list<KernelArg> args) {
    return Launch(kernel, config, std::span<const KernelArg>(args.begin(), args.size()));
  }
  // Waits for launched work to finish (the emulator runs launches synchronously).
  virtual absl::Status Synchronize() = 0;

 protected:
  // OK when `kernel` was loaded by this device; else "WHAT: kernel K was not
  // loaded on NAME (load it with this device's Load)".
  absl::Status CheckOwnKernel(const LoadedKernel& kernel, std::string_view what) const;

  // Called with checked arguments.
  virtual absl::Status DoLaunch(LoadedKernel& kernel, const LaunchConfig& config,
                                std::span<const KernelArg> args) = 0;

 private:
  uint64_t id_;
  std::shared_ptr<const void> alive_;
};

// The error for a buffer whose device was destroyed.
absl::Status DeviceGoneError(std::string_view what);

template <typename T>
class Buffer;

// A typed, non-owning range of a buffer: pass it wherever a buffer is taken.
template <typename T>
class BufferView {
 public:
  BufferView() = default;
  BufferView(Device* device, uint64_t address, size_t count)
      : device_(device), ref_(device != nullptr ? device->ref() : DeviceRef()), address_(address), count_(count) {}
  uint64_t address() const { return address_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }
  Device* device() const { return device_; }
  operator KernelArg() const { return KernelArg::Address(address_); }  // NOLINT: implicit by design

  // Elements [offset, offset + count) of this view.
  absl::StatusOr<BufferView<T>> View(size_t offset, size_t count) const {
    if (offset > count_ || count > count_ - offset) {
      return absl::OutOfRangeError("view [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                                   ") is outside a buffer view of " + std::to_string(count_) + " elements");
    }
    BufferView<T> view = *this;
    view.address_ = address_ + offset * sizeof(T);
    view.count_ = count;
    return view;
  }
  // Whether the device is still there (false for an empty view too).
  bool device_alive() const { return device_ != nullptr && !ref_.gone(); }
  absl::Status CopyFrom(std::span<const T> host) const {
    if (host.size() != count_) {
      return absl::InvalidArgumentError("copy of " + std::to_string(host.size()) + " elements into a buffer of " +
                                        std::to_string(count_));
    }
    if (!device_alive()) return DeviceGoneError("copy into a buffer");
    return device_->CopyToDevice(address_, host.data(), bytes());
  }
  absl::Status CopyTo(std::span<T> host) const {
    if (host.size() != count_) {
      return absl::InvalidArgumentError("copy of a buffer of " + std::to_string(count_) + " elements into " +
                                        std::to_string(host.size()));
    }
    if (!device_alive()) return DeviceGoneError("copy out of a buffer");
    return device_->CopyToHost(host.data(), address_, bytes());
  }
  absl::StatusOr<std::vector<T>> ToHost() const {
    std::vector<T> out(count_);
    if (absl::Status s = CopyTo(std::span<T>(out)); !s.ok()) return s;
    return out;
  }

 private:
  Device* device_ = nullptr;
  DeviceRef ref_;
  uint64_t address_ = 0;
  size_t count_ = 0;
};

// Owning, move-only typed device memory.
template <typename T>
class Buffer {
 public:
  static absl::StatusOr<Buffer<T>> Allocate(Device& device, size_t count) {
    if (count > SIZE_MAX / sizeof(T)) {
      return absl::ResourceExhaustedError("cannot allocate " + std::to_string(count) + " elements of " +
                                          std::to_string(sizeof(T)) + " bytes: the size overflows 64 bits");
    }
    absl::StatusOr<uint64_t> address = device.Allocate(count * sizeof(T));
    if (!address.ok()) return address.status();
    return Buffer<T>(&device, *address, count);
  }
  // Allocates and copies `host` in.
  static absl::StatusOr<Buffer<T>> FromHost(Device& device, std::span<const T> host) {
    absl::StatusOr<Buffer<T>> b = Allocate(device, host.size());
    if (!b.ok()) return b;
    if (absl::Status s = b->CopyFrom(host); !s.ok()) return s;
    return b;
  }

  Buffer() = default;
  Buffer(Buffer&& o) noexcept : view_(std::move(o.view_)) { o.view_ = BufferView<T>(); }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      Release();
      view_ = std::move(o.view_);
      o.view_ = BufferView<T>();
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Release(); }

  uint64_t address() const { return view_.address(); }
  size_t size() const { return view_.size(); }
  size_t bytes() const { return view_.bytes(); }
  const BufferView<T>& view() const { return view_; }
  absl::StatusOr<BufferView<T>> View(size_t offset, size_t count) const { return view_.View(offset, count); }
  operator BufferView<T>() const { return view_; }               // NOLINT: implicit by design
  operator KernelArg() const { return KernelArg::Address(address()); }  // NOLINT
  absl::Status CopyFrom(std::span<const T> host) const { return view_.CopyFrom(host); }
  absl::Status CopyTo(std::span<T> host) const { return view_.CopyTo(host); }
  absl::StatusOr<std::vector<T>> ToHost() const { return view_.ToHost(); }

 private:
  Buffer(Device* device, uint64_t address, size_t count) : view_(device, address, count) {}
  void Release() {
    if (view_.device_alive()) (void)view_.device()->Free(view_.address());
    view_ = BufferView<T>();
  }
  BufferView<T> view_;
};

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_DEVICE_H_
