// The CUDA device: JIT through the Driver API, a kernel cache, and launches behind the Device API.
//
//   absl::StatusOr<std::unique_ptr<CudaDevice>> gpu = OpenCudaDevice();
//   if (!gpu.ok()) ...  // "CUDA driver not found (libcuda.so.1): ..." on a machine without a driver
//   auto kernel = (*gpu)->Load(*ir_kernel);  // PTX -> module (cached in memory; on disk if asked)
//   (*gpu)->Launch(**kernel, {.grid = {blocks}, .block = {256}}, {*a, *b, *c, n});
//
// Launches are asynchronous: Launch and LaunchOn return once the driver has
// queued the kernel, so a kernel that faults (an illegal address, a
// misaligned access, ...) is reported by a later call: a copy, Synchronize,
// the next launch. Such an error is sticky: every later call in the context
// returns it, and its message says so ("...; an earlier kernel launch
// faulted; the context is unusable until the process restarts"). Call
// Synchronize() after a launch to see its fault there.
//
// The driver is opened with dlopen: nothing here needs libcuda (or cuda.h)
// to build or to start. Every driver object (context, module, stream, event)
// is a move-only owner; modules, streams and events keep the device's primary
// context alive, so they may outlive the CudaDevice that made them.
#ifndef PTXFORGE_RUNTIME_CUDA_DEVICE_H_
#define PTXFORGE_RUNTIME_CUDA_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "ir/target.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_jit.h"
#include "runtime/device.h"
#include "runtime/kernel_cache.h"

namespace ptxforge::runtime {

// The compiled-kernel caches.
//
// The memory cache (on by default) shares one module between the Loads of
// the same PTX on a device.
//
// The disk cache (off by default) keeps cubins across processes. To get a
// cubin it must compile through the linker (cuLinkCreate, cuLinkAddData,
// cuLinkComplete), which treats PTX as relocatable device code (nvcc's
// -rdc=true) and can give other, often slower, SASS than cuModuleLoadDataEx,
// the path used without it: with the disk cache on, results and timings may
// differ from a run without it. The driver's own JIT cache (CUDA_CACHE_PATH,
// by default ~/.nv/ComputeCache) already keeps cuModuleLoadDataEx's results
// across runs, so turn the disk cache on only to keep cubins where the
// driver's cache is off or too small. It is on when `disk` is set or
// $PTXFORGE_CACHE is "on", "1" or "true"; "off", "0" or "false" keeps it off
// even when `disk` is set. CudaDevice::disk_cache_status() says which, and why.
struct CudaCacheOptions {
  bool memory = true;     // share modules between Loads of the same PTX
  bool disk = false;      // cubins on disk (see above); $PTXFORGE_CACHE overrides
  std::string directory;  // "" -> DefaultCacheDirectory() ($PTXFORGE_CACHE_DIR, ...)
};

struct CudaOptions {
  std::string libcuda_path;  // "" -> $PTXFORGE_LIBCUDA, else libcuda.so.1
  JitOptions jit;
  CudaCacheOptions cache;
  // The PTX ISA version to print, capped at what the driver accepts; by
  // default the lowest the kernel allows.
  std::optional<ir::PtxVersion> ptx_version;
};

struct CudaDeviceProperties {
  int ordinal = 0;
  std::string name;  // "NVIDIA A100-SXM4-40GB"
  int cc_major = 0;  // compute capability
  int cc_minor = 0;
  int sm_count = 0;
  size_t total_memory = 0;  // bytes
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_shared_per_block = 0;        // bytes, without opting in
  int max_shared_per_block_optin = 0;  // bytes, with cuFuncSetAttribute
  int registers_per_block = 0;
  int warp_size = 0;
  int l2_cache_bytes = 0;
  int driver_version = 0;  // cuDriverGetVersion (12080 for CUDA 12.8)
};

// What the driver says about a compiled kernel (cuFuncGetAttribute).
struct CudaFunctionAttributes {
  int num_regs = 0;
  int local_bytes = 0;   // per thread (spills and local arrays)
  int shared_bytes = 0;  // static shared memory
  int const_bytes = 0;
  int max_threads_per_block = 0;  // given its registers and shared memory
  int ptx_version = 0;     // major * 10 + minor
  int binary_version = 0;  // the SASS's compute capability, major * 10 + minor
};

// Where a loaded kernel's code came from.
enum class CodeSource { kJit, kDiskCache, kMemoryCache };
std::string_view CodeSourceName(CodeSource source);  // "jit", "disk cache", "memory cache"

class CudaContext;  // a retained primary context (cuda_device.cc)
class CudaModule;   // a loaded module (cuda_device.cc)

// A stream or an event with the context it lives in, destroyed in that
// context. Move-only; empty when default-made or moved from.
class CudaHandle {
 public:
  enum class Kind { kStream, kEvent };
  CudaHandle() = default;
  CudaHandle(std::shared_ptr<CudaContext> context, Kind kind, void* handle);
  CudaHandle(CudaHandle&& other) noexcept;
  CudaHandle& operator=(CudaHandle&& other) noexcept;
  CudaHandle(const CudaHandle&) = delete;
  CudaHandle& operator=(const CudaHandle&) = delete;
  ~CudaHandle();

