// gemm.tensor_core: C = alpha * A * B + beta * C + bias on tensor cores
// (mma.sync m16n8k16, f16/bf16 inputs, f32 accumulation), sm_80 and newer.
#ifndef PTXFORGE_KERNELS_GEMM_TENSOR_CORE_H_
#define PTXFORGE_KERNELS_GEMM_TENSOR_CORE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// How B [K, N] is stored: row-major (element (k, n) at b[k * N + n]) or
// column-major (at b[n * K + k], i.e. B^T row-major).
enum class GemmBLayout : uint8_t { kRow, kCol };

// D[i][j] = alpha * sum_l A[i][l] * B[l][j] + beta * C[i][j] + bias[j],
// written over C. A [M, K] is row-major f16 or bf16, B [K, N] the same type
// in `b_layout`, C [M, N] row-major in `out_type` (f32, or the input type:
// the products are summed in f32 either way and rounded to nearest once at
// the store). With `scale` off there are no alpha/beta params and D is
// A * B (+ bias): C is only written. With it on, beta == 0 never reads C
// (NaNs in C are overwritten), as in BLAS. With `bias`, bias [N] (out_type)
// is added to every row.
//
// Params: a, b, c, [bias], m, n, k (u32, any sizes >= 1 and below 2^31),
// [alpha, beta] (f32). Offsets into global memory are 64-bit.
//
// Launch: blocks of exactly 32 * warps_m * warps_n threads (.reqntid), grid
// (ceil(N / block_n), ceil(M / block_m)). Each block computes a block_m x
// block_n tile of C; its warps form a warps_m x warps_n grid, each owning a
// (block_m / warps_m) x (block_n / warps_n) warp tile held in f32 mma
// accumulators (16 x 8 pieces).
//
// K advances in slabs of block_k through a ring of `stages` shared-memory
// buffers (one A tile [block_m][block_k] and one B tile per stage; B tiles
// are [block_k][block_n] for row-major B and [block_n][block_k] for
// column-major B). The loads of slab s + stages - 1 are issued before slab s
// is multiplied: each stage is one cp.async group, and
// `cp.async.wait_group stages-2` plus a barrier make slab s visible.
//
// Copies into shared memory: when an operand's leading dimension (K for A
// and column-major B, N for row-major B) is a multiple of 8 elements and its
// base address is 16-byte aligned, every 16-byte piece of a tile row is
// one `cp.async.cg` of 16 bytes, zero-filled (src-size 0, its source then
// clamped to row 0 / column 0 of the matrix) where the piece lies past the
// matrix (M, N or K edge). Otherwise (an odd K, say) the rows
// do not start on 16-byte boundaries and no cp.async size can copy them, so
// the kernel copies that operand element by element (ld.global.u16, zero
// past the edges, st.shared.u16) into the same buffers, ahead of the
// barrier. The choice is made per operand at run time (a uniform branch),
// so one kernel serves every shape.
//
// Shared layout: a tile row of block_k (or block_n) halves is R = cols / 8
// pieces of 16 bytes; piece p of row r is stored at piece p ^ f(r), with
// f(r) = (r % 8) / max(1, 8 / R). Then the 8 row addresses of every
// ldmatrix (8 consecutive rows, one logical piece) fall into 8 different
// 4-bank groups, and so do the 16-byte cp.async writes of 8 lanes: no bank
// conflicts. Fragments come from ldmatrix.x4 (A; column-major B) and
// ldmatrix.x4.trans (row-major B: it transposes the [k][n] tile into the
// "col" B fragment), then mma.sync.aligned.m16n8k16.row.col.f32.
struct GemmTensorCoreSpec {
  ir::ScalarType type = ir::ScalarType::kF16;      // inputs: f16 or bf16
  ir::ScalarType out_type = ir::ScalarType::kF32;  // C: f32 or `type`
  GemmBLayout b_layout = GemmBLayout::kRow;
  uint32_t block_m = 128;  // 32, 64 or 128
  uint32_t block_n = 128;  // 32, 64 or 128
  uint32_t block_k = 32;   // 16, 32 or 64
  uint32_t warps_m = 2;    // warps_m * warps_n: 4 or 8
  uint32_t warps_n = 4;
  uint32_t stages = 3;     // 2 to 8; all stages within 48 KiB of static shared memory
  bool scale = true;       // alpha and beta params
  bool bias = false;       // a bias param

  absl::Status Validate() const;
  // "gemm_tc_f16_f32_row_128x128x32_2x4_s3" (+ "_noscale", "_bias").
  std::string KernelName() const;
  uint32_t threads() const { return 32 * warps_m * warps_n; }
  uint32_t warp_m() const { return block_m / warps_m; }
  uint32_t warp_n() const { return block_n / warps_n; }
  // Bytes of one stage (an A tile and a B tile of 2-byte elements).
  uint32_t stage_bytes() const { return 2 * block_k * (block_m + block_n); }
  // Needs sm_80 (cp.async, mma.sync m16n8k16); an error names it.
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// The reference in double: alpha * A * B + beta * C + bias (C not read when
// beta == 0; bias empty for none). A [m, k] row-major, B [k, n] row-major or
// (b_col) [n, k].
std::vector<double> GemmTensorCoreReference(std::span<const double> a, std::span<const double> b, bool b_col,
                                            std::span<const double> c, std::span<const double> bias, uint32_t m,
                                            uint32_t n, uint32_t k, double alpha, double beta);

class GemmTensorCoreFamily : public SpecFamily<GemmTensorCoreSpec> {
 public:
  std::string_view name() const override { return "gemm.tensor_core"; }
  std::string_view description() const override {
    return "f16/bf16 GEMM on tensor cores (mma.sync m16n8k16, f32 accumulation): 128x128x32 block tiles, 8 warps, "
           "3-stage cp.async pipeline, swizzled shared memory, alpha/beta/bias epilogue (sm_80+)";
  }
  ir::TargetRequirement requirement() const override { return {.sm = 80}; }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<GemmTensorCoreSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_GEMM_TENSOR_CORE_H_
