// The target table. Minimum PTX versions were checked against ptxas 13.0:
// each target is rejected by ptxas one PTX version below the one listed here.
#include "ir/target.h"

#include <array>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "ir/strings.h"

namespace ptxforge::ir {
namespace {

constexpr std::array<TargetInfo, 11> kTargets = {{
    {Target::kSm75, "sm_75", 75, false, {63}},
    {Target::kSm80, "sm_80", 80, false, {70}},
    {Target::kSm86, "sm_86", 86, false, {71}},
    {Target::kSm87, "sm_87", 87, false, {74}},
    {Target::kSm89, "sm_89", 89, false, {78}},
    {Target::kSm90, "sm_90", 90, false, {78}},
    {Target::kSm90a, "sm_90a", 90, true, {80}},
    {Target::kSm100, "sm_100", 100, false, {86}},
    {Target::kSm100a, "sm_100a", 100, true, {86}},
    {Target::kSm120, "sm_120", 120, false, {87}},
    {Target::kSm120a, "sm_120a", 120, true, {87}},
}};

// PTX ISA versions that exist (there is no 6.6-6.9 or 7.9), up to the
// newest one ptxas 13.0 accepts.
constexpr std::array<PtxVersion, 25> kPtxVersions = {{
    {60}, {61}, {62}, {63}, {64}, {65},
    {70}, {71}, {72}, {73}, {74}, {75}, {76}, {77}, {78},
    {80}, {81}, {82}, {83}, {84}, {85}, {86}, {87}, {88},
    {90},
}};

}  // namespace

std::string PtxVersion::ToString() const { return StrCat(major(), ".", minor()); }

std::span<const PtxVersion> KnownPtxVersions() {
  return kPtxVersions;
}

PtxVersion MaxPtxVersion() { return kPtxVersions.back(); }

absl::StatusOr<PtxVersion> ParsePtxVersion(std::string_view text) {
  size_t dot = text.find('.');
  int major = 0, minor = 0;
  if (dot == std::string_view::npos || dot + 2 != text.size() ||
      !absl::SimpleAtoi(ToAbsl(text.substr(0, dot)), &major) ||
      !absl::SimpleAtoi(ToAbsl(text.substr(dot + 1)), &minor)) {
    return absl::InvalidArgumentError(
        StrCat("bad PTX version '", text, "': expected MAJOR.MINOR such as 7.8"));
  }
  PtxVersion v{major * 10 + minor};
  for (PtxVersion known : KnownPtxVersions()) {
    if (known == v) return v;
  }
  std::vector<std::string> names;
  for (PtxVersion known : KnownPtxVersions()) names.push_back(known.ToString());
  return absl::InvalidArgumentError(StrCat("unknown PTX version ", text,
                                                 "; known versions: ", StrJoin(names, ", ")));
}

std::span<const TargetInfo> AllTargets() { return kTargets; }

const TargetInfo& GetTargetInfo(Target t) { return kTargets[static_cast<int>(t)]; }

std::string SupportedTargetList() {
  std::vector<std::string_view> names;
  for (const TargetInfo& info : kTargets) names.push_back(info.name);
  return StrJoin(names, ", ");
}

absl::StatusOr<Target> ParseTarget(std::string_view name) {
  for (const TargetInfo& info : kTargets) {
    if (info.name == name) return info.target;
  }
  return absl::InvalidArgumentError(
      StrCat("unknown target '", ForMessage(name), "'; supported targets: ", SupportedTargetList()));
}

uint32_t MaxSharedBytesPerBlock(Target t) {
  switch (GetTargetInfo(t).sm) {
    case 75: return 64 * 1024;
    case 80: case 87: return 163 * 1024;
    case 90: case 100: return 227 * 1024;
    default: return 99 * 1024;  // sm_86, sm_89, sm_120
  }
}

uint32_t MaxStaticSharedBytes(Target) { return 48 * 1024; }

bool TargetSatisfies(Target t, const TargetRequirement& req) {
  const TargetInfo& info = GetTargetInfo(t);
  if (req.arch_specific) return info.arch_specific && info.sm == req.sm;
  return info.sm >= req.sm;
}

std::string RequirementName(const TargetRequirement& req) {
  return StrCat("sm_", req.sm, req.arch_specific ? "a" : "");
}

}  // namespace ptxforge::ir