  void* get() const { return handle_; }
  // OK, or "<what> on an empty CudaStream" (or CudaEvent) when there is no handle.
  absl::Status CheckNotEmpty(std::string_view what) const;
  // Runs `call` with the context current on this thread; CheckNotEmpty's
  // error when there is no handle.
  absl::Status InContext(std::string_view what,
                         absl::FunctionRef<absl::Status(const CudaContext& context)> call) const;

 private:
  void Reset();
  std::shared_ptr<CudaContext> context_;
  Kind kind_ = Kind::kStream;
  void* handle_ = nullptr;
};

// A stream made by CudaDevice::CreateStream. An empty one (default-made or
// moved from) is refused wherever a stream is taken, never read as the NULL
// stream.
class CudaStream {
 public:
  CudaStream() = default;
  absl::Status Synchronize() const;
  cu::CUstream handle() const { return static_cast<cu::CUstream>(handle_.get()); }

 private:
  friend class CudaDevice;
  friend class CudaEvent;
  explicit CudaStream(CudaHandle handle) : handle_(std::move(handle)) {}
  CudaHandle handle_;
};

class CudaEvent {
 public:
  CudaEvent() : handle_(nullptr, CudaHandle::Kind::kEvent, nullptr) {}
  // Records the event on `stream` (nullptr: the NULL stream; an empty
  // CudaStream is an error).
  absl::Status Record(const CudaStream* stream = nullptr) const;
  absl::Status Synchronize() const;
  // Milliseconds between two recorded events (cuEventElapsedTime), after
  // waiting for both to complete (cuEventSynchronize).
  static absl::StatusOr<float> ElapsedMs(const CudaEvent& start, const CudaEvent& end);
  cu::CUevent handle() const { return static_cast<cu::CUevent>(handle_.get()); }

 private:
  friend class CudaDevice;
  explicit CudaEvent(CudaHandle handle) : handle_(std::move(handle)) {}
  CudaHandle handle_;
};

class CudaDevice;

// A kernel JIT-compiled for one CUDA device.
class CudaKernel : public LoadedKernel {
 public:
  CudaKernel(const ir::Kernel& kernel, const CudaDevice* device, std::shared_ptr<CudaModule> module,
             cu::CUfunction function, const CudaFunctionAttributes& attributes, CodeSource source);
  ~CudaKernel() override;

  const CudaFunctionAttributes& attributes() const { return attributes_; }
  CodeSource source() const { return source_; }
  // The JIT's info log (empty when the code came from the disk cache).
  const std::string& info_log() const;
  const std::string& ptx() const;
  cu::CUfunction function() const { return function_; }
  const CudaDevice* device() const { return device_; }

 private:
  friend class CudaDevice;
  const CudaDevice* device_;
  std::shared_ptr<CudaModule> module_;
  cu::CUfunction function_;
  CudaFunctionAttributes attributes_;
  CodeSource source_;
};

class CudaDevice : public Device {
 public:
  ~CudaDevice() override;

  DeviceKind kind() const override { return DeviceKind::kCuda; }
  // "CUDA device 0 (NVIDIA A100-SXM4-40GB)"
  std::string name() const override;

  absl::StatusOr<uint64_t> Allocate(size_t bytes) override;
  absl::Status Free(uint64_t address) override;
  absl::Status CopyToDevice(uint64_t dst, const void* src, size_t bytes) override;
  absl::Status CopyToHost(void* dst, uint64_t src, size_t bytes) override;
  // Checks that the device can run the kernel's target and the driver its
  // PTX, prints the PTX, then JIT-compiles it (or takes it from the cache).
  absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const ir::Kernel& kernel) override;
  absl::Status Synchronize() override;

  const CudaDeviceProperties& properties() const { return properties_; }
  // The newest target this device runs without an "a" suffix (sm_86 on 8.6).
  ir::Target native_target() const { return native_target_; }
  const CudaOptions& options() const { return options_; }
  const CudaDriver& driver() const { return *driver_; }

  // The PTX Load would JIT for `kernel`.
  absl::StatusOr<std::string> PtxFor(const ir::Kernel& kernel) const;

  // A stream created with CU_STREAM_DEFAULT: it synchronises with the legacy
  // NULL stream that Launch, CopyToDevice and CopyToHost use, so that
  // LaunchOn(stream, ...) followed by ToHost() reads the kernel's results.
  absl::StatusOr<CudaStream> CreateStream();
  absl::StatusOr<CudaEvent> CreateEvent();
  // Device::Launch on a stream: the same checks, then cuLaunchKernel. Both
  // return when the kernel is queued; its faults surface at a later call.
  absl::Status LaunchOn(const CudaStream& stream, LoadedKernel& kernel, const LaunchConfig& config,
                        std::span<const KernelArg> args);
  absl::Status LaunchOn(const CudaStream& stream, LoadedKernel& kernel, const LaunchConfig& config,
                        std::initializer_list<KernelArg> args) {
    return LaunchOn(stream, kernel, config, std::span<const KernelArg>(args.begin(), args.size()));
  }
  absl::Status CopyToDeviceAsync(const CudaStream& stream, uint64_t dst, const void* src, size_t bytes);
  absl::Status CopyToHostAsync(const CudaStream& stream, void* dst, uint64_t src, size_t bytes);

