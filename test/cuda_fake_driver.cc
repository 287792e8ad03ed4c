// A fake libcuda for tests without a GPU: host memory, scripted JIT results, recorded launches.
//
// Exports every entry point runtime/cuda_driver.h resolves, plus FakeCuda*
// control functions the tests find with dlsym on the same library. "Cubins"
// are the text "FAKECUBIN\n" followed by the PTX they came from. A launch
// after FakeCudaSet("fault_next_launch", code) succeeds, then every later
// launch, copy and synchronisation returns `code`, as after a kernel fault. Built with
// PTXFORGE_FAKE_CUDA_12_0 it is a CUDA 12.0 driver, which predates
// cuEventElapsedTime_v2 and exports cuEventElapsedTime instead; built with
// PTXFORGE_FAKE_CUDA_10_2 it is a CUDA 10.2 driver, which also predates
// cuDevicePrimaryCtxRelease_v2 and exports cuDevicePrimaryCtxRelease.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda_driver.h"

#if defined(PTXFORGE_FAKE_CUDA_10_2)
#define PTXFORGE_FAKE_DRIVER_VERSION 10020
#elif defined(PTXFORGE_FAKE_CUDA_12_0)
#define PTXFORGE_FAKE_DRIVER_VERSION 12000
#else
#define PTXFORGE_FAKE_DRIVER_VERSION 12040
#endif

