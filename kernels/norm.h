// layernorm and rmsnorm: row normalisation of a [rows, cols] matrix.
#ifndef PTXFORGE_KERNELS_NORM_H_
#define PTXFORGE_KERNELS_NORM_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

enum class NormKind { kLayerNorm, kRmsNorm };

// Forward layer norm and RMS norm over each row of x [rows, cols] (row-major),
// storage f16, bf16 or f32, math in f32:
//   layernorm: y = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(var + eps)
//              (var: the biased variance, sum (x - mean)^2 / cols)
//   rmsnorm:   y = x * rstd * weight,                   rstd = 1 / sqrt(sum x^2 / cols + eps)
// weight and bias are [cols], of the storage type.
// Params, in order: x, weight, bias (layernorm only), y, then with `stats`
// mean (layernorm only) and rstd (f32 [rows], per row: what a backward pass
// needs), all u64 pointers; rows, cols (u32, any values >= 1); eps (f32, a
// kernel param, so one kernel serves every eps).
// One block of exactly `block` threads per row (.reqntid); a grid smaller
// than rows loops over rows. layernorm: each thread runs Welford's update
// (count, mean, M2) over its strided elements, the block merges those with
// Chan's formula (warp shuffles, then one state per warp through shared
// memory); rmsnorm: a BlockReduce of the sum of squares. A second pass over
// the row writes y. rstd is rsqrt.approx (relative error 2^-22.9). Welford
// counts are f32: exact up to 2^24 columns (longer rows merge with rounded weights).
struct NormSpec {
  NormKind kind = NormKind::kLayerNorm;
  ir::ScalarType type = ir::ScalarType::kF32;  // f16, bf16, f32
  uint32_t block = 256;                        // a multiple of 32 in 32..1024
  bool stats = false;                          // also write mean / rstd per row

  absl::Status Validate() const;
  std::string KernelName() const;  // "layernorm_f32_b256", "rmsnorm_bf16_b128_stats"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// References in double, row by row; `mean` / `rstd` (when not null) get the
// per-row statistics.
std::vector<double> LayerNormReference(std::span<const double> x, std::span<const double> weight,
                                       std::span<const double> bias, uint32_t rows, uint32_t cols, double eps,
                                       std::vector<double>* mean = nullptr, std::vector<double>* rstd = nullptr);
std::vector<double> RmsNormReference(std::span<const double> x, std::span<const double> weight, uint32_t rows,
                                     uint32_t cols, double eps, std::vector<double>* rstd = nullptr);

// The registry families "layernorm" and "rmsnorm". Config: type, block,
// stats (kernel fields); rows, cols, grid, eps (the test problem).
class NormFamily : public SpecFamily<NormSpec> {
 public:
  explicit NormFamily(NormKind kind) : kind_(kind) {}
  std::string_view name() const override { return kind_ == NormKind::kLayerNorm ? "layernorm" : "rmsnorm"; }
  std::string_view description() const override;
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<NormSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;

 private:
  NormKind kind_;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_NORM_H_
