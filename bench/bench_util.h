// Shared by the benchmark programs: fail loudly on an error (a benchmark of
// an error path measures nothing).
#ifndef PTXFORGE_BENCH_BENCH_UTIL_H_
#define PTXFORGE_BENCH_BENCH_UTIL_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

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

// The two halves of Disturb(). SweepCaches writes a byte of each line of
// 64 MiB (evicting the caches); ChurnHeap allocates 4000 blocks of random
// sizes (16 to 4111 bytes) and frees them in random order, which leaves
// glibc's shared bins unsorted until a later request they must serve.
inline std::mt19937& DisturbRng() {
  static std::mt19937 rng(1);
  return rng;
}
inline void SweepCaches() {
  static std::vector<char> junk(64 << 20);
  for (size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<char>(junk[i] + 1);
  volatile char sink = junk[DisturbRng()() % junk.size()];
  (void)sink;
}
inline void ChurnHeap() {
  std::mt19937& rng = DisturbRng();
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 4000; ++i) blocks.emplace_back(new char[16 + rng() % 4096]);
  std::shuffle(blocks.begin(), blocks.end(), rng);
}

// Unrelated work, to run before a measurement of codegen "after other work":
// sweeps 64 MiB (evicting the caches) and churns the heap (4000 blocks of
// random sizes, allocated and freed in random order).
inline void Disturb() {
  SweepCaches();
  ChurnHeap();
}

}  // namespace ptxforge::bench

#endif  // PTXFORGE_BENCH_BENCH_UTIL_H_
