// NF4: the CPU quantizer/dequantizer (layout, ties, round trip, errors) and
// the nf4.gemm / nf4.gemm_transpose kernels on the emulator (awkward shapes,
// K = 64 and 640, every tile setting, every invalid configuration).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "kernels/nf4_format.h"
#include "kernels/nf4_gemm.h"
#include "kernels/problem_runner.h"
#include "passes/pass.h"
#include "runtime/emulator.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge {
namespace {

using kernels::kNf4Codebook;
using kernels::Nf4Matrix;
using testing::Msg;

using Overrides = std::vector<std::pair<std::string, std::string>>;

TEST_CASE("the NF4 gap constant is the widest codebook gap") {
  double widest = 0;
  for (size_t i = 1; i < kNf4Codebook.size(); ++i) {
    widest = std::max(widest, double{kNf4Codebook[i]} - double{kNf4Codebook[i - 1]});
  }
  CHECK(kernels::kNf4MaxGap == widest);
  CHECK(widest == 0.30380719900131226);
}

TEST_CASE("NF4 nearest index: exact entries, ties to the lower index") {
  for (uint8_t i = 0; i < 16; ++i) CHECK(kernels::Nf4NearestIndex(kNf4Codebook[i]) == i);
  // Halfway between entries 7 (0.0) and 8, and between 6 and 7: the lower index.
  CHECK(kernels::Nf4NearestIndex(double{kNf4Codebook[8]} / 2) == 7);
  CHECK(kernels::Nf4NearestIndex(double{kNf4Codebook[6]} / 2) == 6);
  CHECK(kernels::Nf4NearestIndex(std::nextafter(double{kNf4Codebook[8]} / 2, 1.0)) == 8);
  CHECK(kernels::Nf4NearestIndex(-1.5) == 0);
  CHECK(kernels::Nf4NearestIndex(1.5) == 15);
}

TEST_CASE("NF4 quantize packs KERNELS.md's layout") {
  // K = 128, N = 2: column 0 holds the codebook (scale 1) in both blocks,
  // column 1 twice the reversed codebook (scale 2) in block 0, zeros in block 1.
  const uint32_t k = 128, n = 2;
  std::vector<float> b(k * n);
  for (uint32_t row = 0; row < k; ++row) {
    b[row * n + 0] = kNf4Codebook[row % 16];
    b[row * n + 1] = row < 64 ? 2 * kNf4Codebook[15 - row % 16] : 0.0f;
  }
  absl::StatusOr<Nf4Matrix> q = kernels::QuantizeNf4(b, k, n);
  REQUIRE(Msg(q) == "OK");
  CHECK(q->k == k);
  CHECK(q->n == n);
  CHECK(q->scales == std::vector<float>{1, 1, 2, 0});
  REQUIRE(q->data.size() == 128);
  for (uint32_t i = 0; i < 32; ++i) {
    INFO("byte " << i);
    const uint32_t lo = (2 * i) % 16, hi = (2 * i + 1) % 16;
    CHECK(q->data[i] == (lo | hi << 4));                                // column 0, block 0
    CHECK(q->data[32 + i] == (lo | hi << 4));                           // column 0, block 1
    CHECK(q->data[64 + i] == ((15 - lo) | (15 - hi) << 4));             // column 1, block 0
    CHECK(q->data[96 + i] == (7 | 7 << 4));                             // column 1, block 1: zeros
  }
  absl::StatusOr<std::vector<float>> back = kernels::DequantizeNf4(*q);
  REQUIRE(Msg(back) == "OK");
  CHECK(*back == b);
}

TEST_CASE("NF4 round trip stays within half the widest gap times the block scale") {
  for (uint32_t k : {64u, 640u}) {
    const uint32_t n = 13;
    std::mt19937_64 rng(k);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::vector<float> b(size_t{k} * n);
    // A different magnitude per (row block, column), from 1e-3 to 1e3.
    for (uint32_t row = 0; row < k; ++row) {
      for (uint32_t col = 0; col < n; ++col) {
        b[row * n + col] = unit(rng) * std::pow(10.0f, static_cast<float>((row / 64 + col) % 7) - 3);
      }
    }
    absl::StatusOr<Nf4Matrix> q = kernels::QuantizeNf4(b, k, n);
    REQUIRE(Msg(q) == "OK");
    absl::StatusOr<std::vector<float>> back = kernels::DequantizeNf4(*q);
    REQUIRE(Msg(back) == "OK");
    size_t exact = 0;
    for (uint32_t row = 0; row < k; ++row) {
      for (uint32_t col = 0; col < n; ++col) {
        const float scale = q->scales[col * (k / 64) + row / 64];
        const double error = std::fabs(double{(*back)[row * n + col]} - b[row * n + col]);
        INFO("element [" << row << ", " << col << "] scale " << scale);
        CHECK(error <= kernels::kNf4MaxGap / 2 * scale * (1 + 1e-6));
        exact += error == 0;
      }
    }
    CHECK(exact >= n * (k / 64));  // at least each block's absmax comes back exactly
  }
}

TEST_CASE("NF4 quantize and dequantize reject bad input with a message") {
  std::vector<float> b(128, 0.5f);
  CHECK(Msg(kernels::QuantizeNf4(std::span<const float>(b).first(100), 100, 1)) ==
        "nf4 quantize: K=100 is not a multiple of the NF4 block size 64");
  CHECK(Msg(kernels::QuantizeNf4({}, 0, 3)) == "nf4 quantize: empty matrix (K=0, N=3)");
  CHECK(Msg(kernels::QuantizeNf4({}, 64, 0)) == "nf4 quantize: empty matrix (K=64, N=0)");
  CHECK(Msg(kernels::QuantizeNf4(b, 64, 1)) == "nf4 quantize: 128 values for a 64x1 matrix (expected 64)");
  b[7] = std::numeric_limits<float>::quiet_NaN();
  CHECK(Msg(kernels::QuantizeNf4(b, 64, 2)) == "nf4 quantize: element [3, 1] is NaN");
  b[7] = -std::numeric_limits<float>::infinity();
  CHECK(Msg(kernels::QuantizeNf4(b, 64, 2)) == "nf4 quantize: element [3, 1] is infinite");

  Nf4Matrix q;
  CHECK(Msg(kernels::DequantizeNf4(q)) == "nf4 dequantize: empty matrix (K=0, N=0)");
  q.k = 96;
  q.n = 1;
  CHECK(Msg(kernels::DequantizeNf4(q)) == "nf4 dequantize: K=96 is not a multiple of the NF4 block size 64");
  q.k = 128;
  q.n = 2;
  q.data.resize(127);
  q.scales.resize(4);
  CHECK(Msg(kernels::DequantizeNf4(q)) == "nf4 dequantize: data has 127 bytes, expected K*N/2 = 128");
  q.data.resize(128);
  q.scales.resize(2);
  CHECK(Msg(kernels::DequantizeNf4(q)) == "nf4 dequantize: scales has 2 values, expected N*K/64 = 4");
}

// Runs `family` on the emulator for each configuration; every one must match.
void RunConfigs(std::string_view name, const std::vector<Overrides>& configs,
                ir::Target target = ir::Target::kSm80) {
  const kernels::KernelFamily* family = kernels::FindFamily(name);
  REQUIRE(family != nullptr);
  auto emu = runtime::MakeEmulator();
  for (const Overrides& overrides : configs) {
    std::string shown;
    for (const auto& [key, value] : overrides) shown += key + "=" + value + " ";
    INFO(name << " " << shown);
    absl::StatusOr<kernels::Config> config = family->MakeConfig(overrides);
    REQUIRE(Msg(config) == "OK");
    absl::StatusOr<ir::Kernel> kernel = family->Build(*config, target);
    REQUIRE(Msg(kernel) == "OK");
    REQUIRE(Msg(passes::Pipeline::Standard().Run(*kernel)) == "OK");
    absl::StatusOr<kernels::TestProblem> problem = family->MakeProblem(*config, 7);
    REQUIRE(Msg(problem) == "OK");
    absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(*emu, *kernel, *problem);
    REQUIRE(Msg(result) == "OK");
    INFO(result->Report());
    CHECK(result->ok());
  }
}

TEST_CASE("nf4.gemm matches naive_gemm(A, dequantize(B)) on the emulator") {
  RunConfigs("nf4.gemm", {
                             {},
                             {{"k", "64"}},
                             {{"k", "640"}, {"m", "20"}, {"n", "70"}},
                             {{"m", "1"}, {"n", "1"}, {"k", "64"}},
                             {{"tile_m", "16"}, {"tile_n", "16"}, {"m", "35"}, {"n", "19"}, {"k", "192"}},
                             {{"tile_m", "32"}, {"tile_n", "128"}, {"m", "33"}, {"n", "130"}, {"k", "64"}},
                             {{"tile_m", "128"}, {"tile_n", "32"}, {"m", "131"}, {"n", "33"}, {"k", "64"}},
                         });
}

// On sm_75 the store of C finds the thread's and the block's coordinates
// again after the K loop: grids of several blocks in x and y, so that a
// swapped or stale coordinate stores to the wrong tile.
TEST_CASE("nf4.gemm built for sm_75 matches naive_gemm on the emulator") {
  RunConfigs("nf4.gemm",
             {
                 {{"m", "130"}, {"n", "140"}, {"k", "128"}},
                 {{"tile_m", "16"}, {"tile_n", "32"}, {"m", "35"}, {"n", "70"}, {"k", "64"}},
             },
             ir::Target::kSm75);
}

TEST_CASE("nf4.gemm_transpose matches naive_gemm(A, dequantize(B)^T) on the emulator") {
  RunConfigs("nf4.gemm_transpose", {
                                       {},
                                       {{"k", "64"}},
                                       {{"k", "640"}, {"m", "20"}, {"n", "70"}},
                                       {{"m", "1"}, {"n", "1"}, {"k", "64"}},
                                       {{"tile_m", "16"}, {"tile_n", "16"}, {"m", "35"}, {"n", "19"}, {"k", "192"}},
                                       {{"tile_m", "32"}, {"tile_n", "64"}, {"m", "33"}, {"n", "130"}, {"k", "64"}},
                                       {{"tile_m", "64"}, {"tile_n", "32"}, {"m", "65"}, {"n", "97"}, {"k", "640"}},
                                       {{"tile_m", "128"}, {"tile_n", "16"}, {"m", "131"}, {"n", "33"}, {"k", "64"}},
                                   });
}

std::string DumpError(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = tools::RunPtxDump(args, out, err);
  return StrCat(code, " ", err.str());
}

TEST_CASE("nf4 GEMM configurations are validated (API and ptx-dump --set)") {
  struct Case {
    std::string family;
    Overrides set;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"nf4.gemm", {{"tile_m", "24"}}, "nf4.gemm: tile_m=24 must be 16, 32, 64 or 128"},
      {"nf4.gemm", {{"tile_n", "256"}}, "nf4.gemm: tile_n=256 must be 16, 32, 64 or 128"},
      {"nf4.gemm", {{"tile_m", "128"}, {"tile_n", "64"}},
       "nf4.gemm: tile_m=128 and tile_n=64 need 49728 bytes of shared memory (at most 49152)"},
      {"nf4.gemm", {{"m", "0"}}, "nf4.gemm: m must be positive"},
      {"nf4.gemm", {{"n", "0"}}, "nf4.gemm: n must be positive"},
      {"nf4.gemm", {{"k", "0"}}, "nf4.gemm: k must be positive"},
      {"nf4.gemm", {{"k", "100"}}, "nf4.gemm: k=100 is not a multiple of the NF4 block size 64"},
      {"nf4.gemm_transpose", {{"tile_m", "8"}}, "nf4.gemm_transpose: tile_m=8 must be 16, 32, 64 or 128"},
      {"nf4.gemm_transpose", {{"tile_n", "128"}}, "nf4.gemm_transpose: tile_n=128 must be 16, 32 or 64"},
      {"nf4.gemm_transpose", {{"tile_m", "128"}, {"tile_n", "64"}},
       "nf4.gemm_transpose: tile_m=128 and tile_n=64 need 49728 bytes of shared memory (at most 49152)"},
      {"nf4.gemm_transpose", {{"tile_m", "64"}, {"tile_n", "64"}},
       "nf4.gemm_transpose: tile_m=64 and tile_n=64 give each thread 16 elements of A per step (at most 8)"},
      {"nf4.gemm_transpose", {{"m", "0"}}, "nf4.gemm_transpose: m must be positive"},
      {"nf4.gemm_transpose", {{"n", "0"}}, "nf4.gemm_transpose: n must be positive"},
      {"nf4.gemm_transpose", {{"k", "0"}}, "nf4.gemm_transpose: k must be positive"},
      {"nf4.gemm_transpose", {{"k", "96"}}, "nf4.gemm_transpose: k=96 is not a multiple of the NF4 block size 64"},
  };
  for (const Case& c : cases) {
    INFO(c.family << " " << c.set[0].first << "=" << c.set[0].second);
    const kernels::KernelFamily* family = kernels::FindFamily(c.family);
    REQUIRE(family != nullptr);
    absl::StatusOr<kernels::Config> config = family->MakeConfig(c.set);
    REQUIRE(Msg(config) == "OK");
    CHECK(Msg(family->Build(*config, ir::Target::kSm80)) == c.message);
    CHECK(Msg(family->MakeProblem(*config, 1)) == c.message);
    std::vector<std::string> args = {c.family};
    for (const auto& [key, value] : c.set) args.push_back(StrCat("--set=", key, "=", value));
    // A --set value the family refuses is a usage error (exit 2; issue 11 item 18).
    CHECK(DumpError(args) == StrCat("2 ptx-dump: ", c.message, "\n"));
  }
  // The spec structs directly.
  kernels::Nf4GemmSpec gemm;
  CHECK(Msg(gemm.Validate()) == "OK");
  gemm.k = 65;
  CHECK(Msg(gemm.Build(ir::Target::kSm80)) == "nf4.gemm: k=65 is not a multiple of the NF4 block size 64");
  kernels::Nf4GemmTransposeSpec transpose;
  CHECK(Msg(transpose.Validate()) == "OK");
  transpose.tile_n = 8;
  CHECK(Msg(transpose.Build(ir::Target::kSm80)) == "nf4.gemm_transpose: tile_n=8 must be 16, 32 or 64");
}

}  // namespace
}  // namespace ptxforge
