// Host buffers: generation, encoding, and comparison with a tolerance.
#include "kernels/problem.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "ir/float_bits.h"
#include "ir/strings.h"

namespace ptxforge::kernels {
namespace {

double Element(ir::ScalarType type, const uint8_t* p) {
  switch (type) {
    case ir::ScalarType::kF32: { float v; std::memcpy(&v, p, 4); return v; }
    case ir::ScalarType::kF64: { double v; std::memcpy(&v, p, 8); return v; }
    case ir::ScalarType::kF16: { uint16_t v; std::memcpy(&v, p, 2); return ir::DecodeFloat(v, ir::kHalfFormat); }
    case ir::ScalarType::kBF16: { uint16_t v; std::memcpy(&v, p, 2); return ir::DecodeFloat(v, ir::kBF16Format); }
    default: break;
  }
  uint64_t bits = 0;
  int size = ir::TypeSize(type);
  std::memcpy(&bits, p, size);
  if (ir::IsSigned(type) && size < 8 && (bits >> (8 * size - 1)) & 1) bits |= ~uint64_t{0} << (8 * size);
  return ir::IsSigned(type) ? static_cast<double>(static_cast<int64_t>(bits)) : static_cast<double>(bits);
}

}  // namespace

std::vector<double> AsDoubles(ir::ScalarType type, std::span<const uint8_t> bytes) {
  const int size = ir::TypeSize(type);
  std::vector<double> out(bytes.size() / size);
  for (size_t i = 0; i < out.size(); ++i) out[i] = Element(type, bytes.data() + i * size);
  return out;
}

std::vector<int64_t> AsInts(ir::ScalarType type, std::span<const uint8_t> bytes) {
  const int size = ir::TypeSize(type);
  std::vector<int64_t> out(bytes.size() / size);
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * size, size);
    if (ir::IsSigned(type) && size < 8 && (bits >> (8 * size - 1)) & 1) bits |= ~uint64_t{0} << (8 * size);
    out[i] = static_cast<int64_t>(bits);
  }
  return out;
}

std::vector<uint8_t> FromDoubles(ir::ScalarType type, std::span<const double> values) {
  const int size = ir::TypeSize(type);
  std::vector<uint8_t> out(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* p = out.data() + i * size;
    switch (type) {
      case ir::ScalarType::kF32: { float v = static_cast<float>(values[i]); std::memcpy(p, &v, 4); break; }
      case ir::ScalarType::kF64: std::memcpy(p, &values[i], 8); break;
      case ir::ScalarType::kF16: { uint16_t v = static_cast<uint16_t>(ir::EncodeFloat(values[i], ir::kHalfFormat)); std::memcpy(p, &v, 2); break; }
      case ir::ScalarType::kBF16: { uint16_t v = static_cast<uint16_t>(ir::EncodeFloat(values[i], ir::kBF16Format)); std::memcpy(p, &v, 2); break; }
      default: {
        int64_t v = static_cast<int64_t>(values[i]);
        std::memcpy(p, &v, size);  // little-endian: the low bytes
        break;
      }
    }
  }
  return out;
}

std::vector<uint8_t> FromInts(ir::ScalarType type, std::span<const int64_t> values) {
  const int size = ir::TypeSize(type);
  std::vector<uint8_t> out(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) std::memcpy(out.data() + i * size, &values[i], size);
  return out;
}

