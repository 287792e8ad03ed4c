// EmulatorProfile: sums, lookups and the text report (ptx-dump --profile).
#include <algorithm>

#include "absl/strings/str_format.h"
#include "ir/strings.h"
#include "runtime/emulator_profile.h"

namespace ptxforge::runtime {
namespace {

double Ratio(uint64_t a, uint64_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b); }

}  // namespace

double ProfileCounts::sectors_per_request() const { return Ratio(sectors, global_requests); }
double ProfileCounts::active_lanes_per_instruction() const { return Ratio(thread_executions, warp_executions); }

ProfileCounts& ProfileCounts::operator+=(const ProfileCounts& o) {
  warp_executions += o.warp_executions;
  thread_executions += o.thread_executions;
  global_requests += o.global_requests;
  global_bytes += o.global_bytes;
  sectors += o.sectors;
  ideal_sectors += o.ideal_sectors;
  lines += o.lines;
  shared_requests += o.shared_requests;
  wavefronts += o.wavefronts;
  ideal_wavefronts += o.ideal_wavefronts;
  branch_executions += o.branch_executions;
  branch_splits += o.branch_splits;
  return *this;
}

const InstructionProfile* EmulatorProfile::Find(uint32_t index) const {
  for (const InstructionProfile& i : instructions) {
    if (i.index == index) return &i;
  }
  return nullptr;
}

std::string EmulatorProfile::Summary() const {
  const ProfileCounts& t = total;
  return absl::StrFormat(
      "global: %d requests, %.2f sectors/request, %d excess sectors (%d ideal), %d lines; shared: %d requests, %d bank "
      "conflicts (%d wavefronts); branches: %d warp executions, %d splits; %.2f active lanes/instruction",
      t.global_requests, t.sectors_per_request(), t.excess_sectors(), t.ideal_sectors, t.lines, t.shared_requests,
      t.bank_conflicts(), t.wavefronts, t.branch_executions, t.branch_splits, t.active_lanes_per_instruction());
}

std::string EmulatorProfile::Table(int top) const {
  std::string out = StrCat("profile: ", Summary(), "\n");
  auto section = [&](std::string_view title, auto value, auto describe) {
    std::vector<const InstructionProfile*> rows;
    for (const InstructionProfile& i : instructions) {
      if (value(i.counts) > 0) rows.push_back(&i);
    }
    // Most first; ties in body order, so the table is deterministic.
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const InstructionProfile* a, const InstructionProfile* b) { return value(a->counts) > value(b->counts); });
    if (rows.size() > static_cast<size_t>(std::max(top, 0))) rows.resize(static_cast<size_t>(std::max(top, 0)));
    StrAppend(&out, title, rows.empty() ? ": none\n" : ":\n");
    for (const InstructionProfile* i : rows) {
      StrAppend(&out, "  ", describe(i->counts), "  ", i->ptx, i->loc.empty() ? std::string() : StrCat("  (", i->loc, ")"),
                "\n");
    }
  };
  section(
      "top instructions by excess sectors", [](const ProfileCounts& c) { return c.excess_sectors(); },
      [](const ProfileCounts& c) {
        return absl::StrFormat("%8d excess sectors, %5.2f sectors/request, %d requests", c.excess_sectors(),
                               c.sectors_per_request(), c.global_requests);
      });
  section(
      "top instructions by bank conflicts", [](const ProfileCounts& c) { return c.bank_conflicts(); },
      [](const ProfileCounts& c) {
        return absl::StrFormat("%8d bank conflicts, %5.2f wavefronts/request, %d requests", c.bank_conflicts(),
                               Ratio(c.wavefronts, c.shared_requests), c.shared_requests);
      });
  return out;
}

}  // namespace ptxforge::runtime