  // cuOccupancyMaxActiveBlocksPerMultiprocessor for a kernel loaded here.
  // Dynamic shared memory above the device's default limit (48 KiB with the
  // static bytes) opts the kernel in first, as a launch does, since the driver
  // counts 0 blocks for more than the kernel is opted in for.
  absl::StatusOr<int> MaxActiveBlocksPerSm(const LoadedKernel& kernel, int block_threads,
                                           size_t dynamic_shared_bytes = 0) const;
  // Free and total device memory in bytes (cuMemGetInfo).
  absl::StatusOr<std::pair<size_t, size_t>> MemoryInfo() const;

  // The disk cache, or nullptr when it is off.
  DiskCache* disk_cache() const { return disk_cache_.get(); }
  // "on: <directory>", or why it is off: "off: the default (...)",
  // "off: PTXFORGE_CACHE=off", or "off: <what is wrong with the directory>"
  // (one that is not the effective user's, or that others may write to, is
  // refused; see PrepareCacheDirectory).
  const std::string& disk_cache_status() const { return disk_cache_status_; }
  // How many modules were JIT-compiled from PTX by this device (cache misses).
  int jit_count() const;

 protected:
  absl::Status DoLaunch(LoadedKernel& kernel, const LaunchConfig& config, std::span<const KernelArg> args) override;

 private:
  friend absl::StatusOr<std::unique_ptr<CudaDevice>> OpenCudaDevice(int ordinal, CudaOptions options);
  CudaDevice(const CudaDriver* driver, std::shared_ptr<CudaContext> context, CudaDeviceProperties properties,
             ir::Target native_target, CudaOptions options);

  absl::StatusOr<CudaKernel*> OwnKernel(const LoadedKernel& kernel, std::string_view what) const;
  // Checks `bytes` of dynamic shared memory against the device's opt-in limit
  // and, above the default limit, raises the kernel's maximum (its module
  // keeps the highest set). The context must be current.
  absl::Status PrepareDynamicShared(CudaKernel& kernel, size_t bytes) const;
  absl::Status LaunchChecked(cu::CUstream stream, LoadedKernel& kernel, const LaunchConfig& config,
                             std::span<const KernelArg> args);
  absl::Status CheckRange(uint64_t address, size_t bytes, std::string_view what) const;
  absl::StatusOr<std::shared_ptr<CudaModule>> BuildModule(const std::string& kernel_name, const std::string& ptx,
                                                          const CacheKey& key);
  absl::StatusOr<std::shared_ptr<CudaModule>> JitModule(const std::string& kernel_name, const std::string& ptx);
  absl::StatusOr<std::string> LinkCubin(const std::string& kernel_name, const std::string& ptx, JitLogs& logs);
  // cuModuleLoadDataEx of a cubin; its result goes to *result when given.
  absl::StatusOr<std::shared_ptr<CudaModule>> LoadCubin(const std::string& kernel_name, const std::string& ptx,
                                                        const std::string& cubin, CodeSource source,
                                                        std::string info_log, cu::CUresult* result = nullptr);

  const CudaDriver* driver_;
  std::shared_ptr<CudaContext> context_;
  CudaDeviceProperties properties_;
  ir::Target native_target_;
  CudaOptions options_;
  std::unique_ptr<DiskCache> disk_cache_;
  std::string disk_cache_status_;
  SingleFlightCache<std::shared_ptr<CudaModule>> modules_;

  mutable std::mutex mu_;
  std::map<uint64_t, size_t> allocations_;  // address -> bytes
  int jit_count_ = 0;
};

// Opens device `ordinal`: loads the driver, cuInit, retains the primary
// context and reads the properties. Errors name the cause: no driver
// ("CUDA driver not found (libcuda.so.1): ..."), the toolkit's stub library,
// no device, a bad ordinal, bad options.
absl::StatusOr<std::unique_ptr<CudaDevice>> OpenCudaDevice(int ordinal = 0, CudaOptions options = {});

// The newest target without an "a" suffix that compute capability
// major.minor runs (8.6 -> sm_86, 8.7 -> sm_87, 10.3 -> sm_100).
absl::StatusOr<ir::Target> NativeTargetFor(int cc_major, int cc_minor);
// OK when a device of compute capability major.minor can run code for the
// kernel's target.
absl::Status CheckRunsOn(const ir::Kernel& kernel, int cc_major, int cc_minor, std::string_view device_name);
// The PTX version to pin when printing `kernel` for a driver of
// `driver_version`: `pin` capped at the driver's maximum, or nullopt (the
// lowest the kernel allows). An error naming both versions when the kernel
// needs a newer PTX ISA than the driver accepts.
absl::StatusOr<std::optional<ir::PtxVersion>> ChoosePtxVersion(const ir::Kernel& kernel, int driver_version,
                                                               std::optional<ir::PtxVersion> pin);

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_CUDA_DEVICE_H_
