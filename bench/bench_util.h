// Shared by the benchmark programs: fail loudly on an error (a benchmark of
// an error path measures nothing).
#ifndef PTXFORGE_BENCH_BENCH_UTIL_H_
#define PTXFORGE_BENCH_BENCH_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"

namespace ptxforge::bench {

inline void OrDie(const absl::Status& s) {
  if (s.ok()) return;
  std::fprintf(stderr, "benchmark setup failed: %s\n", std::string(s.message()).c_str());
  std::exit(1);
}

template <typename T>
T OrDie(absl::StatusOr<T> v) {
  OrDie(v.status());
  return *std::move(v);
}

}  // namespace ptxforge::bench

#endif  // PTXFORGE_BENCH_BENCH_UTIL_H_
