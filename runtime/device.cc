// Argument checking and packing shared by every device.
#include "runtime/device.h"

#include "ir/strings.h"

namespace ptxforge::runtime {

namespace {
uint64_t NextDeviceId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

Device::Device() : id_(NextDeviceId()), alive_(std::make_shared<int>(0)) {}

LoadedKernel::LoadedKernel(const ir::Kernel& kernel, const Device& device)
    : name_(kernel.name), params_(kernel.params), bounds_(kernel.bounds), device_(device.ref()) {}

absl::Status DeviceGoneError(std::string_view what) {
  return absl::FailedPreconditionError(StrCat(what, ": its device was destroyed (a device must outlive its buffers)"));
}

absl::Status Device::CheckOwnKernel(const LoadedKernel& kernel, std::string_view what) const {
  const DeviceRef& r = kernel.device_ref();
  if (r.id == id_) return absl::OkStatus();
  if (r.gone()) {
    return absl::FailedPreconditionError(StrCat(what, ": kernel ", kernel.name(), " was loaded on a device that was "
                                                "destroyed (load it with this device's Load)"));
  }
  return absl::InvalidArgumentError(
      StrCat(what, ": kernel ", kernel.name(), " was not loaded on ", name(), " (load it with this device's Load)"));
}

absl::Status CheckArgs(const LoadedKernel& kernel, std::span<const KernelArg> args) {
  const auto& params = kernel.params();
  if (args.size() != params.size()) {
    std::vector<std::string> names;
    for (const ir::Param& p : params) names.push_back(StrCat(p.name, ":", ir::TypeName(p.type)));
    return absl::InvalidArgumentError(StrCat("kernel ", kernel.name(), " takes ", params.size(), " argument(s) (",
                                             StrJoin(names, ", "), "), got ", args.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Param& p = params[i];
    const KernelArg& a = args[i];
    auto describe = [](ir::ScalarType t, bool address) {
      return address ? std::string("a device buffer (u64 address)")
                     : StrCat(ir::TypeName(t), " (", ir::TypeSize(t), " bytes)");
    };
    bool ok = a.is_address ? ir::TypesCompatible(ir::ScalarType::kU64, p.type)
                           : ir::TypeSize(a.type) == ir::TypeSize(p.type) &&
                                 (ir::TypesCompatible(p.type, a.type) ||
                                  // f16/bf16 params take their bits from 16-bit integers
                                  (ir::IsHalfFamily(p.type) && ir::IsInteger(a.type)));
    if (!ok) {
      return absl::InvalidArgumentError(StrCat("kernel ", kernel.name(), ": param ", i, " '", p.name, "' is ",
                                               describe(p.type, false), ", got ", describe(a.type, a.is_address)));
    }
    // A negative int given for a u32 count would become a huge count.
    if (!a.is_address && ir::IsInteger(p.type) && ir::IsInteger(a.type) && !ir::IsBits(p.type) &&
        !ir::IsBits(a.type) && ir::IsSigned(p.type) != ir::IsSigned(a.type)) {
      const bool want_signed = ir::IsSigned(p.type);
      return absl::InvalidArgumentError(
          StrCat("kernel ", kernel.name(), ": param ", i, " '", p.name, "' is ", ir::TypeName(p.type),
                 want_signed ? " (signed), got " : " (unsigned), got ", ir::TypeName(a.type),
                 want_signed ? " (an unsigned C++ integer); pass an int" : " (a signed C++ integer); pass a uint",
                 ir::TypeBits(p.type), "_t"));
    }
  }
  return absl::OkStatus();
}

std::vector<uint32_t> ParamOffsets(const std::vector<ir::Param>& params, uint32_t* total) {
  std::vector<uint32_t> offsets;
  uint32_t end = 0;
  for (const ir::Param& p : params) {
    uint32_t size = static_cast<uint32_t>(ir::TypeSize(p.type));
    uint32_t offset = (end + size - 1) / size * size;
    offsets.push_back(offset);
    end = offset + size;
  }
  *total = end;
  return offsets;
}

std::vector<uint8_t> PackArgs(const LoadedKernel& kernel, std::span<const KernelArg> args) {
  uint32_t total = 0;
  const auto& params = kernel.params();
  std::vector<uint32_t> offsets = ParamOffsets(params, &total);
  std::vector<uint8_t> out(total, 0);
  for (size_t i = 0; i < params.size() && i < args.size(); ++i) {
    std::memcpy(out.data() + offsets[i], &args[i].bits, static_cast<size_t>(ir::TypeSize(params[i].type)));
  }
  return out;
}

absl::Status CheckLaunchConfig(const LoadedKernel& kernel, const LaunchConfig& c) {
  auto dims = [](const Dim3& d) { return StrCat(d.x, "x", d.y, "x", d.z); };
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0) {
    return absl::InvalidArgumentError(StrCat("kernel ", kernel.name(), ": grid ", dims(c.grid), " has a zero dimension"));
  }
  if (c.block.x == 0 || c.block.y == 0 || c.block.z == 0) {
    return absl::InvalidArgumentError(StrCat("kernel ", kernel.name(), ": block ", dims(c.block), " has a zero dimension"));
  }
  if (c.block.count() > 1024 || c.block.x > 1024 || c.block.y > 1024 || c.block.z > 64) {
    return absl::InvalidArgumentError(StrCat("kernel ", kernel.name(), ": block ", dims(c.block),
                                             " exceeds the limits (1024 threads; x, y <= 1024, z <= 64)"));
  }
  if (c.grid.x > 0x7FFFFFFFu || c.grid.y > 65535 || c.grid.z > 65535) {
    return absl::InvalidArgumentError(StrCat("kernel ", kernel.name(), ": grid ", dims(c.grid),
                                             " exceeds the limits (x <= 2147483647, y, z <= 65535)"));
  }
  const ir::LaunchBounds& b = kernel.bounds();
  if (b.reqntid[0] != 0 && (c.block.x != b.reqntid[0] || c.block.y != b.reqntid[1] || c.block.z != b.reqntid[2])) {
    return absl::InvalidArgumentError(StrCat("kernel ", kernel.name(), " requires blocks of exactly ",
                                             b.reqntid[0], "x", b.reqntid[1], "x", b.reqntid[2],
                                             " threads (.reqntid), got ", dims(c.block)));
  }
  if (b.maxntid[0] != 0 && c.block.count() > uint64_t{b.maxntid[0]} * b.maxntid[1] * b.maxntid[2]) {
    return absl::InvalidArgumentError(StrCat("kernel ", kernel.name(), " allows at most ",
                                             uint64_t{b.maxntid[0]} * b.maxntid[1] * b.maxntid[2],
                                             " threads per block (.maxntid), got ", dims(c.block)));
  }
  return absl::OkStatus();
}

}  // namespace ptxforge::runtime
