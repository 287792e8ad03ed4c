// libFuzzer target: the input is ptx-dump's command line, one argument per
// line. ptx-dump must answer every command line with an exit code and at
// most one line on stderr per error, never crash or hang. The harness keeps
// runs fast and local: -o goes to /dev/null, --validate's ptxas is
// /bin/false, there is no CUDA driver, and --run skips accepted shapes above
// 2^17 (larger ones are refused before allocation and stay in).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tools/ptx_dump.h"

namespace {

// A number in [2^17, 2^32) anywhere in `arg`.
bool HasLargeShape(const std::string& arg) {
  for (size_t i = 0; i < arg.size();) {
    if (arg[i] < '0' || arg[i] > '9') {
      ++i;
      continue;
    }
    uint64_t v = 0;
    size_t j = i;
    for (; j < arg.size() && arg[j] >= '0' && arg[j] <= '9'; ++j) v = v < (uint64_t{1} << 40) ? v * 10 + (arg[j] - '0') : v;
    if (v >= (uint64_t{1} << 17) && v < (uint64_t{1} << 32)) return true;
    i = j;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("PTXFORGE_PTXAS", "/bin/false", 1);
  setenv("PTXFORGE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  if (args.back().empty()) args.pop_back();
  bool run = false, large = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string& a = args[i];
    if (a.rfind("--run", 0) == 0) run = true;
    large |= HasLargeShape(a);
    if (a.rfind("--output", 0) == 0) a = "--output=/dev/null";
    if (a == "-o" && i + 1 < args.size()) args[i + 1] = "/dev/null";
  }
  if (run && large) return 0;
  std::ostringstream out, err;
  int code = ptxforge::tools::RunPtxDump(args, out, err);
  if (code != 0 && code != 1 && code != 2) __builtin_trap();
  // Every error is one line.
  const std::string e = err.str();
  if (code != 0 && e.find("// IR after") == std::string::npos) {
    if (e.empty() || e.back() != '\n' || e.find('\n') != e.size() - 1) __builtin_trap();
  }
  return 0;
}
