// mma.sync on the emulator against a plain C++ matrix product: per shape and
// type, random data (and negative, inf and NaN inputs, accumulation into C)
// loaded per lane from global memory by a builder kernel; the fp8 packing
// conversions; the fragment coordinates of builder/mma.h.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "builder/mma.h"
#include "ir/float_bits.h"
#include "ir/strings.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using testing::FinishOrDie;
using Space = ir::StateSpace;

// ---- the PTX ISA's fragment tables, written out per table (independently of
// the one formula the emulator and builder/mma.h use). g = groupID (lane >> 2),
// t = threadID_in_group (lane % 4); element i of the lane's fragment.
struct RowCol {
  int row, col;
};
RowCol TableA(int k, int bits, int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  if (bits == 32 && k == 4) return {i == 0 ? g : g + 8, t};                               // tf32 a0, a1
  if (bits == 16 && k == 8) return {i < 2 ? g : g + 8, t * 2 + (i & 1)};                 // a0..a3
  if (bits == 16 && k == 16) return {(i % 4) < 2 ? g : g + 8, t * 2 + (i & 1) + (i >= 4 ? 8 : 0)};  // a0..a7
  if (bits == 32 && k == 8) return {(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4};  // tf32 a0..a3
  if (bits == 8 && k == 16) return {i < 4 ? g : g + 8, t * 4 + (i & 3)};                  // a0..a7
  /* bits == 8 && k == 32 */ return {(i % 8) < 4 ? g : g + 8, t * 4 + (i & 3) + (i >= 8 ? 16 : 0)};  // a0..a15
}
RowCol TableB(int k, int bits, int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  if (bits == 32 && k == 4) return {t, g};                                    // tf32 b0
  if (bits == 16 && k == 8) return {t * 2 + i, g};                           // b0, b1
  if (bits == 16 && k == 16) return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g}; // b0..b3
  if (bits == 32 && k == 8) return {i == 0 ? t : t + 4, g};                  // tf32 b0, b1
  if (bits == 8 && k == 16) return {t * 4 + i, g};                           // b0..b3
  /* bits == 8 && k == 32 */ return {t * 4 + (i & 3) + (i >= 4 ? 16 : 0), g};  // b0..b7
}
RowCol TableC(int lane, int i) { return {(lane >> 2) + (i >= 2 ? 8 : 0), (lane & 3) * 2 + (i & 1)}; }

// fp8 values, decoded here from their definitions (e4m3: bias 7, no inf,
// S.1111.111 NaN; e5m2: bias 15, IEEE-like).
double FromE4M3(uint32_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  const double v = e == 0 ? m / 8.0 * std::pow(2.0, -6) : (1 + m / 8.0) * std::pow(2.0, e - 7);
  return (b & 0x80) ? -v : v;
}
double FromE5M2(uint32_t b) {
  const int e = (b >> 2) & 31, m = b & 3;
  if (e == 31) return m == 0 ? ((b & 0x80) ? -INFINITY : INFINITY) : NAN;
  const double v = e == 0 ? m / 4.0 * std::pow(2.0, -14) : (1 + m / 4.0) * std::pow(2.0, e - 15);
  return (b & 0x80) ? -v : v;
}

// An element's value from its bits, per input type.
template <typename T>
double Decode(uint32_t bits) {
  if constexpr (std::is_same_v<T, F16>) return ir::DecodeFloat(bits, ir::kHalfFormat);
  if constexpr (std::is_same_v<T, BF16>) return ir::DecodeFloat(bits, ir::kBF16Format);
  if constexpr (std::is_same_v<T, F32>) return std::bit_cast<float>(bits);
  // tf32: the hardware reads the 19 high bits of the register (emulator: ops_mma.cc).
  if constexpr (std::is_same_v<T, TF32>) return std::bit_cast<float>(bits & 0xFFFFE000u);
  if constexpr (std::is_same_v<T, E4M3>) return FromE4M3(bits);
  if constexpr (std::is_same_v<T, E5M2>) return FromE5M2(bits);
  if constexpr (std::is_same_v<T, S8>) return static_cast<int8_t>(bits);
  if constexpr (std::is_same_v<T, U8>) return static_cast<uint8_t>(bits);
  if constexpr (std::is_same_v<T, S32>) return static_cast<int32_t>(bits);
  return 0;
}

