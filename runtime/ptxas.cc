// ptxas as a subprocess (posix_spawn; no shell, so paths need no quoting).
#include "runtime/ptxas.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ir/strings.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace ptxforge::runtime {
namespace {

bool IsExecutable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

// A temporary file that is removed when this goes out of scope.
class TempFile {
 public:
  explicit TempFile(std::string_view suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = StrCat(dir && *dir ? dir : "/tmp", "/ptxforge-XXXXXX", suffix);
    fd_ = mkstemps(path_.data(), static_cast<int>(suffix.size()));
  }
  ~TempFile() {
    if (fd_ >= 0) {
      close(fd_);
      unlink(path_.c_str());
    }
  }
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

std::optional<std::string> FindPtxas() {
  if (const char* env = std::getenv("PTXFORGE_PTXAS"); env && *env) {
    if (IsExecutable(env)) return std::string(env);
    return std::nullopt;
  }
  if (const char* path = std::getenv("PATH")) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      std::string candidate = StrCat(dir, "/ptxas");
      if (IsExecutable(candidate)) return candidate;
    }
  }
  if (IsExecutable("/usr/local/cuda/bin/ptxas")) return std::string("/usr/local/cuda/bin/ptxas");
  return std::nullopt;
}

absl::StatusOr<PtxasResult> RunPtxas(const std::string& ptxas, std::string_view ptx, ir::Target target,
                                     const std::vector<std::string>& extra_args, std::chrono::milliseconds timeout) {
  TempFile input(".ptx");
  TempFile output(".log");
  if (!input.ok() || !output.ok()) {
    return absl::InternalError(StrCat("cannot create a temporary file for ptxas: ", std::strerror(errno)));
  }
  for (size_t done = 0; done < ptx.size();) {
    ssize_t w = write(input.fd(), ptx.data() + done, ptx.size() - done);
    if (w < 0) return absl::InternalError(StrCat("cannot write ", input.path(), ": ", std::strerror(errno)));
    done += static_cast<size_t>(w);
  }
  std::vector<std::string> args = {ptxas, StrCat("-arch=", ir::TargetName(target))};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  args.insert(args.end(), {input.path(), "-o", "/dev/null"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, output.fd(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.fd(), STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, ptxas.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::FailedPreconditionError(StrCat("cannot run ", ptxas, ": ", std::strerror(rc)));
  // Polls (1 ms, growing to 20 ms) so that a ptxas that hangs can be stopped.
  int wstatus = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(20))) {
    pid_t done = waitpid(pid, &wstatus, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return absl::InternalError(StrCat("waitpid(ptxas): ", std::strerror(errno)));
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
      }
      return absl::DeadlineExceededError(StrCat("ptxas did not finish within ", static_cast<double>(timeout.count()) / 1000,
                                                " s; it was stopped"));
    }
    std::this_thread::sleep_for(pause);
  }
  PtxasResult result;
  result.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  std::ifstream log(output.path());
  std::stringstream ss;
  ss << log.rdbuf();
  result.output = ss.str();
  return result;
}

absl::Status ValidateWithPtxas(std::string_view ptx, ir::Target target, std::chrono::milliseconds timeout) {
  std::optional<std::string> ptxas = FindPtxas();
  if (!ptxas) {
    return absl::FailedPreconditionError(
        "ptxas not found (looked at $PTXFORGE_PTXAS, PATH and /usr/local/cuda/bin/ptxas)");
  }
  absl::StatusOr<PtxasResult> r = RunPtxas(*ptxas, ptx, target, {}, timeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0 && r->output.find_first_not_of(" \t\r\n") == std::string::npos) {
    return absl::InvalidArgumentError(StrCat("ptxas -arch=", ir::TargetName(target), " rejected the PTX (exit ",
                                             r->exit_code, ") without printing why"));
  }
  if (r->exit_code != 0) {
    return absl::InvalidArgumentError(StrCat("ptxas -arch=", ir::TargetName(target), " rejected the PTX (exit ",
                                                   r->exit_code, "):\n", r->output));
  }
  return absl::OkStatus();
}

}  // namespace ptxforge::runtime