absl::Status CheckProblemSize(std::string_view family, std::string_view shape, std::initializer_list<ProblemPart> parts) {
  uint64_t total = 0;
  bool over = false;
  for (const ProblemPart& p : parts) {
    uint64_t bytes = 0;
    over |= __builtin_mul_overflow(p.count, p.bytes_per_element, &bytes);
    over |= __builtin_add_overflow(total, bytes, &total);
  }
  if (over || total > kMaxProblemBytes) {
    return absl::InvalidArgumentError(StrCat(family, ": ", shape, " needs more than the ", kMaxProblemBytes,
                                             " bytes of test data a problem may use"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> GridFor(std::string_view family, uint64_t n, uint32_t block) {
  const uint64_t blocks = block == 0 ? 0 : (n + block - 1) / block;
  if (blocks > 0x7FFFFFFFu) {
    return absl::InvalidArgumentError(StrCat(family, ": ", n, " elements in blocks of ", block, " need ", blocks,
                                             " blocks, more than CUDA's 2147483647"));
  }
  return static_cast<uint32_t>(blocks);
}

absl::StatusOr<uint32_t> GridYFor(std::string_view family, std::string_view name, uint32_t rows, uint32_t block_rows) {
  const uint64_t blocks = (uint64_t{rows} + block_rows - 1) / block_rows;
  if (blocks > 65535) {
    return absl::InvalidArgumentError(StrCat(family, ": ", name, "=", rows, " needs ", blocks, " blocks of ", block_rows,
                                             " rows, more than CUDA's 65535"));
  }
  return static_cast<uint32_t>(blocks);
}

HostBuffer RandomBuffer(std::string name, ir::ScalarType type, size_t count, std::mt19937_64& rng, double lo, double hi) {
  HostBuffer b;
  b.name = std::move(name);
  b.type = type;
  if (ir::IsFloat(type)) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(count);
    for (double& x : v) x = dist(rng);
    b.data = FromDoubles(type, v);
  } else {
    std::uniform_int_distribution<int64_t> dist(static_cast<int64_t>(lo), static_cast<int64_t>(hi) - 1);
    std::vector<int64_t> v(count);
    for (int64_t& x : v) x = dist(rng);
    b.data = FromInts(type, v);
  }
  return b;
}

HostBuffer ZeroBuffer(std::string name, ir::ScalarType type, size_t count) {
  HostBuffer b;
  b.name = std::move(name);
  b.type = type;
  b.data.assign(count * ir::TypeSize(type), 0);
  return b;
}

HostScalar Scalar(ir::ScalarType type, uint64_t bits) { return HostScalar{type, bits}; }
HostScalar ScalarU32(uint32_t v) { return HostScalar{ir::ScalarType::kU32, v}; }

double DefaultTolerance(ir::ScalarType type) {
  switch (type) {
    case ir::ScalarType::kF64: return 1e-12;
    case ir::ScalarType::kF32: return 1e-5;
    case ir::ScalarType::kF16:
    case ir::ScalarType::kBF16: return 1e-2;
    default: return 0;
  }
}

Comparison CompareOutput(const HostBuffer& buffer, std::span<const uint8_t> actual) {
  Comparison c;
  const int size = ir::TypeSize(buffer.type);
  c.elements = buffer.expected.size() / size;
  if (actual.size() != buffer.expected.size()) {
    c.mismatches = c.elements;
    c.first_mismatch = StrCat(buffer.name, ": got ", actual.size(), " bytes, expected ", buffer.expected.size());
    return c;
  }
  for (size_t i = 0; i < c.elements; ++i) {
    const uint8_t* a = actual.data() + i * size;
    const uint8_t* e = buffer.expected.data() + i * size;
    double av = Element(buffer.type, a), ev = Element(buffer.type, e);
    bool match;
    double abs_error = 0, rel_error = 0;
    if (buffer.tolerance == 0) {
      match = std::memcmp(a, e, size) == 0;
      if (!match) abs_error = std::fabs(av - ev);
    } else if (std::isnan(ev) || std::isnan(av)) {
      match = std::isnan(ev) && std::isnan(av);
      abs_error = match ? 0 : INFINITY;
    } else if (av == ev) {
      match = true;  // equal values (infinities and zeros included) match whatever the magnitude
    } else {
      abs_error = std::fabs(av - ev);
      rel_error = abs_error / std::max(std::fabs(ev), buffer.magnitude);
      match = rel_error <= buffer.tolerance;
    }
    c.max_abs_error = std::max(c.max_abs_error, abs_error);
    c.max_rel_error = std::max(c.max_rel_error, rel_error);
    if (!match) {
      if (c.mismatches == 0) c.first_mismatch = StrCat(buffer.name, "[", i, "]: got ", av, ", expected ", ev);
      ++c.mismatches;
    }
  }
  return c;
}

}  // namespace ptxforge::kernels
