// attention: FlashAttention-style scaled dot-product attention (forward).
#ifndef PTXFORGE_KERNELS_ATTENTION_H_
#define PTXFORGE_KERNELS_ATTENTION_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// O[q] = sum_k softmax_k(scale * Q[q] . K[k]) * V[k] for every (batch, head),
// keys k > q masked when `causal`. Q, O: [batch*heads, seq_len, head_dim];
// K, V: [batch*kv_heads, seq_len, head_dim]; query head h reads K/V head
// h / (heads / kv_heads) of its batch (grouped-query attention).
//
// Params: q, k, v, o (u64 pointers), seq_len (u32), scale (f32; f64 for
// f64). Launch: Grid(seq_len, batch), Threads() threads per block and
// SharedBytes() bytes of dynamic shared memory.
//
// How: each block owns `block` query rows of one head (grid.y = batch*heads);
// ThreadsPerRow() threads share a row, each holding head_dim/ThreadsPerRow()
// dims of the pre-scaled query and of the output accumulator in registers
// (unrolled by the builder). K/V tiles of `block` keys stream through shared
// memory (converted to the accumulation type); per key the row's threads
// reduce the dot product with shuffles and update a running max and sum
// (online softmax, in base 2: ex2 with log2(e) folded into the scale). Causal
// launches stop at the diagonal tile, and inside it each warp stops after its
// last row's key, so fully masked tiles are never loaded or visited.
struct AttentionSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // f32, f64, f16/bf16 (storage; f32 accumulation)
  uint32_t head_dim = 64;                      // power of two, 1..256
  uint32_t block = 64;                         // query rows per block = keys per tile; power of two, 1..256
  bool causal = false;
  uint32_t heads = 4;
  uint32_t kv_heads = 2;  // divides heads

  // Target-independent checks; Build(target) adds the target's limits
  // (shared memory, bf16 conversions need sm_80).
  absl::Status Validate() const;
  std::string KernelName() const;  // "attention_f32_d64_b64_h4_kv2" (+ "_causal")
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;

  uint32_t ThreadsPerRow() const;  // head_dim / min(head_dim, 16)
  uint32_t Threads() const { return block * ThreadsPerRow(); }
  uint32_t SharedBytes() const;    // the K and V tiles
  std::array<uint32_t, 3> Grid(uint32_t seq_len, uint32_t batch) const {
    return {(seq_len + block - 1) / block, batch * heads, 1};
  }
};

// The reference, in double: q, k, v as laid out above (batch is
// q.size() / (heads * seq_len * head_dim)); returns o.
std::vector<double> AttentionReference(std::span<const double> q, std::span<const double> k,
                                       std::span<const double> v, const AttentionSpec& spec, uint32_t seq_len,
                                       double scale);

class AttentionFamily : public SpecFamily<AttentionSpec> {
 public:
  std::string_view name() const override { return "attention"; }
  std::string_view description() const override {
    return "FlashAttention-style forward: K/V tiles in shared memory, online softmax, causal, grouped-query";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<AttentionSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_ATTENTION_H_
