// The CUDA Driver API, opened at run time with dlopen (no cuda.h, no libcuda at link time).
//
//   absl::StatusOr<const CudaDriver*> driver = CudaDriver::Load();  // libcuda.so.1
//   if (absl::Status s = (*driver)->Init(); !s.ok()) ...             // cuInit(0)
//   cu::CUresult r = (*driver)->api().cuMemAlloc_v2(&ptr, bytes);
//   if (r != cu::CUDA_SUCCESS) return (*driver)->Error(r, "cuMemAlloc(64 bytes)");
//
// Only the types, enum values and entry points ptxforge uses are declared
// here, in namespace cu, under the driver's own names. Entry points are the
// ABI symbols that cuda.h maps its names to (cuMemAlloc -> cuMemAlloc_v2), so
// each one is the current version of its function. When the toolkit's cuda.h
// is present, test/cuda_abi_check.cc checks every declaration against it at
// build time.
#ifndef PTXFORGE_RUNTIME_CUDA_DRIVER_H_
#define PTXFORGE_RUNTIME_CUDA_DRIVER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/target.h"

namespace ptxforge::runtime {
namespace cu {

using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT: the driver's exact type
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUlinkState_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUlinkState = CUlinkState_st*;

// X(name, value): the CUresult codes ptxforge names itself (when the driver
// cannot, as the toolkit's stub library cannot).
#define PTXFORGE_CU_RESULTS(X)                   \
  X(CUDA_SUCCESS, 0)                             \
  X(CUDA_ERROR_INVALID_VALUE, 1)                 \
  X(CUDA_ERROR_OUT_OF_MEMORY, 2)                 \
  X(CUDA_ERROR_NOT_INITIALIZED, 3)               \
  X(CUDA_ERROR_DEINITIALIZED, 4)                 \
  X(CUDA_ERROR_STUB_LIBRARY, 34)                 \
  X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)           \
  X(CUDA_ERROR_NO_DEVICE, 100)                   \
  X(CUDA_ERROR_INVALID_DEVICE, 101)              \
  X(CUDA_ERROR_INVALID_IMAGE, 200)               \
  X(CUDA_ERROR_INVALID_CONTEXT, 201)             \
  X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)           \
  X(CUDA_ERROR_INVALID_PTX, 218)                 \
  X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)      \
  X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)     \
  X(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223)    \
  X(CUDA_ERROR_INVALID_SOURCE, 300)              \
  X(CUDA_ERROR_FILE_NOT_FOUND, 301)              \
  X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303)   \
  X(CUDA_ERROR_OPERATING_SYSTEM, 304)            \
  X(CUDA_ERROR_INVALID_HANDLE, 400)              \
  X(CUDA_ERROR_NOT_FOUND, 500)                   \
  X(CUDA_ERROR_NOT_READY, 600)                   \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)             \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)     \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)              \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)        \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)         \
  X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)          \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)       \
  X(CUDA_ERROR_INVALID_PC, 718)                  \
  X(CUDA_ERROR_LAUNCH_FAILED, 719)               \
  X(CUDA_ERROR_NOT_PERMITTED, 800)               \
  X(CUDA_ERROR_NOT_SUPPORTED, 801)               \
  X(CUDA_ERROR_SYSTEM_NOT_READY, 802)            \
  X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)      \
  X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804) \
  X(CUDA_ERROR_UNKNOWN, 999)

// X(name, value): JIT options (CUjit_option).
#define PTXFORGE_CU_JIT_OPTIONS(X)             \
  X(CU_JIT_MAX_REGISTERS, 0)                   \
  X(CU_JIT_WALL_TIME, 2)                       \
  X(CU_JIT_INFO_LOG_BUFFER, 3)                 \
  X(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4)      \
  X(CU_JIT_ERROR_LOG_BUFFER, 5)                \
  X(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)     \
  X(CU_JIT_OPTIMIZATION_LEVEL, 7)              \
  X(CU_JIT_TARGET_FROM_CUCONTEXT, 8)           \
  X(CU_JIT_GENERATE_DEBUG_INFO, 11)            \
  X(CU_JIT_LOG_VERBOSE, 12)                    \
  X(CU_JIT_GENERATE_LINE_INFO, 13)

// X(name, value): linker inputs (CUjitInputType).
#define PTXFORGE_CU_JIT_INPUT_TYPES(X) \
  X(CU_JIT_INPUT_CUBIN, 0)             \
  X(CU_JIT_INPUT_PTX, 1)

// X(name, value): device attributes (CUdevice_attribute).
#define PTXFORGE_CU_DEVICE_ATTRIBUTES(X)                     \
  X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)            \
  X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8)      \
  X(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10)                       \
  X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 12)         \
  X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)            \
  X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38)                   \
  X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 39)  \
  X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)        \
  X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)        \
  X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97)