template <typename T>
constexpr int kBits = std::is_same_v<T, TF32> || std::is_same_v<T, F32> || std::is_same_v<T, S32> ? 32
                      : std::is_same_v<T, F16> || std::is_same_v<T, BF16>                         ? 16
                                                                                                    : 8;

// Matrices as element bits, row-major.
struct Problem {
  std::vector<uint32_t> a, b, c;  // M x K, K x N, M x N
};

int kMmaLine = 0;  // the line of BuildMmaKernel's b.Mma call

// The test kernel: lane l loads its A, B and C registers from a, b and c at
// word l * regs + r, runs mma and stores D's registers to d the same way.
template <MmaShape S, typename In, typename InB, typename Acc>
ir::Kernel BuildMmaKernel(bool satfinite) {
  using FA = MmaFragA<S, In>;
  using FB = MmaFragB<S, InB>;
  using FC = MmaFragC<S, Acc>;
  KernelBuilder b("mma", ir::Target::kSm90);
  Value<U64> pa = b.CvtaToGlobal(b.Param<U64>("a")), pb = b.CvtaToGlobal(b.Param<U64>("b"));
  Value<U64> pc = b.CvtaToGlobal(b.Param<U64>("c")), pd = b.CvtaToGlobal(b.Param<U64>("d"));
  Value<U32> lane = b.TidX();
  auto load = [&](auto& frag, Value<U64> base) {
    using F = std::remove_reference_t<decltype(frag)>;
    Value<U64> at = b.ElementAddr<B32>(base, b.Mul(lane, Src<U32>(static_cast<uint32_t>(F::kRegs))));
    for (int r = 0; r < F::kRegs; ++r) frag.regs[r] = b.Load<typename F::Reg>(Space::kGlobal, Address(at, 4 * r));
  };
  FA fa;
  FB fb;
  FC fc;
  load(fa, pa);
  load(fb, pb);
  load(fc, pc);
  kMmaLine = __LINE__ + 1;  // for the message test
  FC fd = b.Mma(fa, fb, fc, satfinite);
  Value<U64> at = b.ElementAddr<B32>(pd, b.Mul(lane, Src<U32>(static_cast<uint32_t>(FC::kRegs))));
  for (int r = 0; r < FC::kRegs; ++r) b.Store(Space::kGlobal, Address(at, 4 * r), fd.regs[r]);
  return FinishOrDie(b);

}

// Runs D = A * B + C on the emulator: a builder kernel in which each lane loads
// its fragments (packed by the host with the PTX tables), runs mma and stores D.
template <MmaShape S, typename In, typename InB, typename Acc>
std::vector<uint32_t> RunMma(const Problem& p, bool satfinite = false) {
  using FA = MmaFragA<S, In>;
  using FB = MmaFragB<S, InB>;
  using FC = MmaFragC<S, Acc>;
  constexpr MmaDims dims = DimsOf(S);
  // Host packing: element i of a lane's fragment into register i / per_reg.
  auto pack = [](int regs, int bits, auto where, const std::vector<uint32_t>& m, int cols) {
    std::vector<uint32_t> words(32 * regs, 0);
    const int per = 32 / bits;
    for (int lane = 0; lane < 32; ++lane) {
      for (int i = 0; i < regs * per; ++i) {
        const RowCol rc = where(lane, i);
        const uint32_t e = m[rc.row * cols + rc.col] & (bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1);
        words[lane * regs + i / per] |= e << (bits * (i % per));
      }
    }
    return words;
  };
  const auto wa = pack(FA::kRegs, kBits<In>, [&](int l, int i) { return TableA(dims.k, kBits<In>, l, i); }, p.a, dims.k);
  const auto wb = pack(FB::kRegs, kBits<InB>, [&](int l, int i) { return TableB(dims.k, kBits<InB>, l, i); }, p.b, dims.n);
  const auto wc = pack(FC::kRegs, kBits<Acc>, [&](int l, int i) { return TableC(l, i); }, p.c, dims.n);

  ir::Kernel kernel = BuildMmaKernel<S, In, InB, Acc>(satfinite);

  auto emu = runtime::MakeEmulator({.worker_threads = 1});
  auto buffer = [&](const std::vector<uint32_t>& v) {
    auto buf = runtime::Buffer<uint32_t>::Allocate(*emu, v.size());
    REQUIRE(buf.ok());
    REQUIRE(buf->CopyFrom(v).ok());
    return *std::move(buf);
  };
  auto ba = buffer(wa), bb = buffer(wb), bc = buffer(wc), bd = buffer(std::vector<uint32_t>(32 * FC::kRegs, 0));
  auto loaded = emu->Load(kernel);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, {.grid = {1}, .block = {32}}, {ba, bb, bc, bd});
  INFO(s.ToString());
  REQUIRE(s.ok());
  const std::vector<uint32_t> wd = *bd.ToHost();
  // Unpack D with the table.
  std::vector<uint32_t> d(dims.m * dims.n, 0);
  const int per = 32 / kBits<Acc>;
  for (int l = 0; l < 32; ++l) {
    for (int i = 0; i < 4; ++i) {
      const RowCol rc = TableC(l, i);
      const uint32_t w = wd[l * FC::kRegs + i / per];
      d[rc.row * dims.n + rc.col] = per == 1 ? w : (w >> (16 * (i % per))) & 0xFFFF;
    }
  }
  return d;
}

