// reduce: sum / max / min / argmax over the rows of a matrix or over a whole
// tensor (ReduceTensor: two launches), warp-shuffle block reductions; and
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
#include "runtime/device.h"

namespace ptxforge::kernels {

enum class Reduction { kSum, kMax, kMin, kArgmax };
enum class ReduceMode { kRows, kTensor };

// What the reductions compute (the same in both modes):
//  - sum: in f32 for f32/f16/bf16 (rounded to the storage type once, at the
//    end); s32/u32 wrap modulo 2^32. Each thread adds its strided elements in
//    order, then the block adds the threads' sums in a warp-shuffle tree.
//  - max, min: NaN wins (any NaN gives a NaN, as torch.max/min); max picks +0
//    over -0, min -0 over +0.
//  - argmax: the u32 index of the largest element, ties to the LOWER index;
//    a NaN counts as larger than everything (the first NaN's index, as
//    torch.argmax); -0 and +0 are equal.
// max/min/argmax reduce ordered keys with max.u32 / max.u64: a float's bits
// with the sign flipped (negatives: all bits flipped) compare as the floats
// do; a NaN gets the largest key; min inverts the key; argmax's 64-bit key is
// (key << 32) | ~index, so equal values keep the lower index.
//
// kRows: x [rows, cols] -> out [rows] (argmax: u32 indices). Params: x, out
//   (u64 pointers), rows, cols (u32). One block per row, blocks loop over
//   rows when the grid is smaller; any cols (cols = 0 gives the identity:
//   0, -inf (the lowest integer), +inf (the highest), argmax 0xFFFFFFFF).
// kTensor: per-block partials of x [n]. Params: x, x_index (argmax only),
//   out, out_index (argmax only), n (u32, at most 2^31). Block b reduces
//   x[j] for j = b * block + tid + k * grid * block < n and writes out[b]
//   (argmax: the value to out[b], its index to out_index[b]: x_index[j] when
//   x_index is not 0, else j). Blocks without elements write the identity
//   (argmax: the lowest value and index 0xFFFFFFFF). A second launch with
//   one block on (out, out_index, grid) reduces the partials: ReduceTensor.
//   f16/bf16 sums store the partials in the storage type (one more rounding
//   each: at most 2^-11 (f16) or 2^-8 (bf16) times the sum of |x|).
// Launch with exactly `block` threads per block (.reqntid), any grid.
struct ReduceSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // f32; f16, bf16 (f32 math); s32, u32
  Reduction op = Reduction::kSum;
  ReduceMode mode = ReduceMode::kRows;
  uint32_t block = 256;  // a multiple of 32 in 32..1024

  absl::Status Validate() const;
  std::string KernelName() const;  // "reduce_rows_sum_f32_b256", "reduce_tensor_argmax_f16_b256"
  // bf16 needs sm_80 (cvt between bf16 and f32); an error names the target.
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// One reduction as the kernels define it, in double: values[i] has the index
// indices[i] (i when indices is empty). Sum: the exact sum; max/min: NaN
// wins; argmax: .index of the largest (lowest index on ties, NaN largest),
// .value its value. Nothing to reduce: the identity of `type` (see above).
struct ReduceValue {
  double value = 0;
  uint32_t index = 0xFFFFFFFFu;
};
ReduceValue ReduceReference(Reduction op, ir::ScalarType type, std::span<const double> values,
                            std::span<const uint32_t> indices = {});

// The whole-tensor reduction of x [n] (elements of `type`) on `device`: a
// kTensor launch writes min(ceil(n / block), 1024) partials, and a second
// launch of the same kernel with one block reduces them (one launch when one
// block covers n). Returns a new one-element buffer: the result in `type`,
// or for argmax the u32 index. A bad type/op/block, n = 0, n > 2^31 or a
// buffer of the wrong size is an error naming it.
absl::StatusOr<runtime::Buffer<uint8_t>> ReduceTensor(runtime::Device& device, ir::ScalarType type, Reduction op,
                                                      runtime::BufferView<uint8_t> x, uint32_t n,
                                                      ir::Target target = ir::Target::kSm80, uint32_t block = 256);

class ReduceFamily : public SpecFamily<ReduceSpec> {
 public:
  std::string_view name() const override { return "reduce"; }
  std::string_view description() const override {
    return "sum/max/min/argmax over rows or a whole tensor: strided loop, warp-shuffle block reduction";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<ReduceSpec> SpecFrom(const Config& config) const override;
  // rows: one launch on [rows, cols]; tensor: the first launch (grid blocks'
  // partials of n elements, x_index = 0).
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

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
