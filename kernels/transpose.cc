// transpose, written with the builder's helpers.
#include "kernels/transpose.h"

#include <algorithm>
#include <array>
#include <random>

#include "builder/memory.h"
#include "ir/strings.h"

namespace ptxforge::kernels {
namespace {

constexpr std::array kTypes = {ir::ScalarType::kF32, ir::ScalarType::kU32, ir::ScalarType::kS32,
                               ir::ScalarType::kF16, ir::ScalarType::kBF16, ir::ScalarType::kU16};
constexpr uint32_t kTile = 32;

template <ScalarTag T>
void Body(KernelBuilder& b, uint32_t block_rows) {
  b.SetRequiredThreads(kTile, block_rows);
  auto in_ptr = GlobalParam<T>(b, "in");
  auto out_ptr = GlobalParam<T>(b, "out");
  Value<U32> rows = b.Param<U32>("rows");
  Value<U32> cols = b.Param<U32>("cols");
  auto in = GlobalView(in_ptr, rows, cols);
  auto out = GlobalView(out_ptr, cols, rows);
  const uint32_t pad = 4 / ir::TypeSize(T::kType);
  auto tile = SharedTile<T>(b, "tile", kTile, kTile, pad);
  Value<U32> tx = b.TidX();
  Value<U32> ty = b.TidY();
  Value<U32> col0 = b.Mul(b.CtaidX(), kTile);
  Value<U32> row0 = b.Mul(b.CtaidY(), kTile);
  // The tile's rows ty + j are one address plus j rows, a constant folded
  // into each store's address (`st.shared [%r+1056]`) instead of computed for
  // every j. The transposed read keeps its per-j address: folding it too
  // costs ptxas 2-4 more registers on sm_80-sm_90 (measured with ptxas -v).
  // The global row is (row0 + ty) + j, not row0 + (ty + j): ptxas keeps one
  // base live and adds each j where it is used; with ty + j shared by both
  // phases it kept the three ty + j live across the barrier (sm_120: 30
  // registers against nvcc's 24, sm_75-sm_89: 24 against 22; with this
  // order 24 and 19-20, measured with ptxas -v).
  Ptr<T, Shared> write_at = tile.At(ty, tx);
  Value<U32> in_col = b.Add(col0, tx);
  Value<U32> in_row = b.Add(row0, ty);
  for (uint32_t j = 0; j < kTile; j += block_rows) {
    Value<U32> gr = b.Add(in_row, j);
    b.If(in.InBounds(gr, in_col), [&] { write_at.At(j * (kTile + pad)).Store(in.Load(gr, in_col)); });
  }
  b.BarSync();
  Value<U32> out_col = b.Add(row0, tx);
  Value<U32> out_row = b.Add(col0, ty);
  for (uint32_t j = 0; j < kTile; j += block_rows) {
    Value<U32> gr = b.Add(out_row, j);
    b.If(out.InBounds(gr, out_col), [&] { out.Store(gr, out_col, tile.Load(tx, b.Add(ty, j))); });
  }
  b.Ret();
}

}  // namespace

absl::Status TransposeSpec::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(
        StrCat("transpose: type ", ir::TypeName(type), " is not supported (f32, u32, s32, f16, bf16, u16)"));
  }
  if (block_rows == 0 || block_rows > kTile || (block_rows & (block_rows - 1)) != 0) {
    return absl::InvalidArgumentError(StrCat("transpose: block_rows=", block_rows, " must be 1, 2, 4, 8, 16 or 32"));
  }
  return absl::OkStatus();
}

std::string TransposeSpec::KernelName() const { return StrCat("transpose_", ir::TypeName(type), "_r", block_rows); }

absl::StatusOr<ir::Kernel> TransposeSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  switch (type) {
    case ir::ScalarType::kF32: Body<F32>(b, block_rows); break;
    case ir::ScalarType::kU32: Body<U32>(b, block_rows); break;
    case ir::ScalarType::kS32: Body<S32>(b, block_rows); break;
    case ir::ScalarType::kF16: Body<F16>(b, block_rows); break;
    case ir::ScalarType::kBF16: Body<BF16>(b, block_rows); break;
    default: Body<U16>(b, block_rows); break;
  }
  return b.Finish();
}

std::span<const ConfigField> TransposeFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "element type: f32, u32, s32, f16, bf16, u16"},
      {"block_rows", "8", "thread rows per 32x32 tile (block 32 x block_rows): 1, 2, 4, 8, 16, 32"},
      {"rows", "45", "test shape: rows of the input"},
      {"cols", "70", "test shape: columns of the input"},
  };
  return kFields;
}

absl::StatusOr<TransposeSpec> TransposeFamily::SpecFrom(const Config& config) const {
  TransposeSpec spec;
  absl::StatusOr<ir::ScalarType> type = config.GetType("type", kTypes);
  if (!type.ok()) return type.status();
  absl::StatusOr<uint32_t> block_rows = config.GetU32("block_rows");
  if (!block_rows.ok()) return block_rows.status();
  spec.type = *type;
  spec.block_rows = *block_rows;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> TransposeFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<TransposeSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<uint32_t> rows = config.GetU32("rows"), cols = config.GetU32("cols");
  if (!rows.ok()) return rows.status();
  if (!cols.ok()) return cols.status();
  if (*rows == 0 || *cols == 0) return absl::InvalidArgumentError("transpose: rows and cols must be positive");
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = spec->type;
  TestProblem p;
  p.buffers.push_back(RandomBuffer("in", t, size_t{*rows} * *cols, rng, 0, 30000));
  HostBuffer out = ZeroBuffer("out", t, size_t{*rows} * *cols);
  out.is_output = true;  // tolerance 0: moved bits must be exact
  std::vector<int64_t> in = AsInts(ir::BitsTypeOfSize(ir::TypeBits(t)), p.buffers[0].data);
  out.expected = FromInts(ir::BitsTypeOfSize(ir::TypeBits(t)), TransposeReference<int64_t>(in, *rows, *cols));
  p.buffers.push_back(std::move(out));
  p.args = {size_t{0}, size_t{1}, ScalarU32(*rows), ScalarU32(*cols)};
  p.block = {kTile, spec->block_rows, 1};
  p.grid = {(*cols + kTile - 1) / kTile, (*rows + kTile - 1) / kTile, 1};
  p.shape = StrCat("rows=", *rows, " cols=", *cols);
  return p;
}

}  // namespace ptxforge::kernels