// The reference: D = A * B + C in double, and the sum of the magnitudes of
// the terms (for the tolerance).
template <MmaShape S, typename In, typename InB, typename Acc>
void Reference(const Problem& p, std::vector<double>& ref, std::vector<double>& magnitude) {
  constexpr MmaDims dims = DimsOf(S);
  ref.assign(dims.m * dims.n, 0);
  magnitude.assign(dims.m * dims.n, 0);
  for (int r = 0; r < dims.m; ++r) {
    for (int c = 0; c < dims.n; ++c) {
      double sum = Decode<Acc>(p.c[r * dims.n + c]), mag = std::fabs(sum);
      for (int k = 0; k < dims.k; ++k) {
        const double prod = Decode<In>(p.a[r * dims.k + k]) * Decode<InB>(p.b[k * dims.n + c]);
        sum += prod;
        mag += std::fabs(prod);
      }
      ref[r * dims.n + c] = sum;
      magnitude[r * dims.n + c] = mag;
    }
  }
}

// Float results against the double reference. The emulator rounds the exact
// sum once to D's type, so it is within half an ulp of the result; hardware
// adds in an unspecified order with f32 (or f16) precision. The tolerance,
// one ulp of the magnitude sum Σ|a·b| + |c| in D's precision (2^-23 for f32,
// 2^-10 for f16), holds for the single rounding and still fails on any
// misplaced element (an element's product is far larger). inf must match
// exactly; a NaN must be the canonical NaN.
template <MmaShape S, typename In, typename InB, typename Acc>
void CompareFloat(const Problem& p, const std::vector<uint32_t>& d) {
  std::vector<double> ref, mag;
  Reference<S, In, InB, Acc>(p, ref, mag);
  constexpr bool f16 = std::is_same_v<Acc, F16>;
  for (size_t i = 0; i < d.size(); ++i) {
    INFO("element " << i << " (row " << i / DimsOf(S).n << ", column " << i % DimsOf(S).n << "): reference " << ref[i]);
    if (std::isnan(ref[i])) {
      CHECK(d[i] == (f16 ? 0x7FFFu : 0x7FFFFFFFu));
      continue;
    }
    const double got = Decode<Acc>(d[i]);
    if (std::isinf(ref[i])) {
      CHECK(got == ref[i]);
      continue;
    }
    CHECK(std::fabs(got - ref[i]) <= mag[i] * (f16 ? 0x1p-10 : 0x1p-23));
  }
}
template <MmaShape S, typename In, typename InB, typename Acc>
void CheckFloat(const Problem& p) {
  CompareFloat<S, In, InB, Acc>(p, RunMma<S, In, InB, Acc>(p));
}

// Random elements: small integers over 32 (exact in every input format) as
// bits of T, so that products and sums exercise signs and carries.
template <typename T>
uint32_t RandomElement(std::mt19937& rng) {
  std::uniform_int_distribution<int> small(-64, 64);
  const float v = static_cast<float>(small(rng)) / 32.0f;
  if constexpr (std::is_same_v<T, F16>) return ir::EncodeFloat(v, ir::kHalfFormat);
  if constexpr (std::is_same_v<T, BF16>) return ir::EncodeFloat(v, ir::kBF16Format);
  if constexpr (std::is_same_v<T, F32>) return std::bit_cast<uint32_t>(v);
  if constexpr (std::is_same_v<T, TF32>) {
    // Low bits set too: the hardware ignores them.
    return std::bit_cast<uint32_t>(v) | (std::uniform_int_distribution<uint32_t>(0, 0x1FFF)(rng));
  }
  if constexpr (std::is_same_v<T, E4M3> || std::is_same_v<T, E5M2>) {
    // Any byte but NaN (and inf for e5m2): every finite value of the format.
    for (;;) {
      const uint32_t byte = std::uniform_int_distribution<uint32_t>(0, 255)(rng);
      const double x = std::is_same_v<T, E4M3> ? FromE4M3(byte) : FromE5M2(byte);
      if (std::isfinite(x) && std::fabs(x) <= 64) return byte;
    }
  }
  if constexpr (std::is_same_v<T, S8> || std::is_same_v<T, U8>) {
    return std::uniform_int_distribution<uint32_t>(0, 255)(rng);
  }
  if constexpr (std::is_same_v<T, S32>) return static_cast<uint32_t>(std::uniform_int_distribution<int32_t>(-100000, 100000)(rng));
  return 0;
}

