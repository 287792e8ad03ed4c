// GPU targets (sm_XX) and PTX ISA versions: which PTX each target needs.
#ifndef PTXFORGE_IR_TARGET_H_
#define PTXFORGE_IR_TARGET_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ptxforge::ir {

// A PTX ISA version such as 7.8, stored as major * 10 + minor.
struct PtxVersion {
  int value = 0;  // 78 for PTX 7.8
  int major() const { return value / 10; }
  int minor() const { return value % 10; }
  std::string ToString() const;  // "7.8"
  friend auto operator<=>(PtxVersion, PtxVersion) = default;
};

// Parses "7.8"; rejects versions this library does not know.
absl::StatusOr<PtxVersion> ParsePtxVersion(std::string_view text);
// Every PTX ISA version ptxforge can print, ascending.
std::span<const PtxVersion> KnownPtxVersions();
// The newest PTX ISA version ptxforge prints.
PtxVersion MaxPtxVersion();

enum class Target : uint8_t {
  kSm75, kSm80, kSm86, kSm87, kSm89, kSm90, kSm90a,
  kSm100, kSm100a, kSm120, kSm120a,
};

struct TargetInfo {
  Target target;
  std::string_view name;  // "sm_90a"
  int sm;                 // 90
  bool arch_specific;     // the "a" targets
  PtxVersion min_ptx;     // lowest PTX ISA version that accepts the target
};

// All supported targets, in ascending order.
std::span<const TargetInfo> AllTargets();
const TargetInfo& GetTargetInfo(Target t);
inline std::string_view TargetName(Target t) { return GetTargetInfo(t).name; }
// Parses "sm_80"; the error lists the supported targets.
absl::StatusOr<Target> ParseTarget(std::string_view name);
// "sm_75, sm_80, ..." for messages.
std::string SupportedTargetList();
// The most shared memory one block may use on the target (static plus
// dynamic, with the driver's opt-in above 48 KiB): sm_75 64 KiB, sm_80/87
// 163 KiB, sm_86/89/120 99 KiB, sm_90/100 227 KiB.
uint32_t MaxSharedBytesPerBlock(Target t);

// A requirement on the target: at least `sm`, and (when arch_specific) an "a"
// target of exactly that SM.
struct TargetRequirement {
  int sm = 0;
  bool arch_specific = false;
  PtxVersion ptx{0};
};
bool TargetSatisfies(Target t, const TargetRequirement& req);

// The most static shared memory (`.shared` arrays, with their alignment
// padding) a kernel may declare: 48 KiB on every supported target (ptxas:
// "uses too much shared data (0xc001 bytes, 0xc000 max)"). Only dynamic
// shared memory may go beyond it, with the launch-time opt-in.
uint32_t MaxStaticSharedBytes(Target t);
// "sm_80", "sm_90a": how to name a requirement in a message.
std::string RequirementName(const TargetRequirement& req);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_TARGET_H_
