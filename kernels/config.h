// Kernel configurations as key=value settings (what `ptx-dump --set` edits).
#ifndef PTXFORGE_KERNELS_CONFIG_H_
#define PTXFORGE_KERNELS_CONFIG_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/target.h"
#include "ir/types.h"

namespace ptxforge::kernels {

// One configuration field a kernel family declares. Its default decides what
// values it takes: an unsigned integer default ("256") takes unsigned 32-bit
// integers, "true"/"false" takes booleans, any other number ("0.5", "1e-5")
// takes numbers, and anything else any text (the family checks it when it
// builds). Write a float field's default with a point ("1.0").
struct ConfigField {
  std::string name;
  std::string default_value;
  std::string help;
};

// Settings for one kernel family: every declared field has a value (its
// default unless overridden). Getters fail with a message naming the field
// and the bad value.
class Config {
 public:
  // The family's defaults with `overrides` applied. An unknown key, or a value
  // not of the kind the field's default has, is an error (user text in
  // messages is cut with ForMessage).
  static absl::StatusOr<Config> Make(std::string_view family, std::span<const ConfigField> fields,
                                     std::span<const std::pair<std::string, std::string>> overrides);

  absl::StatusOr<std::string> GetString(std::string_view key) const;
  absl::StatusOr<uint32_t> GetU32(std::string_view key) const;
  absl::StatusOr<double> GetDouble(std::string_view key) const;
  absl::StatusOr<bool> GetBool(std::string_view key) const;
  // A type name ("f32"); must be one of `allowed`.
  absl::StatusOr<ir::ScalarType> GetType(std::string_view key, std::span<const ir::ScalarType> allowed) const;

  // The "type" (one of `allowed`) and "block" fields most families have.
  absl::Status GetTypeAndBlock(std::span<const ir::ScalarType> allowed, ir::ScalarType* type, uint32_t* block) const;

  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }

 private:
  std::string family_;
  std::map<std::string, std::string, std::less<>> values_;
};

// The test shape of a GEMM family's config: its "m", "n", "k" fields (m and n
// positive, else "<family>: m=0 must be positive (k may be 0)"; k = 0 gives
// C = beta * C plus the bias) and "alpha", "beta".
struct GemmTestShape {
  uint32_t m = 0, n = 0, k = 0;
  double alpha = 0, beta = 0;
};
absl::StatusOr<GemmTestShape> GetGemmTestShape(std::string_view family, const Config& config);

// OK, or "<family>: bf16 needs sm_80 or newer (cvt between bf16 and f32), not
// sm_75" when `type` is bf16 and `target` predates sm_80 (the families that
// store bf16 and compute in f32 convert with cvt, which bf16 lacks before sm_80).
absl::Status CheckTypeOnTarget(std::string_view family, ir::ScalarType type, ir::Target target);

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_CONFIG_H_