template <MmaShape S, typename In, typename InB, typename Acc>
Problem RandomProblem(uint32_t seed, bool zero_c = false) {
  std::mt19937 rng(seed);
  constexpr MmaDims dims = DimsOf(S);
  Problem p;
  for (int i = 0; i < dims.m * dims.k; ++i) p.a.push_back(RandomElement<In>(rng));
  for (int i = 0; i < dims.k * dims.n; ++i) p.b.push_back(RandomElement<InB>(rng));
  for (int i = 0; i < dims.m * dims.n; ++i) p.c.push_back(zero_c ? 0 : RandomElement<Acc>(rng));
  return p;
}

template <MmaShape S, typename In, typename InB, typename Acc>
void CheckRandomFloat() {
  for (uint32_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    CheckFloat<S, In, InB, Acc>(RandomProblem<S, In, InB, Acc>(seed, seed == 1));
  }
}

TEST_CASE("mma f16 inputs: m16n8k8 and m16n8k16, f32 and f16 accumulators", "[mma]") {
  CheckRandomFloat<MmaShape::kM16N8K16, F16, F16, F32>();
  CheckRandomFloat<MmaShape::kM16N8K16, F16, F16, F16>();
  CheckRandomFloat<MmaShape::kM16N8K8, F16, F16, F32>();
  CheckRandomFloat<MmaShape::kM16N8K8, F16, F16, F16>();
}

TEST_CASE("mma bf16 and tf32 inputs", "[mma]") {
  CheckRandomFloat<MmaShape::kM16N8K16, BF16, BF16, F32>();
  CheckRandomFloat<MmaShape::kM16N8K8, BF16, BF16, F32>();
  CheckRandomFloat<MmaShape::kM16N8K8, TF32, TF32, F32>();
  CheckRandomFloat<MmaShape::kM16N8K4, TF32, TF32, F32>();
}

TEST_CASE("mma fp8 inputs (e4m3, e5m2, mixed)", "[mma]") {
  CheckRandomFloat<MmaShape::kM16N8K32, E4M3, E4M3, F32>();
  CheckRandomFloat<MmaShape::kM16N8K32, E5M2, E5M2, F32>();
  CheckRandomFloat<MmaShape::kM16N8K32, E4M3, E5M2, F32>();
  CheckRandomFloat<MmaShape::kM16N8K16, E4M3, E4M3, F32>();  // PTX 8.7
  CheckRandomFloat<MmaShape::kM16N8K16, E5M2, E4M3, F32>();
}

TEST_CASE("mma: one element's place in each fragment", "[mma]") {
  // A single 1 in A at (r, k) and B at (k, c) makes D's (r, c) the only
  // nonzero: every lane's fragment must put them where the table says.
  constexpr MmaDims dims = DimsOf(MmaShape::kM16N8K16);
  for (auto [r, k, c] : {std::tuple{0, 0, 0}, {15, 15, 7}, {9, 4, 3}, {3, 12, 5}}) {
    Problem p;
    p.a.assign(dims.m * dims.k, 0);
    p.b.assign(dims.k * dims.n, 0);
    p.c.assign(dims.m * dims.n, 0);
    p.a[r * dims.k + k] = 0x3C00;  // 1.0
    p.b[k * dims.n + c] = 0x4000;  // 2.0
    const std::vector<uint32_t> d = RunMma<MmaShape::kM16N8K16, F16, F16, F32>(p);
    for (int i = 0; i < dims.m * dims.n; ++i) {
      INFO("a(" << r << "," << k << ") b(" << k << "," << c << ") element " << i);
      CHECK(d[i] == (i == r * dims.n + c ? std::bit_cast<uint32_t>(2.0f) : 0u));
    }
  }
}

