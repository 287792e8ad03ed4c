// NF4 (4-bit NormalFloat) weights: the codebook, the packed layout, and the
// CPU quantizer and dequantizer.
#ifndef PTXFORGE_KERNELS_NF4_FORMAT_H_
#define PTXFORGE_KERNELS_NF4_FORMAT_H_

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace ptxforge::kernels {

// The 16 NF4 values, index 0..15 (KERNELS.md).
inline constexpr std::array<float, 16> kNf4Codebook = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};
// Values per quantisation block (along K) and bytes per block.
inline constexpr uint32_t kNf4BlockSize = 64;
inline constexpr uint32_t kNf4BlockBytes = kNf4BlockSize / 2;
// The widest gap between neighbouring codebook entries (-1 .. -0.696):
// quantisation moves a value by at most half of it times its block's scale.
inline constexpr double kNf4MaxGap = double{kNf4Codebook[1]} - double{kNf4Codebook[0]};

// A K x N matrix in NF4: per (column n, block kb) the scale (the block's
// absolute maximum) at scales[n * (K/64) + kb] and 32 bytes at
// data[(n * (K/64) + kb) * 32 + i]; element 2i of the block is the low
// nibble of byte i, element 2i+1 the high nibble; value = scale *
// kNf4Codebook[nibble].
struct Nf4Matrix {
  uint32_t k = 0;
  uint32_t n = 0;
  std::vector<uint8_t> data;   // k * n / 2 bytes
  std::vector<float> scales;   // n * k / 64
};

// The index of the codebook entry nearest to `normalized` (ties: the lower index).
uint8_t Nf4NearestIndex(double normalized);

// Quantizes the row-major K x N matrix `b`: each block of 64 values along K
// of one column gets the scale absmax (0 for an all-zero block, whose
// values all become index 7, 0.0) and each value the codebook entry nearest
// to value / scale. Errors: an empty matrix, K not a multiple of 64, a size
// that is not K * N, a NaN or infinite value (naming the element).
absl::StatusOr<Nf4Matrix> QuantizeNf4(std::span<const float> b, uint32_t k, uint32_t n);

// The row-major K x N matrix `q` stands for. Errors: an empty matrix, K not a
// multiple of 64, data or scales of the wrong size.
absl::StatusOr<std::vector<float>> DequantizeNf4(const Nf4Matrix& q);

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_NF4_FORMAT_H_
