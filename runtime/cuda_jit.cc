// JIT option marshalling, log capture with retries, and JIT failure messages.
#include "runtime/cuda_jit.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ir/strings.h"

namespace ptxforge::runtime {
namespace {

void* AsOptionValue(uintptr_t v) { return reinterpret_cast<void*>(v); }

}  // namespace

absl::Status JitOptions::Validate() const {
  if (optimization_level < 0 || optimization_level > 4) {
    return absl::InvalidArgumentError(StrCat("JIT optimization_level ", optimization_level, " is outside 0..4"));
  }
  if (max_registers < 0 || max_registers > 255) {
    return absl::InvalidArgumentError(
        StrCat("JIT max_registers ", max_registers, " is outside 0..255 (0: no limit)"));
  }
  return absl::OkStatus();
}

std::string JitOptions::Fingerprint() const {
  return StrCat("O", optimization_level, "-r", max_registers, "-l", generate_line_info ? 1 : 0);
}

JitOptionArrays::JitOptionArrays(const JitOptions& o, size_t log_bytes) : info_(log_bytes, 0), error_(log_bytes, 0) {
  auto add = [&](cu::CUjit_option option, void* value) {
    options_.push_back(option);
    values_.push_back(value);
    return values_.size() - 1;
  };
  add(cu::CU_JIT_TARGET_FROM_CUCONTEXT, nullptr);
  add(cu::CU_JIT_OPTIMIZATION_LEVEL, AsOptionValue(static_cast<unsigned int>(o.optimization_level)));
  if (o.max_registers > 0) add(cu::CU_JIT_MAX_REGISTERS, AsOptionValue(static_cast<unsigned int>(o.max_registers)));
  if (o.generate_line_info) add(cu::CU_JIT_GENERATE_LINE_INFO, AsOptionValue(1));
  if (o.verbose_log) add(cu::CU_JIT_LOG_VERBOSE, AsOptionValue(1));
  wall_time_index_ = add(cu::CU_JIT_WALL_TIME, nullptr);
  add(cu::CU_JIT_INFO_LOG_BUFFER, info_.data());
  info_size_index_ = add(cu::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, AsOptionValue(static_cast<unsigned int>(log_bytes)));
  add(cu::CU_JIT_ERROR_LOG_BUFFER, error_.data());
  error_size_index_ = add(cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, AsOptionValue(static_cast<unsigned int>(log_bytes)));
}

size_t JitOptionArrays::Filled(const std::vector<char>& buffer, size_t size_index) const {
  // The driver overwrites the size option with the bytes it wrote; never
  // trust it beyond the buffer or the terminator.
  size_t reported = static_cast<unsigned int>(reinterpret_cast<uintptr_t>(values_[size_index]));
  size_t terminated = strnlen(buffer.data(), buffer.size());
  return std::min(reported, terminated);
}

std::string JitOptionArrays::Log(const std::vector<char>& buffer, size_t size_index) const {
  return std::string(buffer.data(), Filled(buffer, size_index));
}

bool JitOptionArrays::LogsMayBeCut() const {
  return Filled(info_, info_size_index_) + 1 >= info_.size() || Filled(error_, error_size_index_) + 1 >= error_.size();
}

float JitOptionArrays::WallTimeMs() const {
  float ms = 0;
  std::memcpy(&ms, &values_[wall_time_index_], sizeof(ms));  // the driver writes a float into the slot
  return ms;
}

cu::CUresult RunJit(const JitOptions& options, JitCall call, JitLogs& logs, size_t initial_log_bytes) {
  logs = JitLogs();
  for (size_t bytes = std::max<size_t>(initial_log_bytes, 2);; bytes *= 4) {
    JitOptionArrays arrays(options, bytes);
    cu::CUresult r = call(arrays);
    ++logs.attempts;
    logs.info = arrays.InfoLog();
    logs.error = arrays.ErrorLog();
    logs.wall_time_ms = arrays.WallTimeMs();
    if (!arrays.LogsMayBeCut() || bytes * 4 > kMaxJitLogBytes) return r;
  }
}

absl::StatusOr<std::string> WritePtxForDiagnosis(std::string_view kernel_name, std::string_view ptx) {
  const char* dir = std::getenv("TMPDIR");
  std::string safe_name;
  for (char c : kernel_name) safe_name.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_');
  std::string path = StrCat(dir != nullptr && *dir != '\0' ? dir : "/tmp", "/ptxforge-", safe_name, "-XXXXXX.ptx");
  int fd = mkstemps(path.data(), 4);
  if (fd < 0) return absl::InternalError(StrCat("cannot create ", path, ": ", std::strerror(errno)));
  for (size_t done = 0; done < ptx.size();) {
    ssize_t w = write(fd, ptx.data() + done, ptx.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return absl::InternalError(StrCat("cannot write ", path, ": ", std::strerror(e)));
    }
    done += static_cast<size_t>(w);
  }
  close(fd);
  return path;
}

absl::Status JitFailure(absl::StatusCode code, std::string_view api, std::string_view kernel_name,
                        std::string_view error_text, const JitLogs& logs, std::string_view ptx) {
  std::string message = StrCat(api, " failed for kernel ", kernel_name, ": ", error_text, ": ");
  StrAppend(&message, logs.error.empty() ? std::string_view("(the JIT error log is empty)") : logs.error);
  if (!logs.info.empty()) StrAppend(&message, "\nJIT info log: ", logs.info);
  absl::StatusOr<std::string> path = WritePtxForDiagnosis(kernel_name, ptx);
  if (path.ok()) {
    StrAppend(&message, "; PTX written to ", *path);
  } else {
    StrAppend(&message, "; the PTX could not be written: ", path.status().message());
  }
  return absl::Status(code == absl::StatusCode::kOk ? absl::StatusCode::kInternal : code, ToAbsl(message));
}

}  // namespace ptxforge::runtime