TEST_CASE("mma: accumulation into C, negatives, inf and NaN", "[mma]") {
  using S = std::integral_constant<MmaShape, MmaShape::kM16N8K16>;
  constexpr MmaDims dims = DimsOf(S::value);
  Problem p = RandomProblem<S::value, F16, F16, F32>(7);
  // C: large values, so D = C + (small products) checks the accumulation.
  for (int i = 0; i < dims.m * dims.n; ++i) p.c[i] = std::bit_cast<uint32_t>(1000.0f * static_cast<float>(i - 64));
  // Row 0 of A holds +inf: D row 0 is +-inf, or NaN where a B column has a 0
  // product against it or where C is -inf... set up explicitly:
  p.a[0 * dims.k + 3] = 0x7C00;                 // A(0,3) = +inf
  for (int c = 0; c < dims.n; ++c) p.b[3 * dims.n + c] = c == 5 ? 0 : 0x3C00 | (c & 1 ? 0x8000 : 0);  // B(3,c) = +-1, 0 at c=5
  p.a[1 * dims.k + 0] = 0x7E00;                 // A(1,0) = NaN: row 1 all NaN
  p.c[2 * dims.n + 4] = std::bit_cast<uint32_t>(-INFINITY);  // C(2,4) = -inf: D(2,4) = -inf
  p.c[0 * dims.n + 2] = std::bit_cast<uint32_t>(-INFINITY);  // C(0,2) = -inf against +inf: NaN
  std::vector<double> ref, mag;
  Reference<S::value, F16, F16, F32>(p, ref, mag);
  REQUIRE(std::isinf(ref[0 * dims.n + 0]));
  REQUIRE(std::isnan(ref[0 * dims.n + 5]));   // inf * 0
  REQUIRE(std::isnan(ref[0 * dims.n + 2]));   // inf - inf
  REQUIRE(std::isnan(ref[1 * dims.n + 6]));
  REQUIRE(ref[2 * dims.n + 4] == -INFINITY);
  CheckFloat<S::value, F16, F16, F32>(p);
  // The same with f16 accumulators (C values that fit f16).
  Problem h = RandomProblem<S::value, F16, F16, F16>(8);
  h.a[5 * dims.k + 1] = 0xFC00;  // -inf
  h.c[6 * dims.n + 1] = 0x7E00;  // NaN
  CheckFloat<S::value, F16, F16, F16>(h);
}

// Integer results: exact, wrapping to 32 bits (or clamped with .satfinite).
template <MmaShape S, typename In, typename InB>
void CheckInt(const Problem& p, bool satfinite) {
  std::vector<double> ref, mag;
  Reference<S, In, InB, S32>(p, ref, mag);
  const std::vector<uint32_t> d = RunMma<S, In, InB, S32>(p, satfinite);
  for (size_t i = 0; i < d.size(); ++i) {
    const int64_t want = static_cast<int64_t>(ref[i]);  // exact: |sum| < 2^53
    const int32_t expected =
        satfinite ? static_cast<int32_t>(std::clamp<int64_t>(want, INT32_MIN, INT32_MAX)) : static_cast<int32_t>(static_cast<uint32_t>(want));
    INFO("element " << i << ": exact sum " << want);
    CHECK(static_cast<int32_t>(d[i]) == expected);
  }
}

