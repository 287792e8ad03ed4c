// softmax: numerically stable row softmax of a [rows, cols] matrix.
#ifndef PTXFORGE_KERNELS_SOFTMAX_H_
#define PTXFORGE_KERNELS_SOFTMAX_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r), math in f32.
// Params: x, y (u64 pointers), rows, cols (u32; cols >= 1, any length).
// One block of exactly `block` threads per row (.reqntid); a grid smaller
// than rows loops over rows. Each thread keeps an online (running max, sum)
// over its strided elements (one exp per element), the block combines them
// (BlockReduce of the max, then of the rescaled sums), and a second pass
// over the row writes exp(x - max) / sum. f16/bf16 storage uses ex2.approx.
struct SoftmaxSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // f16, bf16, f32
  uint32_t block = 256;                        // a multiple of 32 in 32..1024

  absl::Status Validate() const;
  std::string KernelName() const;  // "softmax_f32_b256"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// The reference in double, row by row.
std::vector<double> SoftmaxReference(std::span<const double> x, uint32_t rows, uint32_t cols);

class SoftmaxFamily : public SpecFamily<SoftmaxSpec> {
 public:
  std::string_view name() const override { return "softmax"; }
  std::string_view description() const override {
    return "row softmax: online max and sum per thread, block reductions, one block per row";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<SoftmaxSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_SOFTMAX_H_
