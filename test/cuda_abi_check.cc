// Build-time check: runtime/cuda_driver.h's declarations match the CUDA toolkit's cuda.h.
//
// Compiled only when cuda.h is found (test/cuda.cmake), against it and
// against a copy made to look like CUDA 12.6's (no cuEventElapsedTime_v2).
// Every enum value and every entry point's type is compared; a mismatch fails
// the build.
#include "runtime/cuda_driver.h"

#include <cuda.h>

#include <type_traits>

#if CUDA_VERSION < 12080
// cuda.h before CUDA 12.8 has no cuEventElapsedTime_v2; the driver then
// resolves cuEventElapsedTime (runtime/cuda_driver.cc), whose type is the
// same, so the check compares against that.
extern "C" decltype(::cuEventElapsedTime) cuEventElapsedTime_v2;
#endif

namespace {

namespace cu = ::ptxforge::runtime::cu;

// Maps a cuda.h type to the type ptxforge declares for it.
template <typename T>
struct Mine {
  using type = T;
};
template <typename T>
struct Mine<T*> {
  using type = typename Mine<T>::type*;
};
template <typename T>
struct Mine<const T> {
  using type = const typename Mine<T>::type;
};
template <typename R, typename... A>
struct Mine<R(A...)> {
  using type = typename Mine<R>::type(typename Mine<A>::type...);
};
template <> struct Mine<::CUresult> { using type = cu::CUresult; };
template <> struct Mine<::CUjit_option> { using type = cu::CUjit_option; };
template <> struct Mine<::CUjitInputType> { using type = cu::CUjitInputType; };
template <> struct Mine<::CUdevice_attribute> { using type = cu::CUdevice_attribute; };
template <> struct Mine<::CUfunction_attribute> { using type = cu::CUfunction_attribute; };
template <> struct Mine<::CUctx_st> { using type = cu::CUctx_st; };
template <> struct Mine<::CUmod_st> { using type = cu::CUmod_st; };
template <> struct Mine<::CUfunc_st> { using type = cu::CUfunc_st; };
template <> struct Mine<::CUstream_st> { using type = cu::CUstream_st; };
template <> struct Mine<::CUevent_st> { using type = cu::CUevent_st; };
template <> struct Mine<::CUlinkState_st> { using type = cu::CUlinkState_st; };

static_assert(std::is_same_v<cu::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<cu::CUdeviceptr, ::CUdeviceptr>);
static_assert(sizeof(cu::CUresult) == sizeof(::CUresult));
static_assert(sizeof(cu::CUjit_option) == sizeof(::CUjit_option));
static_assert(sizeof(cu::CUjitInputType) == sizeof(::CUjitInputType));
static_assert(sizeof(cu::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(cu::CUfunction_attribute) == sizeof(::CUfunction_attribute));
static_assert(cu::CU_STREAM_DEFAULT == ::CU_STREAM_DEFAULT);
static_assert(cu::CU_EVENT_DEFAULT == ::CU_EVENT_DEFAULT);

#define PTXFORGE_CHECK_ENUMERATOR(name, value) \
  static_assert(static_cast<int>(cu::name) == static_cast<int>(::name) && (value) == static_cast<int>(::name), \
                #name " differs from cuda.h");
PTXFORGE_CU_RESULTS(PTXFORGE_CHECK_ENUMERATOR)
PTXFORGE_CU_JIT_OPTIONS(PTXFORGE_CHECK_ENUMERATOR)
PTXFORGE_CU_JIT_INPUT_TYPES(PTXFORGE_CHECK_ENUMERATOR)
PTXFORGE_CU_DEVICE_ATTRIBUTES(PTXFORGE_CHECK_ENUMERATOR)
PTXFORGE_CU_FUNCTION_ATTRIBUTES(PTXFORGE_CHECK_ENUMERATOR)
#undef PTXFORGE_CHECK_ENUMERATOR

}  // namespace

// Inside namespace cu, so the declared types name ptxforge's own.
namespace ptxforge::runtime::cu {
#define PTXFORGE_CHECK_FUNCTION(symbol, fn_type)                                       \
  static_assert(std::is_same_v<typename Mine<decltype(::symbol)>::type, fn_type>,      \
                #symbol " has another type in cuda.h");                                \
  static_assert(std::is_same_v<decltype(CudaDriverApi::symbol), std::add_pointer_t<fn_type>>);
PTXFORGE_CUDA_FUNCTIONS(PTXFORGE_CHECK_FUNCTION)
#undef PTXFORGE_CHECK_FUNCTION
}  // namespace ptxforge::runtime::cu
