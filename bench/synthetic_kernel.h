// Synthetic kernels of a chosen size and shape, for the scaling benchmarks.
#ifndef PTXFORGE_BENCH_SYNTHETIC_KERNEL_H_
#define PTXFORGE_BENCH_SYNTHETIC_KERNEL_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "builder/kernel_builder.h"
#include "ir/kernel.h"

namespace ptxforge::bench {

enum class Shape {
  kStraight,  // one basic block
  kBlocks,    // a basic block every 5 instructions (if-statements)
  kLoops,     // one loop after another, 18 instructions each
  kNested,    // nests of three loops, one after another, 38 instructions each
};

// The shape's name in benchmark output ("straight", "blocks", "loops", "nested").
std::string_view ShapeName(Shape shape);

// Records about `instructions` instructions into `b` (within a few): integer
// arithmetic on a sliding window of recent values, so about a dozen
// registers are live at any point, all of them reaching a store (dead-code
// removal finds nothing). kBlocks adds an `if (v < k) acc += v` after every
// six values: ten instructions, two blocks.
//
// kLoops and kNested give the loop passes work in every loop, as a real
// kernel's loops do: each loop runs from 0 to a parameter `n`, loads
// `in[i]` (64-bit counter, address `in + i * 4`: one pointer for strength
// reduction to step), multiplies a value set before the loop by a constant
// (invariant, and its operand dies there: licm hoists it), mixes the two
// with three loop-variant operations and adds the result to the
// accumulator. A kNested nest is an outer 32-bit loop whose body computes a
// 32-bit offset `row + i * 12` (strength reduction again) and holds a
// middle loop, whose body holds such an innermost loop. The loops need
// their parameters only to run (the emulator is not asked to); about a
// dozen registers are live between loops.
void RecordSynthetic(KernelBuilder& b, uint32_t instructions, Shape shape);

// A kernel "synthetic" built from RecordSynthetic (Finish() included).
absl::StatusOr<ir::Kernel> BuildSynthetic(uint32_t instructions, Shape shape,
                                          ir::Target target = ir::Target::kSm80);

}  // namespace ptxforge::bench

#endif  // PTXFORGE_BENCH_SYNTHETIC_KERNEL_H_
