// NF4 quantisation and dequantisation on the CPU.
#include "kernels/nf4_format.h"

#include <cmath>

#include "ir/strings.h"

namespace ptxforge::kernels {
namespace {

absl::Status CheckShape(std::string_view what, uint32_t k, uint32_t n) {
  if (k == 0 || n == 0) return absl::InvalidArgumentError(StrCat(what, ": empty matrix (K=", k, ", N=", n, ")"));
  if (k % kNf4BlockSize != 0) {
    return absl::InvalidArgumentError(StrCat(what, ": K=", k, " is not a multiple of the NF4 block size 64"));
  }
  return absl::OkStatus();
}

}  // namespace

uint8_t Nf4NearestIndex(double normalized) {
  uint8_t best = 0;
  double best_distance = std::fabs(normalized - kNf4Codebook[0]);
  for (uint8_t i = 1; i < kNf4Codebook.size(); ++i) {
    double d = std::fabs(normalized - kNf4Codebook[i]);
    if (d < best_distance) {  // strictly closer: a tie keeps the lower index
      best = i;
      best_distance = d;
    }
  }
  return best;
}

absl::StatusOr<Nf4Matrix> QuantizeNf4(std::span<const float> b, uint32_t k, uint32_t n) {
  if (absl::Status s = CheckShape("nf4 quantize", k, n); !s.ok()) return s;
  if (b.size() != size_t{k} * n) {
    return absl::InvalidArgumentError(
        StrCat("nf4 quantize: ", b.size(), " values for a ", k, "x", n, " matrix (expected ", size_t{k} * n, ")"));
  }
  for (size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(b[i])) {
      return absl::InvalidArgumentError(StrCat("nf4 quantize: element [", i / n, ", ", i % n, "] is ",
                                               std::isnan(b[i]) ? "NaN" : "infinite"));
    }
  }
  const uint32_t blocks = k / kNf4BlockSize;
  Nf4Matrix q;
  q.k = k;
  q.n = n;
  q.data.assign(size_t{k} * n / 2, 0);
  q.scales.assign(size_t{n} * blocks, 0.0f);
  for (uint32_t col = 0; col < n; ++col) {
    for (uint32_t kb = 0; kb < blocks; ++kb) {
      const size_t block = size_t{col} * blocks + kb;
      float scale = 0;
      for (uint32_t e = 0; e < kNf4BlockSize; ++e) {
        scale = std::max(scale, std::fabs(b[(size_t{kb} * kNf4BlockSize + e) * n + col]));
      }
      q.scales[block] = scale;
      for (uint32_t e = 0; e < kNf4BlockSize; ++e) {
        const float x = b[(size_t{kb} * kNf4BlockSize + e) * n + col];
        const uint8_t index = scale == 0 ? 7 : Nf4NearestIndex(double{x} / double{scale});
        q.data[block * kNf4BlockBytes + e / 2] |= static_cast<uint8_t>(e % 2 == 0 ? index : index << 4);
      }
    }
  }
  return q;
}

absl::StatusOr<std::vector<float>> DequantizeNf4(const Nf4Matrix& q) {
  if (absl::Status s = CheckShape("nf4 dequantize", q.k, q.n); !s.ok()) return s;
  const uint32_t blocks = q.k / kNf4BlockSize;
  if (q.data.size() != size_t{q.k} * q.n / 2) {
    return absl::InvalidArgumentError(StrCat("nf4 dequantize: data has ", q.data.size(), " bytes, expected K*N/2 = ",
                                             size_t{q.k} * q.n / 2));
  }
  if (q.scales.size() != size_t{q.n} * blocks) {
    return absl::InvalidArgumentError(StrCat("nf4 dequantize: scales has ", q.scales.size(),
                                             " values, expected N*K/64 = ", size_t{q.n} * blocks));
  }
  std::vector<float> b(size_t{q.k} * q.n);
  for (uint32_t col = 0; col < q.n; ++col) {
    for (uint32_t kb = 0; kb < blocks; ++kb) {
      const size_t block = size_t{col} * blocks + kb;
      for (uint32_t e = 0; e < kNf4BlockSize; ++e) {
        const uint8_t byte = q.data[block * kNf4BlockBytes + e / 2];
        const uint8_t index = e % 2 == 0 ? byte & 0xF : byte >> 4;
        b[(size_t{kb} * kNf4BlockSize + e) * q.n + col] = q.scales[block] * kNf4Codebook[index];
      }
    }
  }
  return b;
}

}  // namespace ptxforge::kernels
