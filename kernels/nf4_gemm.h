// NF4-weight GEMMs: C = A . dequant(B) (nf4.gemm) and C = A . dequant(B)^T
// (nf4.gemm_transpose, the backward product), f32 activations and outputs.
#ifndef PTXFORGE_KERNELS_NF4_GEMM_H_
#define PTXFORGE_KERNELS_NF4_GEMM_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/nf4_format.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// nf4.gemm: C[M x N] = A[M x K] . dequant(B)[K x N], B in the Nf4Matrix
// layout (kernels/nf4_format.h). Params: a, b_nf4, b_scales, c (u64
// pointers), m, n, k (u32). Launch: blocks of 256 threads, grid
// (ceil(N / tile_n), ceil(M / tile_m)). `a` must be 16-byte and `b_nf4`
// 8-byte aligned (device allocations are); K must be a multiple of 64 (the
// kernel steps K one NF4 block at a time).
//
// Each block stages a tile_m x 64 tile of A (128-bit loads) and the
// 64 x tile_n tile of B decoded once (codebook in shared memory, one
// scale per column) in shared memory; each thread accumulates
// (tile_m/16) x (tile_n/16) outputs in registers.
struct Nf4GemmSpec {
  uint32_t tile_m = 64;  // 16, 32, 64 or 128
  uint32_t tile_n = 64;  // 16, 32, 64 or 128
  // The test shape (MakeProblem, ptx-dump --run); the kernel takes m, n, k
  // at launch and does not depend on them.
  uint32_t m = 37, n = 45, k = 128;

  absl::Status Validate() const;
  std::string KernelName() const;  // "nf4_gemm_f32_t64x64"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// nf4.gemm_transpose: C[M x K] = A[M x N] . dequant(B)^T for B (K x N) in
// the Nf4Matrix layout. Params: a, b_nf4, b_scales, c, m, n, k. Launch:
// blocks of 256 threads, grid (K / 64, ceil(M / tile_m)). `b_nf4` must be
// 4-byte aligned; K must be a multiple of 64.
//
// A block owns tile_m rows and one NF4 block of 64 output columns; it steps
// the reduction over N `tile_n` columns of B at a time, decoding each
// column's block once into shared memory next to a tile of A.
struct Nf4GemmTransposeSpec {
  uint32_t tile_m = 64;  // 16, 32, 64 or 128
  uint32_t tile_n = 32;  // reduction step over N: 16, 32 or 64; tile_m * tile_n <= 2048
  uint32_t m = 37, n = 45, k = 128;  // the test shape, as above

  absl::Status Validate() const;
  std::string KernelName() const;  // "nf4_gemm_transpose_f32_t64x32"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// The references: row-major products in double.
// C[M x N] = A[M x K] . B[K x N]
std::vector<double> NaiveGemm(std::span<const float> a, std::span<const float> b, uint32_t m, uint32_t n,
                              uint32_t k);
// C[M x K] = A[M x N] . B[K x N]^T
std::vector<double> NaiveGemmTransposeB(std::span<const float> a, std::span<const float> b, uint32_t m, uint32_t n,
                                        uint32_t k);

class Nf4GemmFamily : public SpecFamily<Nf4GemmSpec> {
 public:
  std::string_view name() const override { return "nf4.gemm"; }
  std::string_view description() const override {
    return "C = A . dequant(B), NF4 weights decoded once per tile into shared memory";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<Nf4GemmSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

class Nf4GemmTransposeFamily : public SpecFamily<Nf4GemmTransposeSpec> {
 public:
  std::string_view name() const override { return "nf4.gemm_transpose"; }
  std::string_view description() const override {
    return "C = A . dequant(B)^T (NF4 backward), B blocks decoded once per tile into shared memory";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<Nf4GemmTransposeSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_NF4_GEMM_H_