// X(name, value): function attributes (CUfunction_attribute).
#define PTXFORGE_CU_FUNCTION_ATTRIBUTES(X)                \
  X(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0)           \
  X(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1)               \
  X(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, 2)                \
  X(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 3)                \
  X(CU_FUNC_ATTRIBUTE_NUM_REGS, 4)                        \
  X(CU_FUNC_ATTRIBUTE_PTX_VERSION, 5)                     \
  X(CU_FUNC_ATTRIBUTE_BINARY_VERSION, 6)                  \
  X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)

#define PTXFORGE_CU_ENUMERATOR(name, value) name = value,
enum CUresult : int { PTXFORGE_CU_RESULTS(PTXFORGE_CU_ENUMERATOR) };
enum CUjit_option : int { PTXFORGE_CU_JIT_OPTIONS(PTXFORGE_CU_ENUMERATOR) };
enum CUjitInputType : int { PTXFORGE_CU_JIT_INPUT_TYPES(PTXFORGE_CU_ENUMERATOR) };
enum CUdevice_attribute : int { PTXFORGE_CU_DEVICE_ATTRIBUTES(PTXFORGE_CU_ENUMERATOR) };
enum CUfunction_attribute : int { PTXFORGE_CU_FUNCTION_ATTRIBUTES(PTXFORGE_CU_ENUMERATOR) };
#undef PTXFORGE_CU_ENUMERATOR

inline constexpr unsigned int CU_STREAM_DEFAULT = 0x0;
inline constexpr unsigned int CU_EVENT_DEFAULT = 0x0;

// X(symbol, function type): every entry point, by the ABI symbol cuda.h
// binds its name to. All are required; two fall back to their previous
// version (the same type) on drivers that predate them, so that every driver
// from CUDA 10.0 on loads: cuEventElapsedTime_v2 to cuEventElapsedTime
// (before CUDA 12.8) and cuDevicePrimaryCtxRelease_v2 to
// cuDevicePrimaryCtxRelease (before CUDA 11.0).
#define PTXFORGE_CUDA_FUNCTIONS(X)                                                                          \
  X(cuGetErrorName, CUresult(CUresult, const char**))                                                       \
  X(cuGetErrorString, CUresult(CUresult, const char**))                                                     \
  X(cuInit, CUresult(unsigned int))                                                                         \
  X(cuDriverGetVersion, CUresult(int*))                                                                     \
  X(cuDeviceGetCount, CUresult(int*))                                                                       \
  X(cuDeviceGet, CUresult(CUdevice*, int))                                                                  \
  X(cuDeviceGetName, CUresult(char*, int, CUdevice))                                                        \
  X(cuDeviceGetAttribute, CUresult(int*, CUdevice_attribute, CUdevice))                                     \
  X(cuDeviceTotalMem_v2, CUresult(size_t*, CUdevice))                                                       \
  X(cuDevicePrimaryCtxRetain, CUresult(CUcontext*, CUdevice))                                               \
  X(cuDevicePrimaryCtxRelease_v2, CUresult(CUdevice))                                                       \
  X(cuCtxPushCurrent_v2, CUresult(CUcontext))                                                               \
  X(cuCtxPopCurrent_v2, CUresult(CUcontext*))                                                               \
  X(cuCtxSynchronize, CUresult())                                                                           \
  X(cuMemGetInfo_v2, CUresult(size_t*, size_t*))                                                            \
  X(cuMemAlloc_v2, CUresult(CUdeviceptr*, size_t))                                                          \
  X(cuMemFree_v2, CUresult(CUdeviceptr))                                                                    \
  X(cuMemcpyHtoD_v2, CUresult(CUdeviceptr, const void*, size_t))                                            \
  X(cuMemcpyDtoH_v2, CUresult(void*, CUdeviceptr, size_t))                                                  \
  X(cuMemcpyHtoDAsync_v2, CUresult(CUdeviceptr, const void*, size_t, CUstream))                             \
  X(cuMemcpyDtoHAsync_v2, CUresult(void*, CUdeviceptr, size_t, CUstream))                                   \
  X(cuModuleLoadDataEx, CUresult(CUmodule*, const void*, unsigned int, CUjit_option*, void**))              \
  X(cuModuleUnload, CUresult(CUmodule))                                                                     \
  X(cuModuleGetFunction, CUresult(CUfunction*, CUmodule, const char*))                                      \
  X(cuLinkCreate_v2, CUresult(unsigned int, CUjit_option*, void**, CUlinkState*))                           \
  X(cuLinkAddData_v2, CUresult(CUlinkState, CUjitInputType, void*, size_t, const char*, unsigned int,       \
                               CUjit_option*, void**))                                                      \
  X(cuLinkComplete, CUresult(CUlinkState, void**, size_t*))                                                 \
  X(cuLinkDestroy, CUresult(CUlinkState))                                                                   \
  X(cuFuncGetAttribute, CUresult(int*, CUfunction_attribute, CUfunction))                                   \
  X(cuFuncSetAttribute, CUresult(CUfunction, CUfunction_attribute, int))                                    \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, CUresult(int*, CUfunction, int, size_t))                   \
  X(cuLaunchKernel, CUresult(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,           \
                             unsigned int, unsigned int, unsigned int, CUstream, void**, void**))           \
  X(cuStreamCreate, CUresult(CUstream*, unsigned int))                                                      \
  X(cuStreamDestroy_v2, CUresult(CUstream))                                                                 \
  X(cuStreamSynchronize, CUresult(CUstream))                                                                \
  X(cuEventCreate, CUresult(CUevent*, unsigned int))                                                        \
  X(cuEventDestroy_v2, CUresult(CUevent))                                                                   \
  X(cuEventRecord, CUresult(CUevent, CUstream))                                                             \
  X(cuEventSynchronize, CUresult(CUevent))                                                                  \
  X(cuEventElapsedTime_v2, CUresult(float*, CUevent, CUevent))