TEST_CASE("mma s8/u8 inputs: m16n8k16 and m16n8k32, mixed signedness, satfinite", "[mma]") {
  CheckInt<MmaShape::kM16N8K32, S8, S8>(RandomProblem<MmaShape::kM16N8K32, S8, S8, S32>(1), false);
  CheckInt<MmaShape::kM16N8K32, U8, U8>(RandomProblem<MmaShape::kM16N8K32, U8, U8, S32>(2), false);
  CheckInt<MmaShape::kM16N8K32, S8, U8>(RandomProblem<MmaShape::kM16N8K32, S8, U8, S32>(3), false);
  CheckInt<MmaShape::kM16N8K32, U8, S8>(RandomProblem<MmaShape::kM16N8K32, U8, S8, S32>(4), false);
  CheckInt<MmaShape::kM16N8K16, S8, U8>(RandomProblem<MmaShape::kM16N8K16, S8, U8, S32>(5), false);
  // Overflow: C near the s32 limits and all-255 inputs (u8: +2080800 per row).
  Problem p = RandomProblem<MmaShape::kM16N8K32, U8, U8, S32>(6);
  for (uint32_t& x : p.a) x = 255;
  for (uint32_t& x : p.b) x = 255;
  for (size_t i = 0; i < p.c.size(); ++i) p.c[i] = static_cast<uint32_t>(i % 2 ? INT32_MAX - 5 : INT32_MIN + 5);
  CheckInt<MmaShape::kM16N8K32, U8, U8>(p, false);  // wraps
  CheckInt<MmaShape::kM16N8K32, U8, U8>(p, true);   // clamps to INT32_MAX
  Problem n = RandomProblem<MmaShape::kM16N8K32, S8, U8, S32>(7);
  for (uint32_t& x : n.a) x = 0x80;  // -128
  for (uint32_t& x : n.b) x = 255;
  for (uint32_t& x : n.c) x = static_cast<uint32_t>(INT32_MIN + 5);
  CheckInt<MmaShape::kM16N8K32, S8, U8>(n, true);  // clamps to INT32_MIN
  CheckInt<MmaShape::kM16N8K32, S8, U8>(n, false);
}

TEST_CASE("mma needs the whole warp", "[mma]") {
  ir::Kernel kernel = BuildMmaKernel<MmaShape::kM16N8K8, F16, F16, F32>(false);
  auto emu = runtime::MakeEmulator({.worker_threads = 1});
  std::vector<runtime::Buffer<uint32_t>> bufs;
  for (int k = 0; k < 4; ++k) {
    auto buf = runtime::Buffer<uint32_t>::Allocate(*emu, 32 * 4);
    REQUIRE(buf.ok());
    REQUIRE(buf->CopyFrom(std::vector<uint32_t>(32 * 4, 0)).ok());
    bufs.push_back(*std::move(buf));
  }
  auto loaded = emu->Load(kernel);
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, {.grid = {1}, .block = {16}}, {bufs[0], bufs[1], bufs[2], bufs[3]});
  CHECK(testing::Msg(s) ==
        StrCat("kernel mma: mma.sync.aligned needs all 32 lanes of the warp, but lane 16 is not in the block; block (0,0,0) thread "
               "(0,0,0) at `mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f4, %f5, %f6, %f7}, {%r2, %r3}, {%r5}, "
               "{%f0, %f1, %f2, %f3};` (mma_test.cc:",
               kMmaLine, ")"));
}


TEST_CASE("fp8 packing conversions: rounding, saturation, NaN, and back to f16x2", "[mma]") {
  auto pack = [](auto tag, float hi, float lo) {
    using F8 = decltype(tag);
    return testing::RunScalar([&](KernelBuilder& b) { return b.CvtPackF8<F8>(b.Const<F32>(hi), lo); }) & 0xFFFF;
  };
  // e4m3: 1.0 = 0x38, 0.5 = 0x30; the first source goes to the high byte.
  CHECK(pack(E4M3{}, 1.0f, 0.5f) == 0x3830);
  CHECK(pack(E4M3{}, 448.0f, -448.0f) == 0x7EFE);            // the largest finite value
  CHECK(pack(E4M3{}, 1000.0f, -INFINITY) == 0x7EFE);         // satfinite: clamped, inf too
  CHECK(pack(E4M3{}, NAN, -0.0f) == 0x7F80);                 // NaN is 0x7f; -0 keeps its sign
  CHECK(pack(E4M3{}, 1.0625f, 1.1875f) == 0x383A);           // ties to even: 1.0 and 1.25
  CHECK(pack(E4M3{}, 0x1p-9f, 0x1p-10f) == 0x0100);          // the smallest subnormal; half of it rounds to 0
  CHECK(pack(E4M3{}, 0x3p-10f, 464.0f) == 0x027E);           // 1.5 subnormal steps to 2; 464 ties down to 448
  // e5m2: 1.0 = 0x3c, 57344 the largest finite value.
  CHECK(pack(E5M2{}, 1.0f, 57344.0f) == 0x3C7B);
  CHECK(pack(E5M2{}, 1e6f, INFINITY) == 0x7B7B);
  CHECK(pack(E5M2{}, 1.125f, 1.375f) == 0x3C3E);             // ties to even
  CHECK(pack(E5M2{}, -2.0f, NAN) == 0xC07F);
  auto unpack = [](auto tag, uint16_t v) {
    using F8 = decltype(tag);
    return testing::RunScalar([&](KernelBuilder& b) { return b.CvtUnpackF8<F8>(b.Const<B16>(v)); }) & 0xFFFFFFFF;
  };
  CHECK(unpack(E4M3{}, 0x3830) == 0x3C003800);   // high byte to the high half
  CHECK(unpack(E4M3{}, 0x01FE) == 0x1800DF00);   // 2^-9 and -448
  CHECK(unpack(E4M3{}, 0x7F00) == 0x7E000000);   // NaN
  CHECK(unpack(E5M2{}, 0x7C7B) == 0x7C007B00);   // inf and 57344
  CHECK(unpack(E5M2{}, 0x0180) == 0x01008000);   // the smallest subnormal 2^-16 and -0
}


