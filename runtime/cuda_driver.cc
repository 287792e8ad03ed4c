// Opening libcuda with dlopen, resolving its entry points, and naming its errors.
#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "ir/strings.h"

namespace ptxforge::runtime {

std::optional<std::string_view> KnownCudaErrorName(int code) {
  switch (code) {
#define PTXFORGE_CU_NAME_CASE(name, value) \
  case value:                              \
    return std::string_view(#name);
    PTXFORGE_CU_RESULTS(PTXFORGE_CU_NAME_CASE)
#undef PTXFORGE_CU_NAME_CASE
  }
  return std::nullopt;
}

std::string_view CudaErrorHint(cu::CUresult result) {
  switch (result) {
    case cu::CUDA_ERROR_ILLEGAL_ADDRESS:
    case cu::CUDA_ERROR_HARDWARE_STACK_ERROR:
    case cu::CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case cu::CUDA_ERROR_MISALIGNED_ADDRESS:
    case cu::CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case cu::CUDA_ERROR_INVALID_PC:
    case cu::CUDA_ERROR_LAUNCH_FAILED:
      return "an earlier kernel launch faulted; the context is unusable until the process restarts";
    case cu::CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
      return "the driver's PTX JIT compiler library (libnvidia-ptxjitcompiler.so.1) is missing; install it with "
             "the NVIDIA driver";
    default:
      return "";
  }
}

absl::Status WithCudaErrorHint(absl::Status status, cu::CUresult result) {
  std::string_view hint = CudaErrorHint(result);
  if (hint.empty() || status.ok()) return status;
  return absl::Status(status.code(), ToAbsl(StrCat(status.message(), "; ", hint)));
}

std::string ResolveLibcudaPath(std::string_view path) {
  if (!path.empty()) return std::string(path);
  if (const char* env = std::getenv("PTXFORGE_LIBCUDA"); env != nullptr && *env != '\0') return env;
  return "libcuda.so.1";
}

std::string CudaVersionString(int version) { return StrCat(version / 1000, ".", version % 1000 / 10); }

std::optional<ir::PtxVersion> MaxPtxForDriver(int driver_version) {
  // The first driver of each CUDA release and the PTX ISA it introduced
  // (the PTX ISA release history), newest first. CUDA 12.6 kept PTX 8.5.
  struct Row {
    int driver;
    int ptx;
  };
  static constexpr Row kRows[] = {
      {13000, 90}, {12090, 88}, {12080, 87}, {12070, 86}, {12050, 85}, {12040, 84}, {12030, 83},
      {12020, 82}, {12010, 81}, {12000, 80}, {11080, 78}, {11070, 77}, {11060, 76}, {11050, 75},
      {11040, 74}, {11030, 73}, {11020, 72}, {11010, 71}, {11000, 70}, {10020, 65}, {10010, 64},
      {10000, 63},
  };
  for (const Row& row : kRows) {
    if (driver_version >= row.driver) return std::min(ir::PtxVersion{row.ptx}, ir::MaxPtxVersion());
  }
  return std::nullopt;
}

absl::StatusCode StatusCodeFor(cu::CUresult result) {
  switch (result) {
    case cu::CUDA_SUCCESS:
      return absl::StatusCode::kOk;
    case cu::CUDA_ERROR_OUT_OF_MEMORY:
    case cu::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return absl::StatusCode::kResourceExhausted;
    case cu::CUDA_ERROR_INVALID_VALUE:
    case cu::CUDA_ERROR_INVALID_PTX:
    case cu::CUDA_ERROR_INVALID_IMAGE:
    case cu::CUDA_ERROR_INVALID_SOURCE:
    case cu::CUDA_ERROR_INVALID_HANDLE:
      return absl::StatusCode::kInvalidArgument;
    case cu::CUDA_ERROR_NOT_FOUND:
    case cu::CUDA_ERROR_FILE_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case cu::CUDA_ERROR_NO_DEVICE:
    case cu::CUDA_ERROR_STUB_LIBRARY:
    case cu::CUDA_ERROR_NOT_INITIALIZED:
    case cu::CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case cu::CUDA_ERROR_NO_BINARY_FOR_GPU:
    case cu::CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case cu::CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case cu::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case cu::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case cu::CUDA_ERROR_NOT_READY:  // the work is not done yet
      return absl::StatusCode::kFailedPrecondition;
    case cu::CUDA_ERROR_DEVICE_UNAVAILABLE:
    case cu::CUDA_ERROR_SYSTEM_NOT_READY:
      return absl::StatusCode::kUnavailable;
    case cu::CUDA_ERROR_NOT_PERMITTED:
      return absl::StatusCode::kPermissionDenied;
    case cu::CUDA_ERROR_NOT_SUPPORTED:
      return absl::StatusCode::kUnimplemented;
    default:
      return absl::StatusCode::kInternal;
  }
}

namespace {

// The entry point `symbol`, or (for the few whose newest version a driver may
// predate) its previous version with the same signature.
void* Resolve(void* handle, const char* symbol) {
  static constexpr std::pair<std::string_view, const char*> kPrevious[] = {
      {"cuEventElapsedTime_v2", "cuEventElapsedTime"},                // _v2 since CUDA 12.8
      {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},  // _v2 since CUDA 11.0
  };
  if (void* p = dlsym(handle, symbol)) return p;
  for (const auto& [name, previous] : kPrevious) {
    if (name == symbol) {
      if (void* p = dlsym(handle, previous)) return p;
      (void)dlsym(handle, symbol);  // report the current name in dlerror()
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<const CudaDriver*> CudaDriver::Load(std::string_view requested_path) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, std::unique_ptr<CudaDriver>, std::less<>>();
  std::string path = ResolveLibcudaPath(requested_path);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded->find(path); it != loaded->end()) return it->second.get();

  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        StrCat("CUDA driver not found (", path, "): ", why != nullptr ? why : "dlopen failed"));
  }
  cu::CudaDriverApi api;
#define PTXFORGE_CUDA_RESOLVE(symbol, type)                                                       \
  api.symbol = reinterpret_cast<decltype(api.symbol)>(Resolve(handle, #symbol));                  \
  if (api.symbol == nullptr) {                                                                    \
    const char* error = dlerror();                                                                \
    std::string why = error != nullptr ? error : "";                                              \
    dlclose(handle);                                                                              \
    return absl::FailedPreconditionError(                                                         \
        StrCat(path, " is not a usable CUDA driver: it lacks ", #symbol, " (", why, ")"));         \
  }
  PTXFORGE_CUDA_FUNCTIONS(PTXFORGE_CUDA_RESOLVE)
#undef PTXFORGE_CUDA_RESOLVE
  auto driver = std::unique_ptr<CudaDriver>(new CudaDriver(path, handle, api));
  const CudaDriver* result = driver.get();
  loaded->emplace(path, std::move(driver));
  return result;
}

absl::Status CudaDriver::Init() const {
  cu::CUresult r = api_.cuInit(0);
  if (r == cu::CUDA_SUCCESS) return absl::OkStatus();
  if (r == cu::CUDA_ERROR_STUB_LIBRARY) {
    return absl::FailedPreconditionError(
        StrCat("CUDA driver at ", path_, " is the CUDA toolkit's stub library, not a driver (cuInit: ",
               ErrorText(r), "); install the NVIDIA driver, or take the toolkit's stubs directory "
               "off LD_LIBRARY_PATH"));
  }
  return Error(r, StrCat("cuInit (", path_, ")"));
}

absl::StatusOr<int> CudaDriver::Version() const {
  int version = 0;
  if (cu::CUresult r = api_.cuDriverGetVersion(&version); r != cu::CUDA_SUCCESS) {
    return Error(r, "cuDriverGetVersion");
  }
  return version;
}

std::string CudaDriver::ErrorText(cu::CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_.cuGetErrorName(result, &name) != cu::CUDA_SUCCESS) name = nullptr;
  if (api_.cuGetErrorString(result, &text) != cu::CUDA_SUCCESS) text = nullptr;
  std::string out;
  if (name != nullptr) {
    out = name;
  } else if (std::optional<std::string_view> known = KnownCudaErrorName(result)) {
    out = std::string(*known);
  } else {
    out = StrCat("CUresult ", static_cast<int>(result));
  }
  if (text != nullptr) StrAppend(&out, " (", text, ")");
  return out;
}

absl::Status CudaDriver::Error(cu::CUresult result, std::string_view what) const {
  return WithCudaErrorHint(absl::Status(StatusCodeFor(result), ToAbsl(StrCat(what, " failed: ", ErrorText(result)))),
                           result);
}

}  // namespace ptxforge::runtime
