// CudaDevice: contexts, modules (JIT, link, cache), memory, launches, streams and events.
#include "runtime/cuda_device.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <utility>
#include <vector>

#include "emit/ptx_printer.h"
#include "ir/strings.h"

namespace ptxforge::runtime {

// A retained primary context; released when the last owner goes.
class CudaContext {
 public:
  CudaContext(const CudaDriver* driver, cu::CUdevice device, cu::CUcontext context)
      : driver_(driver), device_(device), context_(context) {}
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  ~CudaContext() { (void)driver_->api().cuDevicePrimaryCtxRelease_v2(device_); }

  const CudaDriver& driver() const { return *driver_; }
  const cu::CudaDriverApi& api() const { return driver_->api(); }
  cu::CUcontext get() const { return context_; }
  // OK for CUDA_SUCCESS; else the driver's error for `what`.
  absl::Status Check(cu::CUresult result, std::string_view what) const {
    return result == cu::CUDA_SUCCESS ? absl::OkStatus() : driver_->Error(result, what);
  }

 private:
  const CudaDriver* driver_;
  cu::CUdevice device_;
  cu::CUcontext context_;
};

namespace {

// Makes a context current on this thread for the scope, then restores the previous one.
class ScopedContext {
 public:
  explicit ScopedContext(const CudaContext& context) : context_(context) {
    status_ = context.Check(context.api().cuCtxPushCurrent_v2(context.get()), "cuCtxPushCurrent");
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  ~ScopedContext() {
    if (status_.ok()) {
      cu::CUcontext popped = nullptr;
      (void)context_.api().cuCtxPopCurrent_v2(&popped);
    }
  }
  const absl::Status& status() const { return status_; }

 private:
  const CudaContext& context_;
  absl::Status status_;
};

std::string Address(uint64_t a) { return StrCat("0x", Hex{a}); }

// Reads each attribute into its field with `read`; stops at the first error.
template <typename Attribute>
absl::Status ReadAttributes(std::initializer_list<std::pair<Attribute, int*>> fields,
                            absl::FunctionRef<absl::Status(int* out, Attribute attribute)> read) {
  for (const auto& [attribute, out] : fields) {
    if (absl::Status s = read(out, attribute); !s.ok()) return s;
  }
  return absl::OkStatus();
}
std::string Dims(const Dim3& d) { return StrCat(d.x, "x", d.y, "x", d.z); }

// The driver's verdict that an image itself is bad (not that loading failed
// for now: out of memory, a lost context...).
bool IsBadImage(cu::CUresult r) {
  return r == cu::CUDA_ERROR_INVALID_IMAGE || r == cu::CUDA_ERROR_NO_BINARY_FOR_GPU ||
         r == cu::CUDA_ERROR_INVALID_SOURCE;
}

}  // namespace

// A loaded module; unloaded (in its context) when the last kernel using it goes.
class CudaModule {
 public:
  CudaModule(std::shared_ptr<CudaContext> context, cu::CUmodule module, CodeSource source, std::string ptx,
             std::string info_log)
      : context_(std::move(context)), module_(module), source_(source), ptx_(std::move(ptx)),
        info_log_(std::move(info_log)) {}
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;
  ~CudaModule() {
    ScopedContext scope(*context_);
    (void)context_->api().cuModuleUnload(module_);
  }
  cu::CUmodule get() const { return module_; }
  CodeSource source() const { return source_; }
  const std::string& ptx() const { return ptx_; }
  const std::string& info_log() const { return info_log_; }