// The typed API end to end: each lane loads its elements of row-major A, B
// and C by Coord (LaneOffset at run time plus Coord(0, ...) as constants),
// packs them with MmaPack, runs mma and stores MmaUnpack(D) row-major.
template <MmaShape S, typename Acc>
std::vector<uint32_t> RunRowMajor(const Problem& p) {
  using FA = MmaFragA<S, F16>;
  using FB = MmaFragB<S, F16>;
  using FC = MmaFragC<S, Acc>;
  constexpr MmaDims dims = DimsOf(S);
  KernelBuilder b("mma_row_major", ir::Target::kSm80);
  Value<U64> pa = b.CvtaToGlobal(b.Param<U64>("a")), pb = b.CvtaToGlobal(b.Param<U64>("b"));
  Value<U64> pc = b.CvtaToGlobal(b.Param<U64>("c")), pd = b.CvtaToGlobal(b.Param<U64>("d"));
  Value<U32> lane = b.TidX();
  Value<U32> g = b.Shr(lane, 2u), t = b.And(lane, 3u);
  // Element index of the lane's offset (row0, col0) in a row-major matrix of `cols` columns.
  auto lane_index = [&](Value<U32> row0, Value<U32> col0, int cols) {
    return b.Add(b.Mul(row0, Src<U32>(static_cast<uint32_t>(cols))), col0);
  };
  Value<U64> a0 = b.ElementAddr<F16>(pa, lane_index(g, b.Mul(t, Src<U32>(FA::kPerReg)), dims.k));
  Value<U64> b0 = b.ElementAddr<F16>(pb, lane_index(b.Mul(t, Src<U32>(FB::kPerReg)), g, dims.n));
  Value<U64> c0 = b.ElementAddr<Acc>(pc, lane_index(g, b.Mul(t, 2u), dims.n));
  Value<U64> d0 = b.ElementAddr<Acc>(pd, lane_index(g, b.Mul(t, 2u), dims.n));
  std::array<Value<F16>, FA::kRegs * FA::kPerReg> ea;
  for (int i = 0; i < FA::kRegs * FA::kPerReg; ++i) {
    const MmaCoord at = FA::Coord(0, i / FA::kPerReg, i % FA::kPerReg);
    ea[i] = b.Load<F16>(Space::kGlobal, Address(a0, 2 * (at.row * dims.k + at.col)));
  }
  std::array<Value<F16>, FB::kRegs * FB::kPerReg> eb;
  for (int i = 0; i < FB::kRegs * FB::kPerReg; ++i) {
    const MmaCoord at = FB::Coord(0, i / FB::kPerReg, i % FB::kPerReg);
    eb[i] = b.Load<F16>(Space::kGlobal, Address(b0, 2 * (at.row * dims.n + at.col)));
  }
  constexpr int size = ir::TypeSize(Acc::kType);
  std::array<Value<Acc>, 4> ec;
  for (int i = 0; i < 4; ++i) {
    const MmaCoord at = FC::Coord(0, i);
    ec[i] = b.Load<Acc>(Space::kGlobal, Address(c0, size * (at.row * dims.n + at.col)));
  }
  const std::array<Value<Acc>, 4> ed =
      b.MmaUnpack(b.Mma(b.MmaPack<FA>(ea), b.MmaPack<FB>(eb), b.MmaPack<FC>(ec)));
  for (int i = 0; i < 4; ++i) {
    const MmaCoord at = FC::Coord(0, i);
    b.Store(Space::kGlobal, Address(d0, size * (at.row * dims.n + at.col)), ed[i]);
  }
  ir::Kernel kernel = FinishOrDie(b);
  auto emu = runtime::MakeEmulator({.worker_threads = 1});
  // Elements as they sit in memory: 2-byte halves, 4-byte f32.
  auto bytes = [](const std::vector<uint32_t>& v, int elem) {
    std::vector<uint8_t> out(v.size() * elem);
    for (size_t i = 0; i < v.size(); ++i) std::memcpy(&out[i * elem], &v[i], elem);
    return out;
  };
  auto buffer = [&](const std::vector<uint8_t>& v) {
    auto buf = runtime::Buffer<uint8_t>::Allocate(*emu, v.size());
    REQUIRE(buf.ok());
    REQUIRE(buf->CopyFrom(v).ok());
    return *std::move(buf);
  };
  auto ba = buffer(bytes(p.a, 2)), bb = buffer(bytes(p.b, 2)), bc = buffer(bytes(p.c, size));
  auto bd = buffer(std::vector<uint8_t>(dims.m * dims.n * size, 0));
  auto loaded = emu->Load(kernel);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  absl::Status st = emu->Launch(**loaded, {.grid = {1}, .block = {32}}, {ba, bb, bc, bd});
  INFO(st.ToString());
  REQUIRE(st.ok());
  const std::vector<uint8_t> raw = *bd.ToHost();
  std::vector<uint32_t> d(dims.m * dims.n, 0);
  for (size_t i = 0; i < d.size(); ++i) std::memcpy(&d[i], &raw[i * size], size);
  return d;
}

