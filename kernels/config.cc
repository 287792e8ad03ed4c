// Config parsing and typed access.
#include "kernels/config.h"

#include "absl/strings/numbers.h"
#include "ir/strings.h"
#include "ir/target.h"

namespace ptxforge::kernels {

absl::StatusOr<Config> Config::Make(std::string_view family, std::span<const ConfigField> fields,
                                    std::span<const std::pair<std::string, std::string>> overrides) {
  Config c;
  c.family_ = std::string(family);
  for (const ConfigField& f : fields) c.values_[f.name] = f.default_value;
  for (const auto& [key, value] : overrides) {
    auto it = c.values_.find(key);
    if (it == c.values_.end()) {
      std::vector<std::string_view> keys;
      for (const ConfigField& f : fields) keys.push_back(f.name);
      return absl::InvalidArgumentError(StrCat("unknown setting '", ForMessage(key), "' for ", family,
                                               "; valid keys: ", keys.empty() ? "(none)" : StrJoin(keys, ", ")));
    }
    // The default's kind is the field's kind.
    std::string def;
    for (const ConfigField& f : fields) {
      if (f.name == key) def = f.default_value;
    }
    it->second = value;
    uint32_t u = 0;
    bool b = false;
    double d = 0;
    if (absl::SimpleAtoi(def, &u)) {
      if (absl::Status s = c.GetU32(key).status(); !s.ok()) return s;
    } else if (absl::SimpleAtob(def, &b) && (def == "true" || def == "false")) {
      if (absl::Status s = c.GetBool(key).status(); !s.ok()) return s;
    } else if (absl::SimpleAtod(def, &d)) {
      if (absl::Status s = c.GetDouble(key).status(); !s.ok()) return s;
    }
  }
  return c;
}

absl::StatusOr<std::string> Config::GetString(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return absl::InternalError(StrCat(family_, ": no setting '", key, "'"));
  return it->second;
}

absl::StatusOr<uint32_t> Config::GetU32(std::string_view key) const {
  absl::StatusOr<std::string> s = GetString(key);
  if (!s.ok()) return s.status();
  uint32_t v = 0;
  if (!absl::SimpleAtoi(*s, &v)) {
    return absl::InvalidArgumentError(
        StrCat(family_, ": ", key, "=", ForMessage(*s), " is not an unsigned 32-bit integer"));
  }
  return v;
}

absl::StatusOr<double> Config::GetDouble(std::string_view key) const {
  absl::StatusOr<std::string> s = GetString(key);
  if (!s.ok()) return s.status();
  double v = 0;
  if (!absl::SimpleAtod(*s, &v)) {
    return absl::InvalidArgumentError(StrCat(family_, ": ", key, "=", ForMessage(*s), " is not a number"));
  }
  return v;
}

absl::StatusOr<bool> Config::GetBool(std::string_view key) const {
  absl::StatusOr<std::string> s = GetString(key);
  if (!s.ok()) return s.status();
  bool v = false;
  if (!absl::SimpleAtob(*s, &v)) {
    return absl::InvalidArgumentError(StrCat(family_, ": ", key, "=", ForMessage(*s), " is not a boolean (true/false, 1/0)"));
  }
  return v;
}

absl::StatusOr<ir::ScalarType> Config::GetType(std::string_view key, std::span<const ir::ScalarType> allowed) const {
  absl::StatusOr<std::string> s = GetString(key);
  if (!s.ok()) return s.status();
  std::optional<ir::ScalarType> t = ir::ParseType(*s);
  for (ir::ScalarType a : allowed) {
    if (t && *t == a) return a;
  }
  std::vector<std::string_view> names;
  for (ir::ScalarType a : allowed) names.push_back(ir::TypeName(a));
  return absl::InvalidArgumentError(StrCat(family_, ": ", key, "=", ForMessage(*s), " is not supported; choose one of ",
                                                 StrJoin(names, ", ")));
}

absl::Status Config::GetTypeAndBlock(std::span<const ir::ScalarType> allowed, ir::ScalarType* type,
                                     uint32_t* block) const {
  absl::StatusOr<ir::ScalarType> t = GetType("type", allowed);
  if (!t.ok()) return t.status();
  absl::StatusOr<uint32_t> b = GetU32("block");
  if (!b.ok()) return b.status();
  *type = *t;
  *block = *b;
  return absl::OkStatus();
}

absl::Status CheckTypeOnTarget(std::string_view family, ir::ScalarType type, ir::Target target) {
  if (type != ir::ScalarType::kBF16 || ir::GetTargetInfo(target).sm >= 80) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat(family, ": bf16 needs sm_80 or newer (cvt between bf16 and f32), not ", ir::TargetName(target)));
}

absl::StatusOr<GemmTestShape> GetGemmTestShape(std::string_view family, const Config& config) {
  GemmTestShape shape;
  for (auto [key, field] : {std::pair{"m", &shape.m}, std::pair{"n", &shape.n}, std::pair{"k", &shape.k}}) {
    absl::StatusOr<uint32_t> v = config.GetU32(key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  for (auto [key, field] : {std::pair{"alpha", &shape.alpha}, std::pair{"beta", &shape.beta}}) {
    absl::StatusOr<double> v = config.GetDouble(key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  // k = 0 is a valid product (C = beta * C, plus the bias); an empty C has no launch.
  for (auto [key, v] : {std::pair{"m", shape.m}, std::pair{"n", shape.n}}) {
    if (v == 0) return absl::InvalidArgumentError(StrCat(family, ": ", key, "=0 must be positive (k may be 0)"));
  }
  return shape;
}

}  // namespace ptxforge::kernels
