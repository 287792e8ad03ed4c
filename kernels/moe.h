// Mixture of experts: four kernels (top-k gating, permute, expert GEMM,
// unpermute), their references, and MoeLayer, which chains them on a device.
#ifndef PTXFORGE_KERNELS_MOE_H_
#define PTXFORGE_KERNELS_MOE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"
#include "runtime/device.h"

namespace ptxforge::kernels {

// What all four kernels share. E = num_experts; T = tokens (a launch value).
struct MoeConfig {
  ir::ScalarType type = ir::ScalarType::kF32;  // f16 (storage; f32 accumulation), f32, f64
  uint32_t num_experts = 8;                    // E, 1..1024
  uint32_t top_k = 2;                          // 1..E
  uint32_t hidden_dim = 64;                    // H, 1..65536
  uint32_t expert_dim = 32;                    // D, 1..65536
  double capacity_factor = 1.25;               // > 0, finite

  absl::Status Validate() const;
  // ceil(capacity_factor * tokens * top_k / E), at least 1: slots per expert.
  uint32_t Capacity(uint32_t tokens) const;
};

enum class MoeStage { kTopkGating, kPermute, kExpertGemm, kUnpermute };

// One of the four kernels of a configuration:
//
// kTopkGating: logits [T, E] -> expert_indices [T, top_k] (u32),
//   expert_weights [T, top_k]: the top_k largest logits (ties: lower index
//   first) and their softmax weights renormalised to sum to 1. One thread
//   per token. Params: logits, expert_indices, expert_weights, tokens.
//   Launch: GatingLaunch.
// kPermute: the assignments (t, k) of each expert get slots 0, 1, ... in
//   (t, k) order; slot >= capacity drops the assignment. Outputs token_ids
//   [E, capacity] (u32), expert_counts [E] (u32, assignments before the
//   drop), slot_of [T, top_k] (u32, 0xFFFFFFFF when dropped). One block per
//   expert scans the assignments with warp ballots and a block prefix sum,
//   so the slots (and which assignments are dropped) never depend on the
//   order blocks or warps run in; no atomics. Params: expert_indices,
//   token_ids, expert_counts, slot_of, tokens, capacity. Launch: PermuteLaunch.
// kExpertGemm: expert_out[e * capacity + s, d] = sum_h input[token_ids[e, s], h]
//   * W[e, d, h] for s < min(expert_counts[e], capacity) (other rows are not
//   written); input [T, H], W [E, D, H]. 16x16 output tiles per block, the
//   gathered input rows and the W rows staged through shared memory 16 wide
//   along h. Params: input, w, token_ids, expert_counts, expert_out,
//   capacity. Launch: ExpertGemmLaunch.
// kUnpermute: output[t, d] = sum_k expert_weights[t, k] * expert_out[
//   expert_indices[t, k] * capacity + slot_of[t, k], d], skipping dropped
//   assignments (k in order: the sum's rounding is fixed). One thread per
//   (t, d). Params: expert_out, expert_indices, expert_weights, slot_of,
//   output, tokens, capacity. Launch: UnpermuteLaunch.
template <MoeStage kStage>
struct MoeKernelSpec : MoeConfig {
  std::string KernelName() const;  // "moe_topk_gating_f32_e8_k2", "moe_expert_gemm_f32_e8_h64_d32", ...
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};
using MoeTopkGatingSpec = MoeKernelSpec<MoeStage::kTopkGating>;
using MoePermuteSpec = MoeKernelSpec<MoeStage::kPermute>;
using MoeExpertGemmSpec = MoeKernelSpec<MoeStage::kExpertGemm>;
using MoeUnpermuteSpec = MoeKernelSpec<MoeStage::kUnpermute>;

// Launch shapes for `tokens` tokens (grid, block).
runtime::LaunchConfig GatingLaunch(uint32_t tokens);
runtime::LaunchConfig PermuteLaunch(const MoeConfig& config);
runtime::LaunchConfig ExpertGemmLaunch(const MoeConfig& config, uint32_t capacity);
runtime::LaunchConfig UnpermuteLaunch(const MoeConfig& config, uint32_t tokens);

// ---- references (double; indices exact)
struct MoeGating {
  std::vector<uint32_t> indices;  // [T, top_k]
  std::vector<double> weights;    // [T, top_k]
};
struct MoePermutation {
  std::vector<uint32_t> token_ids;  // [E, capacity], 0 where unused
  std::vector<uint32_t> counts;     // [E]
  std::vector<uint32_t> slot_of;    // [T, top_k]
};
MoeGating MoeGatingReference(std::span<const double> logits, const MoeConfig& config);
MoePermutation MoePermuteReference(std::span<const uint32_t> indices, const MoeConfig& config, uint32_t capacity);
// expert_out [E * capacity, D], 0 in rows that are not written.
std::vector<double> MoeExpertGemmReference(std::span<const double> input, std::span<const double> w,
                                           const MoePermutation& perm, const MoeConfig& config, uint32_t capacity);
std::vector<double> MoeUnpermuteReference(std::span<const double> expert_out, const MoeGating& gating,
                                          std::span<const uint32_t> slot_of, const MoeConfig& config,
                                          uint32_t capacity);
// The whole layer: output [T, D].
std::vector<double> MoeLayerReference(std::span<const double> input, std::span<const double> logits,
                                      std::span<const double> w, const MoeConfig& config);

// ---- the layer on a device
// Device buffers hold elements of config.type: input [tokens, hidden_dim],
// logits [tokens, num_experts], w [num_experts, expert_dim, hidden_dim].
struct MoeLayerInputs {
  runtime::BufferView<uint8_t> input;
  runtime::BufferView<uint8_t> logits;
  runtime::BufferView<uint8_t> w;
};
// Builds the four kernels for `target`, launches gating, permute, expert
// GEMM and unpermute in order on `device` (intermediates in device buffers
// it allocates) and returns the output [tokens, expert_dim] in a new buffer.
// A bad configuration, tokens = 0 or a buffer of the wrong size is an error
// naming it.
absl::StatusOr<runtime::Buffer<uint8_t>> MoeLayer(runtime::Device& device, const MoeConfig& config,
                                                  uint32_t tokens, const MoeLayerInputs& inputs,
                                                  ir::Target target = ir::Target::kSm80);

template <MoeStage kStage>
class MoeFamily : public SpecFamily<MoeKernelSpec<kStage>> {
 public:
  std::string_view name() const override;
  std::string_view description() const override;
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<MoeKernelSpec<kStage>> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_MOE_H_
