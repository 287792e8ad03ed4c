// Test problems: generated inputs, the launch shape and the reference
// outputs for one configuration of a kernel family. Devices run them
// (kernels/problem_runner.h); CompareOutput judges the result.
#ifndef PTXFORGE_KERNELS_PROBLEM_H_
#define PTXFORGE_KERNELS_PROBLEM_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/types.h"

namespace ptxforge::kernels {

// Device memory for one pointer param: initial contents and, for outputs,
// the reference result.
struct HostBuffer {
  std::string name;
  ir::ScalarType type = ir::ScalarType::kF32;
  std::vector<uint8_t> data;       // initial contents
  bool is_output = false;          // compared after the run
  std::vector<uint8_t> expected;   // reference result, same layout as data
  // An element matches when it equals the expected value or |actual - expected| <=
  // tolerance * max(|expected|, magnitude); tolerance 0 means bit-exact (integers).
  double tolerance = 0;
  double magnitude = 1;

  size_t count() const { return data.size() / ir::TypeSize(type); }
};

// A scalar argument (the bits of a value of `type`).
struct HostScalar {
  ir::ScalarType type = ir::ScalarType::kU32;
  uint64_t bits = 0;
};

struct TestProblem {
  std::vector<HostBuffer> buffers;
  // One entry per kernel param: a buffer index or a scalar.
  std::vector<std::variant<size_t, HostScalar>> args;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
  std::string shape;  // "n=1000" for reports
};

// ---- building problems

// The most host memory one generated test problem may use (inputs, outputs,
// references and the reference's working copies): 1 GiB. A larger test shape
// is refused before anything is allocated.
inline constexpr uint64_t kMaxProblemBytes = uint64_t{1} << 30;
// `count` elements of `bytes_per_element` bytes each.
struct ProblemPart {
  uint64_t count;
  uint64_t bytes_per_element;
};
// OK when the parts fit kMaxProblemBytes (computed without overflow); else
// "FAMILY: SHAPE needs more than the 1073741824 bytes of test data a problem may use".
absl::Status CheckProblemSize(std::string_view family, std::string_view shape, std::initializer_list<ProblemPart> parts);
// ceil(n / block) blocks in 64 bits, or an error when that is more than
// CUDA's 2^31-1 blocks in x.
absl::StatusOr<uint32_t> GridFor(std::string_view family, uint64_t n, uint32_t block);
// ceil(rows / block_rows) blocks in y, or an error when that is more than
// CUDA's 65535: "<family>: <name>=<rows> needs N blocks of <block_rows> rows, more than CUDA's 65535".
absl::StatusOr<uint32_t> GridYFor(std::string_view family, std::string_view name, uint32_t rows, uint32_t block_rows);

// Values in [lo, hi): uniform floats, or integers for integer types.
HostBuffer RandomBuffer(std::string name, ir::ScalarType type, size_t count, std::mt19937_64& rng, double lo, double hi);
HostBuffer ZeroBuffer(std::string name, ir::ScalarType type, size_t count);
// The elements as doubles (integers exactly up to 2^53) or as 64-bit
// integers (sign- or zero-extended).
std::vector<double> AsDoubles(ir::ScalarType type, std::span<const uint8_t> bytes);
std::vector<int64_t> AsInts(ir::ScalarType type, std::span<const uint8_t> bytes);
// Encodes values into `type` (floats rounded to nearest; integers wrap).
std::vector<uint8_t> FromDoubles(ir::ScalarType type, std::span<const double> values);
std::vector<uint8_t> FromInts(ir::ScalarType type, std::span<const int64_t> values);
HostScalar Scalar(ir::ScalarType type, uint64_t bits);
HostScalar ScalarU32(uint32_t v);
// The relative tolerance KERNELS.md sets for a storage type: f64 1e-12,
// f32 1e-5, f16/bf16 1e-2, integers exact.
double DefaultTolerance(ir::ScalarType type);

// ---- judging results

struct Comparison {
  size_t elements = 0;
  size_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;  // relative to max(|expected|, magnitude)
  std::string first_mismatch;  // "c[17]: got 3.5, expected 3.25"
  bool ok() const { return mismatches == 0; }
};
Comparison CompareOutput(const HostBuffer& buffer, std::span<const uint8_t> actual);

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_PROBLEM_H_
