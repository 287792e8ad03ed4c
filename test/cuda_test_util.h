// Helpers of the CUDA runtime tests: status text, temporary directories, the fake libcuda's controls.
#ifndef PTXFORGE_TEST_CUDA_TEST_UTIL_H_
#define PTXFORGE_TEST_CUDA_TEST_UTIL_H_

#include <dlfcn.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "test/test_util.h"

namespace ptxforge::cuda_testing {

using ::ptxforge::testing::Msg;  // "OK" or the status message

// The tests choose the disk cache themselves: the caller's PTXFORGE_CACHE and
// PTXFORGE_CACHE_DIR are cleared as a test program starts.
inline const bool kCacheEnvironmentCleared = [] {
  unsetenv("PTXFORGE_CACHE");
  unsetenv("PTXFORGE_CACHE_DIR");
  return true;
}();

// A fresh directory under $TMPDIR or /tmp, removed with its contents at scope end.
class TempDir {
 public:
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/ptxforge-test-XXXXXX";
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets an environment variable for the scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFileText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

#ifdef PTXFORGE_FAKE_LIBCUDA
// The controls of test/cuda_fake_driver.cc, found in the same loaded library
// that CudaDriver::Load(path) uses (by default PTXFORGE_FAKE_LIBCUDA).
class FakeCuda {
 public:
  static constexpr const char* kPath = PTXFORGE_FAKE_LIBCUDA;
  explicit FakeCuda(const char* path = kPath) : handle_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
    reset_ = reinterpret_cast<void (*)()>(Sym("FakeCudaReset"));
    set_ = reinterpret_cast<void (*)(const char*, int)>(Sym("FakeCudaSet"));
    get_ = reinterpret_cast<int (*)(const char*)>(Sym("FakeCudaGet"));
    set_log_ = reinterpret_cast<void (*)(const char*, const char*)>(Sym("FakeCudaSetLog"));
    last_launch_ = reinterpret_cast<int (*)(unsigned*, uint64_t*, int)>(Sym("FakeCudaLastLaunch"));
    reset_();
  }
  void Set(const char* key, int value) { set_(key, value); }
  int Get(const char* key) { return get_(key); }
  void SetLog(const char* which, const std::string& text) { set_log_(which, text.c_str()); }
  // Grid xyz, block xyz, shared bytes in `dims`; returns the param count.
  int LastLaunch(unsigned* dims, uint64_t* params, int max_params) { return last_launch_(dims, params, max_params); }

 private:
  void* Sym(const char* name) {
    void* p = handle_ != nullptr ? dlsym(handle_, name) : nullptr;
    if (p == nullptr) std::abort();  // the test build is broken, not the code under test
    return p;
  }
  void* handle_;
  void (*reset_)();
  void (*set_)(const char*, int);
  int (*get_)(const char*);
  void (*set_log_)(const char*, const char*);
  int (*last_launch_)(unsigned*, uint64_t*, int);
};
#endif

}  // namespace ptxforge::cuda_testing

#endif  // PTXFORGE_TEST_CUDA_TEST_UTIL_H_
