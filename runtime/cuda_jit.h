// JIT options for the CUDA driver, marshalled with log buffers that grow until the logs fit.
#ifndef PTXFORGE_RUNTIME_CUDA_JIT_H_
#define PTXFORGE_RUNTIME_CUDA_JIT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda_driver.h"

namespace ptxforge::runtime {

// What the driver's JIT is asked for. The target is always the current
// context's device (CU_JIT_TARGET_FROM_CUCONTEXT).
struct JitOptions {
  int optimization_level = 4;  // CU_JIT_OPTIMIZATION_LEVEL, 0..4
  int max_registers = 0;       // CU_JIT_MAX_REGISTERS per thread; 0: no limit
  bool generate_line_info = false;  // CU_JIT_GENERATE_LINE_INFO
  bool verbose_log = false;         // CU_JIT_LOG_VERBOSE (ptxas statistics in the info log)

  // "optimization_level 7 is outside 0..4", ...
  absl::Status Validate() const;
  // "O4-r0-l0": the options that change the compiled code, for cache keys
  // (not verbose_log, which only fills the info log).
  std::string Fingerprint() const;
};

// The logs of one JIT, whole.
struct JitLogs {
  std::string info;
  std::string error;
  float wall_time_ms = 0;  // CU_JIT_WALL_TIME of the last attempt
  int attempts = 0;        // 1, or more when a log did not fit its buffer
};

// The option arrays for one JIT call: the options of `JitOptions`, the
// context's target, the wall time, and info/error log buffers of `log_bytes`
// each. The arrays stay valid while this object lives.
class JitOptionArrays {
 public:
  JitOptionArrays(const JitOptions& options, size_t log_bytes);
  JitOptionArrays(const JitOptionArrays&) = delete;
  JitOptionArrays& operator=(const JitOptionArrays&) = delete;

  unsigned int count() const { return static_cast<unsigned int>(options_.size()); }
  cu::CUjit_option* options() { return options_.data(); }
  void** values() { return values_.data(); }

  // After the call: the logs as the driver filled them, and whether either
  // filled its whole buffer (and so may have been cut).
  std::string InfoLog() const { return Log(info_, info_size_index_); }
  std::string ErrorLog() const { return Log(error_, error_size_index_); }
  bool LogsMayBeCut() const;
  float WallTimeMs() const;

 private:
  size_t Filled(const std::vector<char>& buffer, size_t size_index) const;
  std::string Log(const std::vector<char>& buffer, size_t size_index) const;

  std::vector<cu::CUjit_option> options_;
  std::vector<void*> values_;
  std::vector<char> info_;
  std::vector<char> error_;
  size_t info_size_index_ = 0;
  size_t error_size_index_ = 0;
  size_t wall_time_index_ = 0;
};

inline constexpr size_t kInitialJitLogBytes = size_t{16} << 10;
inline constexpr size_t kMaxJitLogBytes = size_t{64} << 20;

// One JIT (a cuModuleLoadDataEx, or a whole cuLink* sequence) given the
// option arrays. Called again, with larger buffers, when a log did not fit;
// a retry must release what the previous call made.
using JitCall = absl::FunctionRef<cu::CUresult(JitOptionArrays& arrays)>;

// Runs `call` and fills `logs`. While a log filled its buffer, grows both
// buffers fourfold (up to kMaxJitLogBytes) and calls again.
cu::CUresult RunJit(const JitOptions& options, JitCall call, JitLogs& logs,
                    size_t initial_log_bytes = kInitialJitLogBytes);

// Writes `ptx` to a new file "<$TMPDIR or /tmp>/ptxforge-<kernel>-XXXXXX.ptx"
// and returns its path.
absl::StatusOr<std::string> WritePtxForDiagnosis(std::string_view kernel_name, std::string_view ptx);

// The error for a failed JIT, with the PTX written to a file:
// "<api> failed for kernel <kernel>: <error_text>: <error log>; PTX written to <path>".
absl::Status JitFailure(absl::StatusCode code, std::string_view api, std::string_view kernel_name,
                        std::string_view error_text, const JitLogs& logs, std::string_view ptx);

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_CUDA_JIT_H_