// The resolved entry points.
struct CudaDriverApi {
#define PTXFORGE_CUDA_MEMBER(symbol, type) std::add_pointer_t<type> symbol = nullptr;
  PTXFORGE_CUDA_FUNCTIONS(PTXFORGE_CUDA_MEMBER)
#undef PTXFORGE_CUDA_MEMBER
};

}  // namespace cu

// "CUDA_ERROR_INVALID_PTX" for the codes in PTXFORGE_CU_RESULTS; nullopt otherwise.
std::optional<std::string_view> KnownCudaErrorName(int code);

// What to do about an error whose cause is not the call that returns it, or
// "" for the others:
//  - the sticky errors of a kernel that faulted (CUDA_ERROR_ILLEGAL_ADDRESS,
//    _HARDWARE_STACK_ERROR, _ILLEGAL_INSTRUCTION, _MISALIGNED_ADDRESS,
//    _INVALID_ADDRESS_SPACE, _INVALID_PC, _LAUNCH_FAILED): launches are
//    asynchronous, so the fault surfaces at a later call, and every call in
//    the context returns it from then on;
//  - CUDA_ERROR_JIT_COMPILER_NOT_FOUND: the driver's JIT library is missing.
std::string_view CudaErrorHint(cu::CUresult result);
// `status` with "; <CudaErrorHint(result)>" appended, when there is a hint.
absl::Status WithCudaErrorHint(absl::Status status, cu::CUresult result);

// The library to open: `path` if not empty, else $PTXFORGE_LIBCUDA if set,
// else "libcuda.so.1".
std::string ResolveLibcudaPath(std::string_view path = {});

// "12.8" for 12080 (cuDriverGetVersion's encoding).
std::string CudaVersionString(int version);

// The newest PTX ISA version a driver of `driver_version` (cuDriverGetVersion)
// loads, never above the newest one ptxforge prints. nullopt for drivers
// older than CUDA 10.0.
std::optional<ir::PtxVersion> MaxPtxForDriver(int driver_version);

// A loaded CUDA driver. Loaded once per library path for the life of the
// process (never closed: the driver must outlive every object it made).
class CudaDriver {
 public:
  // Opens the library (see ResolveLibcudaPath) and resolves every entry point.
  // Errors:
  //   "CUDA driver not found (libcuda.so.1): <dlerror>"
  //   "<path> is not a usable CUDA driver: it lacks cuXxx (<dlerror>)"
  static absl::StatusOr<const CudaDriver*> Load(std::string_view path = {});

  // cuInit(0); safe to call more than once. The toolkit's stub library fails
  // here with its own message ("... is the CUDA toolkit's stub library ...").
  absl::Status Init() const;
  // cuDriverGetVersion (12080 for CUDA 12.8).
  absl::StatusOr<int> Version() const;

  const std::string& path() const { return path_; }
  const cu::CudaDriverApi& api() const { return api_; }

  // "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)": the driver's
  // name and description of `result`, from ptxforge's own table when the
  // driver cannot say.
  std::string ErrorText(cu::CUresult result) const;
  // "<what> failed: <ErrorText>[; <CudaErrorHint>]", as a status whose code
  // fits the result.
  absl::Status Error(cu::CUresult result, std::string_view what) const;

 private:
  CudaDriver(std::string path, void* handle, const cu::CudaDriverApi& api)
      : path_(std::move(path)), handle_(handle), api_(api) {}

  std::string path_;
  void* handle_ = nullptr;
  cu::CudaDriverApi api_;
};

// The status code for a driver result (OUT_OF_MEMORY -> kResourceExhausted, ...).
absl::StatusCode StatusCodeFor(cu::CUresult result);

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_CUDA_DRIVER_H_