namespace {

using namespace ptxforge::runtime::cu;  // NOLINT: the fake mirrors the driver's names

constexpr int kStaticShared = 1024;         // every function's CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
constexpr int kMaxSharedPerBlock = 48 << 10;  // without opting in
constexpr int kMaxSharedOptin = 99 << 10;

struct FakeFunction {
  std::string name;
  int params;
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: what a launch may use.
  int max_dynamic_shared = kMaxSharedPerBlock - kStaticShared;
};
struct FakeModule {
  std::string text;  // the PTX
  // As the driver: one handle per name, for the life of the module.
  std::map<std::string, std::unique_ptr<FakeFunction>> functions;
};
// An event: never recorded, recorded (on `stream`) but not yet complete, or
// complete. Work is done at once, but an event completes only when something
// waits for it (the event, its stream, or the context), so that code which
// reads a pending event is caught.
struct FakeEvent {
  enum { kUnrecorded, kPending, kComplete } state = kUnrecorded;
  CUstream stream = nullptr;
};
struct FakeLink {
  std::vector<CUjit_option> options;
  std::vector<void*> values;
  void** caller_values;  // where the size/wall-time results go back
  std::string ptx;
  std::string cubin;
};

struct State {
  std::map<std::string, int> ints;
  std::string error_log, info_log;
  std::set<void*> allocations;
  std::set<FakeEvent*> events;
  std::vector<uint64_t> last_params;
  unsigned last_dims[7] = {};
};

std::mutex mu;
State& S() {
  static State* s = new State();
  return *s;
}
thread_local int context_depth = 0;

int Int(const char* key) { return S().ints[key]; }

void ResetLocked() {
  State& s = S();
  for (void* p : s.allocations) std::free(p);
  s = State();
  s.ints = {{"init_result", 0}, {"device_count", 1}, {"driver_version", PTXFORGE_FAKE_DRIVER_VERSION},
            {"cc_major", 8}, {"cc_minor", 6}, {"jit_fail", 0}, {"num_regs", 16}, {"max_threads", 1024},
            {"stream_flags", -1}};
}

// Writes `log` into the buffer named by the option arrays, as the driver does:
// at most size-1 bytes and a terminator; the size slot gets the bytes written.
void WriteLog(unsigned n, const CUjit_option* options, void** values, CUjit_option buffer_option,
              CUjit_option size_option, const std::string& log) {
  char* buffer = nullptr;
  size_t size_index = n;
  for (unsigned i = 0; i < n; ++i) {
    if (options[i] == buffer_option) buffer = static_cast<char*>(values[i]);
    if (options[i] == size_option) size_index = i;
  }
  if (buffer == nullptr || size_index == n) return;
  size_t capacity = static_cast<unsigned>(reinterpret_cast<uintptr_t>(values[size_index]));
  if (capacity == 0) return;
  size_t written = std::min(log.size(), capacity - 1);
  std::memcpy(buffer, log.data(), written);
  buffer[written] = '\0';
  values[size_index] = reinterpret_cast<void*>(static_cast<uintptr_t>(written));
}

// Runs the scripted JIT: fails with jit_fail (and the error log) or succeeds (with the info log).
CUresult Jit(unsigned n, const CUjit_option* options, void** values) {
  State& s = S();
  for (unsigned i = 0; i < n; ++i) {
    if (options[i] == CU_JIT_WALL_TIME) {
      float ms = 1.5f;
      values[i] = nullptr;
      std::memcpy(&values[i], &ms, sizeof(ms));
    }
  }
  WriteLog(n, options, values, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, s.info_log);
  if (s.ints["jit_fail"] != 0) {
    WriteLog(n, options, values, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, s.error_log);
    return static_cast<CUresult>(s.ints["jit_fail"]);
  }
  WriteLog(n, options, values, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, "");
  return CUDA_SUCCESS;
}

// The errors the fake names, as the driver does (the others it cannot name).
struct ErrorInfo {
  CUresult code;
  const char* name;
  const char* text;
};
#define PTXFORGE_FAKE_ERROR(code, text) {code, #code, text}
constexpr ErrorInfo kErrors[] = {
    PTXFORGE_FAKE_ERROR(CUDA_SUCCESS, "no error"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler library not found"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_NOT_READY, "device not ready"),
    PTXFORGE_FAKE_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
};
#undef PTXFORGE_FAKE_ERROR
const ErrorInfo* FindError(CUresult code) {
  for (const ErrorInfo& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

// The sticky error of a faulted launch ("fault_next_launch"), which every
// later call that touches the context returns; CUDA_SUCCESS before a fault.
CUresult Sticky() {
  std::lock_guard<std::mutex> lock(mu);
  return static_cast<CUresult>(S().ints["sticky_error"]);
}

// Completes the events recorded on `stream` (every event when `all`).
void CompleteEvents(CUstream stream, bool all) {
  for (FakeEvent* e : S().events) {
    if (e->state == FakeEvent::kPending && (all || e->stream == stream)) e->state = FakeEvent::kComplete;
  }
}

}  // namespace

extern "C" {

// --- control ---------------------------------------------------------------

void FakeCudaReset() {
  std::lock_guard<std::mutex> lock(mu);
  ResetLocked();
}
void FakeCudaSet(const char* key, int value) {
  std::lock_guard<std::mutex> lock(mu);
  S().ints[key] = value;
}
int FakeCudaGet(const char* key) {
  std::lock_guard<std::mutex> lock(mu);
  if (std::strcmp(key, "live_allocations") == 0) return static_cast<int>(S().allocations.size());
  if (std::strcmp(key, "context_depth") == 0) return context_depth;
  return S().ints[key];
}
void FakeCudaSetLog(const char* which, const char* text) {
  std::lock_guard<std::mutex> lock(mu);
  (std::strcmp(which, "error") == 0 ? S().error_log : S().info_log) = text;
}
// The last launch: dims = grid xyz, block xyz, shared bytes; returns the param count.
int FakeCudaLastLaunch(unsigned* dims, uint64_t* params, int max_params) {
  std::lock_guard<std::mutex> lock(mu);
  std::memcpy(dims, S().last_dims, sizeof(S().last_dims));
  int n = static_cast<int>(S().last_params.size());
  for (int i = 0; i < n && i < max_params; ++i) params[i] = S().last_params[i];
  return n;
}

// --- the driver ------------------------------------------------------------

CUresult cuGetErrorName(CUresult error, const char** out) {
  const ErrorInfo* e = FindError(error);
  if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = e->name;
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult error, const char** out) {
  const ErrorInfo* e = FindError(error);
  if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = e->text;
  return CUDA_SUCCESS;
}
CUresult cuInit(unsigned int) {
  std::lock_guard<std::mutex> lock(mu);
  if (S().ints.empty()) ResetLocked();
  return static_cast<CUresult>(Int("init_result"));
}
CUresult cuDriverGetVersion(int* version) {
  std::lock_guard<std::mutex> lock(mu);
  *version = Int("driver_version");
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int* count) {
  std::lock_guard<std::mutex> lock(mu);
  *count = Int("device_count");
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "ptxforge fake GPU", static_cast<size_t>(len));
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
  std::lock_guard<std::mutex> lock(mu);
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = kMaxSharedPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 40; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 4 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 1536; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = Int("cc_major"); break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = Int("cc_minor"); break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = kMaxSharedOptin; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) {
  *bytes = size_t{8} << 30;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice) {
  std::lock_guard<std::mutex> lock(mu);
  ++S().ints["retains"];
  *context = reinterpret_cast<CUcontext>(0x1000);
  return CUDA_SUCCESS;
}
#if defined(PTXFORGE_FAKE_CUDA_10_2)  // before CUDA 11.0
CUresult cuDevicePrimaryCtxRelease(CUdevice) {
#else
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) {
#endif
  std::lock_guard<std::mutex> lock(mu);
  --S().ints["retains"];
  return CUDA_SUCCESS;
}
CUresult cuCtxPushCurrent_v2(CUcontext) {
  ++context_depth;
  return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent_v2(CUcontext* context) {
  --context_depth;
  if (context != nullptr) *context = reinterpret_cast<CUcontext>(0x1000);
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() {
  if (context_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (CUresult r = Sticky(); r != CUDA_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(mu);
  CompleteEvents(nullptr, /*all=*/true);
  return CUDA_SUCCESS;
}
CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  *free = size_t{6} << 30;
  *total = size_t{8} << 30;
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr* address, size_t bytes) {
  if (context_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > (size_t{1} << 32)) return CUDA_ERROR_OUT_OF_MEMORY;
  void* p = std::calloc(1, bytes);
  std::lock_guard<std::mutex> lock(mu);
  S().allocations.insert(p);
  *address = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr address) {
  std::lock_guard<std::mutex> lock(mu);
  // "fail_next_free": the next free fails with that result, and frees nothing.
  if (CUresult r = static_cast<CUresult>(std::exchange(S().ints["fail_next_free"], 0)); r != CUDA_SUCCESS) return r;
  void* p = reinterpret_cast<void*>(address);
  if (S().allocations.erase(p) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(p);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) {
  if (CUresult r = Sticky(); r != CUDA_SUCCESS) return r;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) {
  if (CUresult r = Sticky(); r != CUDA_SUCCESS) return r;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream) {
  return cuMemcpyHtoD_v2(dst, src, bytes);
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream) {
  return cuMemcpyDtoH_v2(dst, src, bytes);
}
CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int n, CUjit_option* options,
                            void** values) {
  std::lock_guard<std::mutex> lock(mu);
  const char* text = static_cast<const char*>(image);
  if (std::strncmp(text, "FAKECUBIN\n", 10) == 0) {
    // "fail_next_cubin_load": the next cubin load fails with that result.
    if (CUresult r = static_cast<CUresult>(std::exchange(S().ints["fail_next_cubin_load"], 0)); r != CUDA_SUCCESS) {
      return r;
    }
    ++S().ints["cubin_loads"];
    *module = reinterpret_cast<CUmodule>(new FakeModule{text + 10});
    return CUDA_SUCCESS;
  }
  if (std::strstr(text, ".version") == nullptr) return CUDA_ERROR_INVALID_IMAGE;
  ++S().ints["ptx_jits"];
  if (CUresult r = Jit(n, options, values); r != CUDA_SUCCESS) return r;
  *module = reinterpret_cast<CUmodule>(new FakeModule{text});
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule module) {
  std::lock_guard<std::mutex> lock(mu);
  ++S().ints["unloads"];
  delete reinterpret_cast<FakeModule*>(module);
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  auto* m = reinterpret_cast<FakeModule*>(module);
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<FakeFunction>& f = m->functions[name];
  if (f == nullptr) {
    std::string entry = std::string(".entry ") + name + "(";
    size_t at = m->text.find(entry);
    if (at == std::string::npos) {
      m->functions.erase(name);
      return CUDA_ERROR_NOT_FOUND;
    }
    size_t end = m->text.find(')', at);
    int params = 0;
    for (size_t p = m->text.find(".param", at); p < end; p = m->text.find(".param", p + 1)) ++params;
    f = std::make_unique<FakeFunction>(FakeFunction{name, params});
  }
  *function = reinterpret_cast<CUfunction>(f.get());
  return CUDA_SUCCESS;
}
CUresult cuLinkCreate_v2(unsigned int n, CUjit_option* options, void** values, CUlinkState* state) {
  auto* link = new FakeLink{std::vector<CUjit_option>(options, options + n), std::vector<void*>(values, values + n),
                            values, "", ""};
  *state = reinterpret_cast<CUlinkState>(link);
  return CUDA_SUCCESS;
}
CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char*,
                          unsigned int, CUjit_option*, void**) {
  auto* link = reinterpret_cast<FakeLink*>(state);
  if (type != CU_JIT_INPUT_PTX || size == 0) return CUDA_ERROR_INVALID_VALUE;
  link->ptx.assign(static_cast<const char*>(data), size - 1);
  std::lock_guard<std::mutex> lock(mu);
  // The driver writes the logs into the buffers given to cuLinkCreate.
  return Jit(static_cast<unsigned>(link->options.size()), link->options.data(), link->caller_values);
}
CUresult cuLinkComplete(CUlinkState state, void** cubin, size_t* size) {
  auto* link = reinterpret_cast<FakeLink*>(state);
  std::lock_guard<std::mutex> lock(mu);
  ++S().ints["links"];
  link->cubin = "FAKECUBIN\n" + link->ptx;
  *cubin = link->cubin.data();
  *size = link->cubin.size();
  return CUDA_SUCCESS;
}
CUresult cuLinkDestroy(CUlinkState state) {
  delete reinterpret_cast<FakeLink*>(state);
  return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction function) {
  std::lock_guard<std::mutex> lock(mu);
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = Int("num_regs"); break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = Int("max_threads"); break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = kStaticShared; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *value = reinterpret_cast<FakeFunction*>(function)->max_dynamic_shared;
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *value = 70; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = Int("cc_major") * 10 + Int("cc_minor"); break;
    default: *value = 0; break;
  }
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  std::lock_guard<std::mutex> lock(mu);
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_INVALID_VALUE;
  if (value < 0 || value + kStaticShared > kMaxSharedOptin) return CUDA_ERROR_INVALID_VALUE;
  reinterpret_cast<FakeFunction*>(function)->max_dynamic_shared = value;  // the function's, whoever set it
  S().ints["max_dynamic_shared"] = value;  // the last value set
  ++S().ints["max_dynamic_shared_sets"];
  return CUDA_SUCCESS;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction function, int block_size,
                                                     size_t dynamic_shared) {
  if (block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mu);
  // As the driver: no block fits with more dynamic shared memory than the function allows.
  bool fits = dynamic_shared <= static_cast<size_t>(reinterpret_cast<FakeFunction*>(function)->max_dynamic_shared);
  *blocks = fits ? std::min(32, 1536 / block_size) : 0;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction function, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shared, CUstream, void** params, void**) {
  if (context_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  auto* f = reinterpret_cast<FakeFunction*>(function);
  std::lock_guard<std::mutex> lock(mu);
  State& s = S();
  if (s.ints["sticky_error"] != 0) return static_cast<CUresult>(s.ints["sticky_error"]);
  // As the driver: more dynamic shared memory than the function allows fails the launch.
  if (static_cast<int>(shared) > f->max_dynamic_shared) return CUDA_ERROR_INVALID_VALUE;
  // The kernel faults as it runs: the launch itself succeeds, later calls fail.
  s.ints["sticky_error"] = std::exchange(s.ints["fault_next_launch"], 0);
  ++s.ints["launches"];
  unsigned dims[7] = {gx, gy, gz, bx, by, bz, shared};
  std::memcpy(s.last_dims, dims, sizeof(dims));
  s.last_params.assign(static_cast<size_t>(f->params), 0);
  for (int i = 0; i < f->params; ++i) std::memcpy(&s.last_params[i], params[i], sizeof(uint64_t));
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  *stream = reinterpret_cast<CUstream>(new int(0));
  std::lock_guard<std::mutex> lock(mu);
  ++S().ints["live_streams"];
  S().ints["stream_flags"] = static_cast<int>(flags);  // the last stream's
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream stream) {
  delete reinterpret_cast<int*>(stream);
  std::lock_guard<std::mutex> lock(mu);
  --S().ints["live_streams"];
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream stream) {
  std::lock_guard<std::mutex> lock(mu);
  CompleteEvents(stream, /*all=*/stream == nullptr);  // the legacy NULL stream waits for every stream
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent* event, unsigned int) {
  auto* e = new FakeEvent();
  *event = reinterpret_cast<CUevent>(e);
  std::lock_guard<std::mutex> lock(mu);
  S().events.insert(e);
  ++S().ints["live_events"];
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent event) {
  auto* e = reinterpret_cast<FakeEvent*>(event);
  std::lock_guard<std::mutex> lock(mu);
  S().events.erase(e);
  delete e;
  --S().ints["live_events"];
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent event, CUstream stream) {
  std::lock_guard<std::mutex> lock(mu);
  *reinterpret_cast<FakeEvent*>(event) = FakeEvent{FakeEvent::kPending, stream};
  return CUDA_SUCCESS;
}
// As the driver: success at once for an event that was never recorded.
CUresult cuEventSynchronize(CUevent event) {
  std::lock_guard<std::mutex> lock(mu);
  auto* e = reinterpret_cast<FakeEvent*>(event);
  if (e->state == FakeEvent::kPending) e->state = FakeEvent::kComplete;
  return CUDA_SUCCESS;
}
#if defined(PTXFORGE_FAKE_CUDA_12_0) || defined(PTXFORGE_FAKE_CUDA_10_2)  // before CUDA 12.8
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
#else
CUresult cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
#endif
  // As the driver: INVALID_HANDLE when either was never recorded, NOT_READY while either is pending.
  std::lock_guard<std::mutex> lock(mu);
  auto* a = reinterpret_cast<FakeEvent*>(start);
  auto* b = reinterpret_cast<FakeEvent*>(end);
  if (a->state == FakeEvent::kUnrecorded || b->state == FakeEvent::kUnrecorded) return CUDA_ERROR_INVALID_HANDLE;
  if (a->state == FakeEvent::kPending || b->state == FakeEvent::kPending) return CUDA_ERROR_NOT_READY;
  *ms = 0.25f;
  return CUDA_SUCCESS;
}

}  // extern "C"
