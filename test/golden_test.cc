// Golden files: the IR dump and sm_80 PTX of every registry kernel, byte for byte.
//
// Regenerate with:  PTXFORGE_UPDATE_GOLDEN=1 ./build/test/golden_test
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "emit/ir_printer.h"
#include "emit/ptx_printer.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using testing::Msg;

constexpr std::string_view kRegenerate = "PTXFORGE_UPDATE_GOLDEN=1 ./build/test/golden_test";

std::filesystem::path GoldenDir() { return std::filesystem::path(PTXFORGE_SOURCE_DIR) / "test" / "golden"; }

bool Updating() {
  const char* env = std::getenv("PTXFORGE_UPDATE_GOLDEN");
  return env != nullptr && std::string_view(env) == "1";
}

// The golden files a registry family owns.
std::string IrFile(std::string_view family) { return StrCat(family, ".ir"); }
std::string PtxFile(std::string_view family) { return StrCat(family, ".sm_80.ptx"); }

// Compares `actual` with the golden file `name`, or rewrites it when updating.
void CheckGolden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = GoldenDir() / name;
  if (Updating()) {
    std::filesystem::create_directories(GoldenDir());
    std::ofstream out(path, std::ios::binary);
    out << actual;
    REQUIRE(out.good());
    WARN("rewrote " << path.string());
    return;
  }
  std::optional<std::string> expected = testing::ReadFile(path.string());
  if (!expected) FAIL("missing golden file test/golden/" << name << "; create it with: " << kRegenerate);
  if (*expected != actual) {
    FAIL("test/golden/" << name << " differs from what the code produces; if the change is intended, run: "
                        << kRegenerate << "\n--- produced:\n"
                        << actual);
  }
}

TEST_CASE("every registry kernel matches its golden IR and PTX", "[golden]") {
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    INFO("kernel family " << family->name());
    absl::StatusOr<ir::Kernel> kernel = testing::BuildRegistryKernel(*family, ir::Target::kSm80);
    REQUIRE(Msg(kernel) == "OK");
    absl::StatusOr<std::string> ptx = emit::PrintPtx(*kernel);
    REQUIRE(Msg(ptx) == "OK");
    CheckGolden(IrFile(family->name()), emit::PrintIr(*kernel));
    CheckGolden(PtxFile(family->name()), *ptx);
  }
}

TEST_CASE("every golden file belongs to a registry kernel", "[golden]") {
  std::set<std::string> owned;
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    owned.insert(IrFile(family->name()));
    owned.insert(PtxFile(family->name()));
  }
  REQUIRE(std::filesystem::is_directory(GoldenDir()));
  for (const auto& entry : std::filesystem::directory_iterator(GoldenDir())) {
    std::string name = entry.path().filename().string();
    if (!owned.contains(name)) {
      FAIL("test/golden/" << name << " belongs to no registry kernel; delete it (or restore the kernel)");
    }
  }
}

}  // namespace
}  // namespace ptxforge