TEST_CASE("typed fragments: Coord, MmaPack and MmaUnpack on row-major matrices", "[mma]") {
  const Problem f = RandomProblem<MmaShape::kM16N8K16, F16, F16, F32>(11);
  CompareFloat<MmaShape::kM16N8K16, F16, F16, F32>(f, RunRowMajor<MmaShape::kM16N8K16, F32>(f));
  const Problem h = RandomProblem<MmaShape::kM16N8K8, F16, F16, F16>(12);
  CompareFloat<MmaShape::kM16N8K8, F16, F16, F16>(h, RunRowMajor<MmaShape::kM16N8K8, F16>(h));
  // The builder's Coord agrees with the PTX tables written out above.
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const MmaCoord a = MmaFragA<MmaShape::kM16N8K16, F16>::Coord(lane, i / 2, i % 2);
      CHECK((a.row == TableA(16, 16, lane, i).row && a.col == TableA(16, 16, lane, i).col));
    }
    for (int i = 0; i < 16; ++i) {
      const MmaCoord a = MmaFragA<MmaShape::kM16N8K32, S8>::Coord(lane, i / 4, i % 4);
      CHECK((a.row == TableA(32, 8, lane, i).row && a.col == TableA(32, 8, lane, i).col));
    }
    for (int i = 0; i < 2; ++i) {
      const MmaCoord a = MmaFragA<MmaShape::kM16N8K4, TF32>::Coord(lane, i, 0);
      CHECK((a.row == TableA(4, 32, lane, i).row && a.col == TableA(4, 32, lane, i).col));
    }
    const MmaCoord b4 = MmaFragB<MmaShape::kM16N8K4, TF32>::Coord(lane, 0, 0);
    CHECK((b4.row == TableB(4, 32, lane, 0).row && b4.col == TableB(4, 32, lane, 0).col));
    for (int i = 0; i < 8; ++i) {
      const MmaCoord a = MmaFragA<MmaShape::kM16N8K16, E4M3>::Coord(lane, i / 4, i % 4);
      CHECK((a.row == TableA(16, 8, lane, i).row && a.col == TableA(16, 8, lane, i).col));
    }
    for (int i = 0; i < 4; ++i) {
      const MmaCoord a = MmaFragA<MmaShape::kM16N8K8, TF32>::Coord(lane, i, 0);
      CHECK((a.row == TableA(8, 32, lane, i).row && a.col == TableA(8, 32, lane, i).col));
      const MmaCoord bt = MmaFragB<MmaShape::kM16N8K16, F16>::Coord(lane, i / 2, i % 2);
      CHECK((bt.row == TableB(16, 16, lane, i).row && bt.col == TableB(16, 16, lane, i).col));
      const MmaCoord c = MmaFragC<MmaShape::kM16N8K16, F16>::Coord(lane, i);
      CHECK((c.row == TableC(lane, i).row && c.col == TableC(lane, i).col));
    }
  }
}

}  // namespace
}  // namespace ptxforge
