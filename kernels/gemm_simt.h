// gemm.simt: SGEMM C = alpha * A * B + beta * C with register blocking.
#ifndef PTXFORGE_KERNELS_GEMM_SIMT_H_
#define PTXFORGE_KERNELS_GEMM_SIMT_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// C = alpha * A * B + beta * C in f32 (f32 only), A [M, K], B [K, N] and
// C [M, N] packed row-major (the leading dimensions are K, N and N; there are
// no lda/ldb/ldc params). Params: a, b, c (u64 pointers), m, n, k (u32; any
// sizes >= 1, k below 2^32 - 8), alpha, beta (f32). beta == 0 never reads C (NaNs in C are
// overwritten), as in BLAS.
//
// Blocks of exactly (block_m / thread_m) * (block_n / thread_n) threads
// (.reqntid; 256 with the defaults), grid (ceil(N / block_n), ceil(M / block_m)):
// each block computes a block_m x block_n tile of C, each thread a
// thread_m x thread_n register tile of it, made of 4 x 4 pieces block_m * 4 /
// thread_m rows (block_n * 4 / thread_n columns) apart so that a quarter
// warp's ld.shared.v4 of B touches 32 different banks. K advances in slabs
// of 8 through double-buffered shared memory: the next slab is loaded from
// global memory into registers (bounds-checked: zeros past M, N, K) while
// the current one is multiplied, then stored into the other buffer; one
// barrier per slab. A's slab is stored transposed (As[k][m], rows padded by
// 4 floats: the stores hit 32 banks) so that a thread's fragments are
// ld.shared.v4 loads. Offsets into A, B and C are 64-bit.
struct GemmSimtSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // f32 only
  uint32_t block_m = 128;                      // block tile rows: 32, 64 or 128
  uint32_t block_n = 128;                      // block tile columns: 32, 64 or 128
  uint32_t thread_m = 8;                       // thread tile rows: 4 or 8
  uint32_t thread_n = 8;                       // thread tile columns: 4 or 8

  absl::Status Validate() const;
  std::string KernelName() const;  // "gemm_simt_f32_128x128_8x8"
  uint32_t threads() const { return (block_m / thread_m) * (block_n / thread_n); }
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// The reference in double: alpha * A * B + beta * C (C not read when beta == 0).
std::vector<double> GemmSimtReference(std::span<const double> a, std::span<const double> b, std::span<const double> c,
                                      uint32_t m, uint32_t n, uint32_t k, double alpha, double beta);

class GemmSimtFamily : public SpecFamily<GemmSimtSpec> {
 public:
  std::string_view name() const override { return "gemm.simt"; }
  std::string_view description() const override {
    return "SGEMM C = alpha*A*B + beta*C: 128x128x8 block tiles, 8x8 per thread, double-buffered shared memory";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<GemmSimtSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_GEMM_SIMT_H_
