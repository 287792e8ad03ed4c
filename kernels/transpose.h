// transpose: out[c, r] = in[r, c] through a padded shared tile.
#ifndef PTXFORGE_KERNELS_TRANSPOSE_H_
#define PTXFORGE_KERNELS_TRANSPOSE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// in [rows, cols] -> out [cols, rows]. Params: in, out (u64 pointers),
// rows, cols (u32; any shape). Blocks of exactly 32 x block_rows threads
// (.reqntid), grid (ceil(cols / 32), ceil(rows / 32)); each block moves a
// 32 x 32 tile: coalesced row reads into shared memory, coalesced row
// writes of the transposed tile. The tile's rows are padded by one 32-bit
// word (1 element for 4-byte types, 2 for 2-byte ones) so that reading a
// column touches 32 different banks.
struct TransposeSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // 4-byte: f32, u32, s32; 2-byte: f16, bf16, u16
  uint32_t block_rows = 8;                     // 1, 2, 4, 8, 16 or 32

  absl::Status Validate() const;
  std::string KernelName() const;  // "transpose_f32_r8"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

template <typename V>
std::vector<V> TransposeReference(std::span<const V> in, uint32_t rows, uint32_t cols) {
  std::vector<V> out(in.size());
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) out[size_t{c} * rows + r] = in[size_t{r} * cols + c];
  }
  return out;
}

class TransposeFamily : public SpecFamily<TransposeSpec> {
 public:
  std::string_view name() const override { return "transpose"; }
  std::string_view description() const override {
    return "out[c, r] = in[r, c]: 32x32 tiles through padded shared memory (no bank conflicts)";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<TransposeSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_TRANSPOSE_H_
