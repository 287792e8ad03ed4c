// Synthetic kernels of a chosen size and shape, for the scaling benchmarks.
#ifndef PTXFORGE_BENCH_SYNTHETIC_KERNEL_H_
#define PTXFORGE_BENCH_SYNTHETIC_KERNEL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "builder/kernel_builder.h"
#include "ir/kernel.h"

namespace ptxforge::bench {

enum class Shape {
  kStraight,  // one basic block
  kBlocks,    // a basic block every 5 instructions (if-statements)
};

// Records about `instructions` instructions into `b` (within a few): integer
// arithmetic on a sliding window of recent values, so about a dozen
// registers are live at any point, all of them reaching a store (dead-code
// removal finds nothing). kBlocks adds an `if (v < k) acc += v` after every
// six values: ten instructions, two blocks.
void RecordSynthetic(KernelBuilder& b, uint32_t instructions, Shape shape);

// A kernel "synthetic" built from RecordSynthetic (Finish() included).
absl::StatusOr<ir::Kernel> BuildSynthetic(uint32_t instructions, Shape shape,
                                          ir::Target target = ir::Target::kSm80);

}  // namespace ptxforge::bench

#endif  // PTXFORGE_BENCH_SYNTHETIC_KERNEL_H_