  // Raises `function`'s CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to at
  // least `bytes`, never lowering it: the attribute belongs to the CUfunction,
  // which every kernel loaded from this module under that name shares (the
  // memory cache shares modules, and cuModuleGetFunction gives one handle per
  // module and name). The context must be current.
  absl::Status RaiseMaxDynamicShared(cu::CUfunction function, int bytes, std::string_view kernel_name) {
    std::lock_guard<std::mutex> lock(mu_);
    int& set = max_dynamic_shared_[function];
    if (bytes <= set) return absl::OkStatus();
    if (absl::Status s = context_->Check(
            context_->api().cuFuncSetAttribute(function, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
            StrCat("cuFuncSetAttribute(", kernel_name, ", max dynamic shared memory ", bytes, " bytes)"));
        !s.ok()) {
      return s;
    }
    set = bytes;
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<CudaContext> context_;
  cu::CUmodule module_;
  CodeSource source_;
  std::string ptx_;
  std::string info_log_;
  std::mutex mu_;
  std::map<cu::CUfunction, int> max_dynamic_shared_;  // what RaiseMaxDynamicShared set, per function
};

std::string_view CodeSourceName(CodeSource source) {
  switch (source) {
    case CodeSource::kJit:
      return "jit";
    case CodeSource::kDiskCache:
      return "disk cache";
    case CodeSource::kMemoryCache:
      return "memory cache";
  }
  return "?";
}

// --- targets and PTX versions ----------------------------------------------

absl::StatusOr<ir::Target> NativeTargetFor(int cc_major, int cc_minor) {
  int sm = cc_major * 10 + cc_minor;
  std::optional<ir::Target> best;
  for (const ir::TargetInfo& info : ir::AllTargets()) {
    if (!info.arch_specific && info.sm <= sm) best = info.target;
  }
  if (!best) {
    return absl::FailedPreconditionError(StrCat("compute capability ", cc_major, ".", cc_minor,
                                                " is older than every target ptxforge supports (",
                                                ir::SupportedTargetList(), ")"));
  }
  return *best;
}

absl::Status CheckRunsOn(const ir::Kernel& kernel, int cc_major, int cc_minor, std::string_view device_name) {
  const ir::TargetInfo& info = ir::GetTargetInfo(kernel.target);
  int sm = cc_major * 10 + cc_minor;
  if (info.arch_specific ? info.sm != sm : info.sm > sm) {
    std::string message = StrCat("kernel ", kernel.name, " is built for ", info.name, ", but ", device_name,
                                 " has compute capability ", cc_major, ".", cc_minor);
    if (info.arch_specific) {
      StrAppend(&message, "; ", info.name, " code runs only on compute capability ", info.sm / 10, ".", info.sm % 10);
    }
    return absl::FailedPreconditionError(message);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<ir::PtxVersion>> ChoosePtxVersion(const ir::Kernel& kernel, int driver_version,
                                                               std::optional<ir::PtxVersion> pin) {
  std::optional<ir::PtxVersion> max = MaxPtxForDriver(driver_version);
  if (!max) {
    return absl::FailedPreconditionError(StrCat("the CUDA driver (", CudaVersionString(driver_version),
                                                ") is older than CUDA 10.0, the oldest ptxforge supports"));
  }
  ir::PtxVersion required = ir::RequiredPtxVersion(kernel.target, {&kernel});
  if (required > *max) {
    return absl::FailedPreconditionError(
        StrCat("kernel ", kernel.name, " needs PTX ISA ", required.ToString(), " (", ir::TargetName(kernel.target),
               "), but the CUDA driver (", CudaVersionString(driver_version), ") accepts PTX ISA up to ",
               max->ToString(), "; update the driver or build for an older target"));
  }
  if (pin) return std::min(*pin, *max);
  return std::optional<ir::PtxVersion>();
}

// --- streams and events ----------------------------------------------------

CudaHandle::CudaHandle(std::shared_ptr<CudaContext> context, Kind kind, void* handle)
    : context_(std::move(context)), kind_(kind), handle_(handle) {}
CudaHandle::CudaHandle(CudaHandle&& other) noexcept
    : context_(std::move(other.context_)), kind_(other.kind_), handle_(std::exchange(other.handle_, nullptr)) {}
CudaHandle& CudaHandle::operator=(CudaHandle&& other) noexcept {
  if (this != &other) {
    Reset();
    context_ = std::move(other.context_);
    kind_ = other.kind_;
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}
CudaHandle::~CudaHandle() { Reset(); }

void CudaHandle::Reset() {
  if (context_ != nullptr && handle_ != nullptr) {
    ScopedContext scope(*context_);
    if (kind_ == Kind::kStream) {
      (void)context_->api().cuStreamDestroy_v2(static_cast<cu::CUstream>(handle_));
    } else {
      (void)context_->api().cuEventDestroy_v2(static_cast<cu::CUevent>(handle_));
    }
  }
  context_.reset();
  handle_ = nullptr;
}

absl::Status CudaHandle::CheckNotEmpty(std::string_view what) const {
  if (context_ != nullptr && handle_ != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(
      StrCat(what, " on an empty ", kind_ == Kind::kStream ? "CudaStream" : "CudaEvent"));
}

absl::Status CudaHandle::InContext(std::string_view what,
                                   absl::FunctionRef<absl::Status(const CudaContext& context)> call) const {
  if (absl::Status s = CheckNotEmpty(what); !s.ok()) return s;
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  return call(*context_);
}

absl::Status CudaStream::Synchronize() const {
  return handle_.InContext("Synchronize", [&](const CudaContext& c) {
    return c.Check(c.api().cuStreamSynchronize(handle()), "cuStreamSynchronize");
  });
}

absl::Status CudaEvent::Record(const CudaStream* stream) const {
  if (stream != nullptr) {
    if (absl::Status s = stream->handle_.CheckNotEmpty("Record"); !s.ok()) return s;
  }
  return handle_.InContext("Record", [&](const CudaContext& c) {
    return c.Check(c.api().cuEventRecord(handle(), stream != nullptr ? stream->handle() : nullptr), "cuEventRecord");
  });
}

absl::Status CudaEvent::Synchronize() const {
  return handle_.InContext("Synchronize", [&](const CudaContext& c) {
    return c.Check(c.api().cuEventSynchronize(handle()), "cuEventSynchronize");
  });
}

absl::StatusOr<float> CudaEvent::ElapsedMs(const CudaEvent& start, const CudaEvent& end) {
  float ms = 0;
  absl::Status s = start.handle_.InContext("ElapsedMs", [&](const CudaContext& c) {
    if (absl::Status e = end.handle_.CheckNotEmpty("ElapsedMs"); !e.ok()) return e;
    // cuEventElapsedTime fails with CUDA_ERROR_NOT_READY while either event is
    // pending: wait for both (at once for an event never recorded).
    for (const CudaEvent* event : {&start, &end}) {
      if (absl::Status e = c.Check(c.api().cuEventSynchronize(event->handle()), "cuEventSynchronize"); !e.ok()) {
        return e;
      }
    }
    cu::CUresult r = c.api().cuEventElapsedTime_v2(&ms, start.handle(), end.handle());
    absl::Status status = c.Check(r, "cuEventElapsedTime");
    if (r == cu::CUDA_ERROR_INVALID_HANDLE) {  // what the driver says for an event never recorded
      return absl::Status(status.code(), ToAbsl(StrCat(status.message(), "; record both events before timing them")));
    }
    return status;
  });
  if (!s.ok()) return s;
  return ms;
}

// --- kernels ---------------------------------------------------------------

CudaKernel::CudaKernel(const ir::Kernel& kernel, const CudaDevice* device, std::shared_ptr<CudaModule> module,
                       cu::CUfunction function, const CudaFunctionAttributes& attributes, CodeSource source)
    : LoadedKernel(kernel, *device), device_(device), module_(std::move(module)), function_(function),
      attributes_(attributes), source_(source) {}
CudaKernel::~CudaKernel() = default;
const std::string& CudaKernel::info_log() const { return module_->info_log(); }
const std::string& CudaKernel::ptx() const { return module_->ptx(); }

// --- the device ------------------------------------------------------------

CudaDevice::CudaDevice(const CudaDriver* driver, std::shared_ptr<CudaContext> context,
                       CudaDeviceProperties properties, ir::Target native_target, CudaOptions options)
    : driver_(driver), context_(std::move(context)), properties_(std::move(properties)),
      native_target_(native_target), options_(std::move(options)) {
  std::optional<bool> environment = DiskCacheFromEnvironment();
  if (!environment.value_or(options_.cache.disk)) {
    disk_cache_status_ = environment.has_value()
                             ? StrCat("off: PTXFORGE_CACHE=", std::getenv("PTXFORGE_CACHE"))
                             : "off: the default (turn it on with CudaCacheOptions::disk or PTXFORGE_CACHE=on)";
    return;
  }
  // A directory others can write to is refused: the cache is off for this
  // device, and the status says why.
  absl::StatusOr<std::unique_ptr<DiskCache>> cache =
      DiskCache::Open(options_.cache.directory.empty() ? DefaultCacheDirectory() : options_.cache.directory);
  if (!cache.ok()) {
    disk_cache_status_ = StrCat("off: ", cache.status().message());
    return;
  }
  disk_cache_ = *std::move(cache);
  disk_cache_status_ = StrCat("on: ", disk_cache_->directory());
}

CudaDevice::~CudaDevice() {
  ScopedContext scope(*context_);
  for (const auto& [address, bytes] : allocations_) (void)context_->api().cuMemFree_v2(address);
}

std::string CudaDevice::name() const {
  return StrCat("CUDA device ", properties_.ordinal, " (", properties_.name, ")");
}

int CudaDevice::jit_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jit_count_;
}

absl::StatusOr<uint64_t> CudaDevice::Allocate(size_t bytes) {
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  cu::CUdeviceptr address = 0;
  // A zero-byte buffer still gets an address of its own.
  if (absl::Status s = context_->Check(context_->api().cuMemAlloc_v2(&address, std::max<size_t>(bytes, 1)),
                                       StrCat("cuMemAlloc(", bytes, " bytes) on ", name()));
      !s.ok()) {
    return s;
  }
  std::lock_guard<std::mutex> lock(mu_);
  allocations_[address] = bytes;
  return address;
}

absl::Status CudaDevice::Free(uint64_t address) {
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocations_.find(address);
    if (it == allocations_.end()) {
      return absl::InvalidArgumentError(StrCat("Free(", Address(address), "): not an allocation of ", name()));
    }
    bytes = it->second;
    allocations_.erase(it);  // no second Free of it meanwhile
  }
  absl::Status status;
  {
    ScopedContext scope(*context_);
    status = scope.status().ok() ? context_->Check(context_->api().cuMemFree_v2(address),
                                                   StrCat("cuMemFree(", Address(address), ")"))
                                 : scope.status();
  }
  if (!status.ok()) {
    // Still allocated: still tracked (usable, freed again later or with the device).
    std::lock_guard<std::mutex> lock(mu_);
    allocations_.emplace(address, bytes);
  }
  return status;
}

absl::Status CudaDevice::CheckRange(uint64_t address, size_t bytes, std::string_view what) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocations_.upper_bound(address);
  if (it != allocations_.begin()) {
    --it;
    if (address - it->first <= it->second && bytes <= it->second - (address - it->first)) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(StrCat(what, ": ", bytes, " bytes at ", Address(address),
                                           " are not inside one allocation of ", name()));
}

absl::Status CudaDevice::CopyToDevice(uint64_t dst, const void* src, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  if (absl::Status s = CheckRange(dst, bytes, "CopyToDevice"); !s.ok()) return s;
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  return context_->Check(context_->api().cuMemcpyHtoD_v2(dst, src, bytes),
                         StrCat("cuMemcpyHtoD(", bytes, " bytes to ", Address(dst), ")"));
}

absl::Status CudaDevice::CopyToHost(void* dst, uint64_t src, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  if (absl::Status s = CheckRange(src, bytes, "CopyToHost"); !s.ok()) return s;
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  return context_->Check(context_->api().cuMemcpyDtoH_v2(dst, src, bytes),
                         StrCat("cuMemcpyDtoH(", bytes, " bytes from ", Address(src), ")"));
}

absl::Status CudaDevice::CopyToDeviceAsync(const CudaStream& stream, uint64_t dst, const void* src, size_t bytes) {
  if (absl::Status s = stream.handle_.CheckNotEmpty("CopyToDeviceAsync"); !s.ok()) return s;
  if (bytes == 0) return absl::OkStatus();
  if (absl::Status s = CheckRange(dst, bytes, "CopyToDeviceAsync"); !s.ok()) return s;
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  return context_->Check(context_->api().cuMemcpyHtoDAsync_v2(dst, src, bytes, stream.handle()),
                         StrCat("cuMemcpyHtoDAsync(", bytes, " bytes to ", Address(dst), ")"));
}

absl::Status CudaDevice::CopyToHostAsync(const CudaStream& stream, void* dst, uint64_t src, size_t bytes) {
  if (absl::Status s = stream.handle_.CheckNotEmpty("CopyToHostAsync"); !s.ok()) return s;
  if (bytes == 0) return absl::OkStatus();
  if (absl::Status s = CheckRange(src, bytes, "CopyToHostAsync"); !s.ok()) return s;
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  return context_->Check(context_->api().cuMemcpyDtoHAsync_v2(dst, src, bytes, stream.handle()),
                         StrCat("cuMemcpyDtoHAsync(", bytes, " bytes from ", Address(src), ")"));
}

absl::Status CudaDevice::Synchronize() {
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  return context_->Check(context_->api().cuCtxSynchronize(), StrCat("cuCtxSynchronize on ", name()));
}

absl::StatusOr<std::pair<size_t, size_t>> CudaDevice::MemoryInfo() const {
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  size_t free = 0, total = 0;
  if (absl::Status s = context_->Check(context_->api().cuMemGetInfo_v2(&free, &total), "cuMemGetInfo"); !s.ok()) {
    return s;
  }
  return std::make_pair(free, total);
}

absl::StatusOr<CudaStream> CudaDevice::CreateStream() {
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  cu::CUstream stream = nullptr;
  if (absl::Status s = context_->Check(context_->api().cuStreamCreate(&stream, cu::CU_STREAM_DEFAULT),
                                       "cuStreamCreate");
      !s.ok()) {
    return s;
  }
  return CudaStream(CudaHandle(context_, CudaHandle::Kind::kStream, stream));
}

absl::StatusOr<CudaEvent> CudaDevice::CreateEvent() {
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  cu::CUevent event = nullptr;
  if (absl::Status s = context_->Check(context_->api().cuEventCreate(&event, cu::CU_EVENT_DEFAULT), "cuEventCreate");
      !s.ok()) {
    return s;
  }
  return CudaEvent(CudaHandle(context_, CudaHandle::Kind::kEvent, event));
}

// --- loading ---------------------------------------------------------------

absl::StatusOr<std::string> CudaDevice::PtxFor(const ir::Kernel& kernel) const {
  if (absl::Status s = CheckRunsOn(kernel, properties_.cc_major, properties_.cc_minor, name()); !s.ok()) return s;
  absl::StatusOr<std::optional<ir::PtxVersion>> version =
      ChoosePtxVersion(kernel, properties_.driver_version, options_.ptx_version);
  if (!version.ok()) return version.status();
  return emit::PrintPtx(kernel, *version);
}

absl::StatusOr<std::shared_ptr<CudaModule>> CudaDevice::JitModule(const std::string& kernel_name,
                                                                   const std::string& ptx) {
  const cu::CudaDriverApi& api = context_->api();
  cu::CUmodule module = nullptr;
  JitLogs logs;
  cu::CUresult r = RunJit(
      options_.jit,
      [&](JitOptionArrays& arrays) {
        if (module != nullptr) (void)api.cuModuleUnload(std::exchange(module, nullptr));  // a retry
        return api.cuModuleLoadDataEx(&module, ptx.c_str(), arrays.count(), arrays.options(), arrays.values());
      },
      logs);
  if (r != cu::CUDA_SUCCESS) {
    return WithCudaErrorHint(
        JitFailure(StatusCodeFor(r), "cuModuleLoadDataEx", kernel_name, driver_->ErrorText(r), logs, ptx), r);
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++jit_count_;
  return std::make_shared<CudaModule>(context_, module, CodeSource::kJit, ptx, logs.info);
}

absl::StatusOr<std::string> CudaDevice::LinkCubin(const std::string& kernel_name, const std::string& ptx,
                                                  JitLogs& logs) {
  const cu::CudaDriverApi& api = context_->api();
  std::string cubin;
  std::string failed_api;
  cu::CUresult r = RunJit(
      options_.jit,
      [&](JitOptionArrays& arrays) {
        cu::CUlinkState state = nullptr;
        failed_api = "cuLinkCreate";
        cu::CUresult result = api.cuLinkCreate_v2(arrays.count(), arrays.options(), arrays.values(), &state);
        if (result != cu::CUDA_SUCCESS) return result;
        failed_api = "cuLinkAddData";
        result = api.cuLinkAddData_v2(state, cu::CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1,
                                       kernel_name.c_str(), 0, nullptr, nullptr);
        if (result == cu::CUDA_SUCCESS) {
          failed_api = "cuLinkComplete";
          void* image = nullptr;
          size_t size = 0;
          result = api.cuLinkComplete(state, &image, &size);
          if (result == cu::CUDA_SUCCESS) cubin.assign(static_cast<const char*>(image), size);
        }
        (void)api.cuLinkDestroy(state);
        return result;
      },
      logs);
  if (r != cu::CUDA_SUCCESS) {
    return WithCudaErrorHint(
        JitFailure(StatusCodeFor(r), failed_api, kernel_name, driver_->ErrorText(r), logs, ptx), r);
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++jit_count_;
  return cubin;
}

absl::StatusOr<std::shared_ptr<CudaModule>> CudaDevice::LoadCubin(const std::string& kernel_name,
                                                                  const std::string& ptx, const std::string& cubin,
                                                                  CodeSource source, std::string info_log,
                                                                  cu::CUresult* result) {
  cu::CUmodule module = nullptr;
  cu::CUresult r = context_->api().cuModuleLoadDataEx(&module, cubin.data(), 0, nullptr, nullptr);
  if (result != nullptr) *result = r;
  if (absl::Status s = context_->Check(r, StrCat("cuModuleLoadDataEx (cubin of kernel ", kernel_name, ")"));
      !s.ok()) {
    return s;
  }
  return std::make_shared<CudaModule>(context_, module, source, ptx, std::move(info_log));
}

absl::StatusOr<std::shared_ptr<CudaModule>> CudaDevice::BuildModule(const std::string& kernel_name,
                                                                    const std::string& ptx, const CacheKey& key) {
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  if (disk_cache_ == nullptr) return JitModule(kernel_name, ptx);

  DiskCache::Lookup found = disk_cache_->Find(key);
  if (found.state == DiskCache::State::kHit) {
    cu::CUresult r = cu::CUDA_SUCCESS;
    absl::StatusOr<std::shared_ptr<CudaModule>> module =
        LoadCubin(kernel_name, ptx, found.payload, CodeSource::kDiskCache, std::string(), &r);
    if (module.ok()) return module;
    // Out of memory, a lost context...: the entry is likely fine, keep it.
    if (!IsBadImage(r)) return module.status();
    // The driver refused the cached cubin itself: drop it and build a new one.
    disk_cache_->Drop(key);
  }
  JitLogs logs;
  absl::StatusOr<std::string> cubin = LinkCubin(kernel_name, ptx, logs);
  if (!cubin.ok()) return cubin.status();
  (void)disk_cache_->Store(key, *cubin);  // best effort: a cache that cannot be written is only slower
  return LoadCubin(kernel_name, ptx, *cubin, CodeSource::kJit, logs.info);
}

absl::StatusOr<std::unique_ptr<LoadedKernel>> CudaDevice::Load(const ir::Kernel& kernel) {
  absl::StatusOr<std::string> ptx = PtxFor(kernel);
  if (!ptx.ok()) return ptx.status();
  CacheKey key = CacheKey::For(*ptx, properties_.cc_major, properties_.cc_minor, properties_.driver_version,
                               options_.jit.Fingerprint());
  auto build = [&] { return BuildModule(kernel.name, *ptx, key); };
  bool built = true;
  absl::StatusOr<std::shared_ptr<CudaModule>> module =
      options_.cache.memory ? modules_.GetOrCreate(key.Id(), build, &built) : build();
  if (!module.ok()) return module.status();

  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  const cu::CudaDriverApi& api = context_->api();
  cu::CUfunction function = nullptr;
  if (absl::Status s = context_->Check(api.cuModuleGetFunction(&function, (*module)->get(), kernel.name.c_str()),
                                       StrCat("cuModuleGetFunction(", kernel.name, ")"));
      !s.ok()) {
    return s;
  }
  CudaFunctionAttributes a;
  if (absl::Status s = ReadAttributes<cu::CUfunction_attribute>(
          {{cu::CU_FUNC_ATTRIBUTE_NUM_REGS, &a.num_regs},
           {cu::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &a.local_bytes},
           {cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &a.shared_bytes},
           {cu::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &a.const_bytes},
           {cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &a.max_threads_per_block},
           {cu::CU_FUNC_ATTRIBUTE_PTX_VERSION, &a.ptx_version},
           {cu::CU_FUNC_ATTRIBUTE_BINARY_VERSION, &a.binary_version}},
          [&](int* out, cu::CUfunction_attribute attribute) {
            return context_->Check(api.cuFuncGetAttribute(out, attribute, function),
                                   StrCat("cuFuncGetAttribute(", kernel.name, ", ", static_cast<int>(attribute), ")"));
          });
      !s.ok()) {
    return s;
  }
  CodeSource source = built ? (*module)->source() : CodeSource::kMemoryCache;
  return std::unique_ptr<LoadedKernel>(new CudaKernel(kernel, this, *module, function, a, source));
}

// --- launching -------------------------------------------------------------

absl::StatusOr<CudaKernel*> CudaDevice::OwnKernel(const LoadedKernel& kernel, std::string_view what) const {
  if (absl::Status s = CheckOwnKernel(kernel, what); !s.ok()) return s;
  return static_cast<CudaKernel*>(const_cast<LoadedKernel*>(&kernel));  // loaded here, so a CudaKernel
}

absl::Status CudaDevice::PrepareDynamicShared(CudaKernel& k, size_t bytes) const {
  const CudaFunctionAttributes& a = k.attributes();
  int optin_limit = properties_.max_shared_per_block_optin - a.shared_bytes;
  if (bytes > static_cast<size_t>(std::max(optin_limit, 0))) {
    return absl::InvalidArgumentError(StrCat("kernel ", k.name(), ": ", bytes, " bytes of dynamic shared memory, but ",
                                             name(), " allows at most ", optin_limit, " beside the kernel's ",
                                             a.shared_bytes, " static bytes"));
  }
  int dynamic = static_cast<int>(bytes);
  if (dynamic + a.shared_bytes <= properties_.max_shared_per_block) return absl::OkStatus();
  return k.module_->RaiseMaxDynamicShared(k.function(), dynamic, k.name());
}

absl::StatusOr<int> CudaDevice::MaxActiveBlocksPerSm(const LoadedKernel& kernel, int block_threads,
                                                     size_t dynamic_shared_bytes) const {
  absl::StatusOr<CudaKernel*> cuda = OwnKernel(kernel, "MaxActiveBlocksPerSm");
  if (!cuda.ok()) return cuda.status();
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  // Opted in first, as for a launch: the driver counts 0 blocks for more than the function allows.
  if (absl::Status s = PrepareDynamicShared(**cuda, dynamic_shared_bytes); !s.ok()) return s;
  int blocks = 0;
  if (absl::Status s = context_->Check(
          context_->api().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (*cuda)->function(), block_threads,
                                                                      dynamic_shared_bytes),
          StrCat("cuOccupancyMaxActiveBlocksPerMultiprocessor(", kernel.name(), ", ", block_threads, " threads)"));
      !s.ok()) {
    return s;
  }
  return blocks;
}

absl::Status CudaDevice::DoLaunch(LoadedKernel& kernel, const LaunchConfig& config, std::span<const KernelArg> args) {
  return LaunchChecked(nullptr, kernel, config, args);
}

absl::Status CudaDevice::LaunchOn(const CudaStream& stream, LoadedKernel& kernel, const LaunchConfig& config,
                                  std::span<const KernelArg> args) {
  if (absl::Status s = stream.handle_.CheckNotEmpty(StrCat("LaunchOn(", kernel.name(), ")")); !s.ok()) return s;
  if (absl::Status s = CheckLaunchConfig(kernel, config); !s.ok()) return s;
  if (absl::Status s = CheckArgs(kernel, args); !s.ok()) return s;
  return LaunchChecked(stream.handle(), kernel, config, args);
}

absl::Status CudaDevice::LaunchChecked(cu::CUstream stream, LoadedKernel& kernel, const LaunchConfig& config,
                                       std::span<const KernelArg> args) {
  absl::StatusOr<CudaKernel*> cuda = OwnKernel(kernel, "Launch");
  if (!cuda.ok()) return cuda.status();
  CudaKernel& k = **cuda;
  const CudaFunctionAttributes& a = k.attributes();
  if (config.block.count() > static_cast<uint64_t>(a.max_threads_per_block)) {
    return absl::InvalidArgumentError(StrCat("kernel ", k.name(), ": block ", Dims(config.block), " has ",
                                             config.block.count(), " threads, but the compiled kernel allows at most ",
                                             a.max_threads_per_block, " (it uses ", a.num_regs,
                                             " registers per thread)"));
  }
  ScopedContext scope(*context_);
  if (!scope.status().ok()) return scope.status();
  if (absl::Status s = PrepareDynamicShared(k, config.dynamic_shared_bytes); !s.ok()) return s;
  std::vector<uint64_t> values(args.size());
  std::vector<void*> pointers(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    values[i] = args[i].bits;  // the driver copies each param's size from the start (little-endian)
    pointers[i] = &values[i];
  }
  return context_->Check(
      context_->api().cuLaunchKernel(k.function(), config.grid.x, config.grid.y, config.grid.z, config.block.x,
                                     config.block.y, config.block.z, config.dynamic_shared_bytes, stream,
                                     pointers.empty() ? nullptr : pointers.data(), nullptr),
      StrCat("cuLaunchKernel(", k.name(), ", grid ", Dims(config.grid), ", block ", Dims(config.block), ")"));
}

// --- opening ---------------------------------------------------------------

absl::StatusOr<std::unique_ptr<CudaDevice>> OpenCudaDevice(int ordinal, CudaOptions options) {
  if (absl::Status s = options.jit.Validate(); !s.ok()) return s;
  absl::StatusOr<const CudaDriver*> loaded = CudaDriver::Load(options.libcuda_path);
  if (!loaded.ok()) return loaded.status();
  const CudaDriver& driver = **loaded;
  const cu::CudaDriverApi& api = driver.api();
  if (absl::Status s = driver.Init(); !s.ok()) return s;
  absl::StatusOr<int> version = driver.Version();
  if (!version.ok()) return version.status();

  int count = 0;
  if (cu::CUresult r = api.cuDeviceGetCount(&count); r != cu::CUDA_SUCCESS) {
    return driver.Error(r, "cuDeviceGetCount");
  }
  if (count == 0) {
    return absl::FailedPreconditionError(StrCat("no CUDA device: the driver ", driver.path(), " (CUDA ",
                                                CudaVersionString(*version), ") found none"));
  }
  if (ordinal < 0 || ordinal >= count) {
    return absl::InvalidArgumentError(StrCat("CUDA device ", ordinal, " does not exist (", count,
                                             count == 1 ? " device: 0" : StrCat(" devices: 0..", count - 1), ")"));
  }
  cu::CUdevice device = 0;
  if (cu::CUresult r = api.cuDeviceGet(&device, ordinal); r != cu::CUDA_SUCCESS) {
    return driver.Error(r, StrCat("cuDeviceGet(", ordinal, ")"));
  }
  CudaDeviceProperties p;
  p.ordinal = ordinal;
  p.driver_version = *version;
  char name[256] = {};
  if (cu::CUresult r = api.cuDeviceGetName(name, sizeof(name) - 1, device); r != cu::CUDA_SUCCESS) {
    return driver.Error(r, "cuDeviceGetName");
  }
  p.name = name;
  if (cu::CUresult r = api.cuDeviceTotalMem_v2(&p.total_memory, device); r != cu::CUDA_SUCCESS) {
    return driver.Error(r, "cuDeviceTotalMem");
  }
  if (absl::Status s = ReadAttributes<cu::CUdevice_attribute>(
          {{cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &p.cc_major},
           {cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &p.cc_minor},
           {cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &p.sm_count},
           {cu::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &p.max_threads_per_block},
           {cu::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &p.max_threads_per_sm},
           {cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &p.max_shared_per_block},
           {cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &p.max_shared_per_block_optin},
           {cu::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &p.registers_per_block},
           {cu::CU_DEVICE_ATTRIBUTE_WARP_SIZE, &p.warp_size},
           {cu::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &p.l2_cache_bytes}},
          [&](int* out, cu::CUdevice_attribute attribute) {
            cu::CUresult r = api.cuDeviceGetAttribute(out, attribute, device);
            return r == cu::CUDA_SUCCESS
                       ? absl::OkStatus()
                       : driver.Error(r, StrCat("cuDeviceGetAttribute(", static_cast<int>(attribute), ")"));
          });
      !s.ok()) {
    return s;
  }
  absl::StatusOr<ir::Target> native = NativeTargetFor(p.cc_major, p.cc_minor);
  if (!native.ok()) {
    return absl::FailedPreconditionError(
        StrCat("CUDA device ", ordinal, " (", p.name, "): ", native.status().message()));
  }
  cu::CUcontext context = nullptr;
  if (cu::CUresult r = api.cuDevicePrimaryCtxRetain(&context, device); r != cu::CUDA_SUCCESS) {
    return driver.Error(r, StrCat("cuDevicePrimaryCtxRetain(device ", ordinal, ")"));
  }
  auto owner = std::make_shared<CudaContext>(&driver, device, context);
  return std::unique_ptr<CudaDevice>(new CudaDevice(&driver, std::move(owner), std::move(p), *native,
                                                    std::move(options)));
}

}  // namespace ptxforge::runtime
