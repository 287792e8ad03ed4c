// reduce_sum: one partial sum per block through shared memory and barriers.
#ifndef PTXFORGE_KERNELS_REDUCE_H_
#define PTXFORGE_KERNELS_REDUCE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// partial[blockIdx.x] = sum of x[j] for j = global thread index, stepping by
// the grid size, while j < n. Each thread sums its strided elements (a loop),
// then the block combines them in a shared-memory tree with bar.sync between
// levels. Params: x, partial (u64 pointers), n (u32). Launch with exactly
// `block` threads per block (.reqntid) and any grid; sum the partials (or
// run again on them) for the total.
struct ReduceSumSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // f32, f64, s32, u32, s64, u64
  uint32_t block = 256;                        // power of two, 32..1024

  absl::Status Validate() const;
  std::string KernelName() const;  // "reduce_sum_f32_b256"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// The reference: what reduce_sum writes for a grid of `grid` blocks of
// `block` threads: partial[b] = sum of x[j] over j with
// (j mod (grid * block)) / block == b.
template <typename V>
std::vector<V> ReduceSumReference(std::span<const V> x, uint32_t grid, uint32_t block) {
  std::vector<V> partial(grid, V{0});
  const uint64_t stride = uint64_t{grid} * block;
  for (size_t j = 0; j < x.size(); ++j) partial[(j % stride) / block] += x[j];
  return partial;
}

class ReduceSumFamily : public SpecFamily<ReduceSumSpec> {
 public:
  std::string_view name() const override { return "reduce_sum"; }
  std::string_view description() const override {
    return "per-block partial sums: strided loop, shared-memory tree, bar.sync";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<ReduceSumSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_REDUCE_H_
