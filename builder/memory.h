// Typed pointers and 2-D views: loads and stores that know their element
// type and state space, row-major tiles with a row stride (and padding for
// shared tiles), a 2-D bounds test, and the grid-stride loop.
//
//   auto x = GlobalParam<F32>(b, "x");            // .u64 param, cvta.to.global
//   auto y = GlobalParam<F32>(b, "y");
//   GridStrideLoop(b, n, [&](Value<U32> i) { y.Store(i, b.Mul(x.Load(i), 2.0f)); });
//
//   auto tile = SharedTile<F32>(b, "tile", 32, 32, /*pad=*/1);  // 32 x 33 floats
//   tile.Store(ty, tx, in.Load(row, col));
#ifndef PTXFORGE_BUILDER_MEMORY_H_
#define PTXFORGE_BUILDER_MEMORY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "builder/kernel_builder.h"
#include "ir/strings.h"

namespace ptxforge {

// State spaces of typed pointers: the address type and the PTX space.
struct Global {
  static constexpr ir::StateSpace kSpace = ir::StateSpace::kGlobal;
  using Addr = U64;
};
struct Shared {
  static constexpr ir::StateSpace kSpace = ir::StateSpace::kShared;
  using Addr = U32;
};

// A pointer to elements of type T in space S (an address register plus a
// constant byte offset). Element indices are u32; constant indices fold
// into the address.
template <ScalarTag T, typename S>
class Ptr {
 public:
  using Elem = T;
  using AddrValue = Value<typename S::Addr>;
  static constexpr int64_t kElemSize = ir::TypeSize(T::kType);

  Ptr(KernelBuilder& b, AddrValue base, int64_t offset = 0) : b_(&b), base_(base), offset_(offset) {}

  KernelBuilder& builder() const { return *b_; }
  // The address register (without the constant offset).
  AddrValue base() const { return base_; }
  // The same address seen as elements of another type (for vector access).
  template <ScalarTag U>
  Ptr<U, S> As() const {
    return Ptr<U, S>(*b_, base_, offset_);
  }
  // The address as an operand of ld/st/atom.
  Address address() const { return Address(base_, offset_); }

  // &p[i].
  Ptr At(Value<U32> i, Loc loc = Loc::current()) const {
    if constexpr (std::is_same_v<S, Global>) {
      return Ptr(*b_, b_->template ElementAddr<T>(base_, i, loc), offset_);
    } else {
      return Ptr(*b_, b_->Mad(i, static_cast<uint32_t>(kElemSize), base_, loc), offset_);
    }
  }
  // &p[i] with a 64-bit index (global memory).
  Ptr At(Value<U64> i, Loc loc = Loc::current()) const
    requires std::is_same_v<S, Global>
  {
    return Ptr(*b_, b_->template ElementAddr<T>(base_, i, loc), offset_);
  }
  Ptr At(uint32_t i) const { return Ptr(*b_, base_, offset_ + int64_t{i} * kElemSize); }

  Value<T> Load(MemOpts o = {}, Loc loc = Loc::current()) const {
    return b_->template Load<T>(S::kSpace, address(), o, loc);
  }
  Value<T> Load(Value<U32> i, MemOpts o = {}, Loc loc = Loc::current()) const { return At(i, loc).Load(o, loc); }
  Value<T> Load(uint32_t i, MemOpts o = {}, Loc loc = Loc::current()) const { return At(i).Load(o, loc); }
  // N consecutive elements from p[i] (ld.v2/v4: the address must be N-element aligned).
  template <int N>
  std::array<Value<T>, N> LoadVec(Value<U32> i, MemOpts o = {}, Loc loc = Loc::current()) const {
    return b_->template LoadVec<T, N>(S::kSpace, At(i, loc).address(), o, loc);
  }

  void Store(Value<T> v, MemOpts o = {}, Loc loc = Loc::current()) const {
    b_->Store(S::kSpace, address(), v, o, loc);
  }
  void Store(typename T::CType c, MemOpts o = {}, Loc loc = Loc::current()) const {
    Store(b_->template Const<T>(c, loc), o, loc);
  }
  void Store(Value<U32> i, Value<T> v, MemOpts o = {}, Loc loc = Loc::current()) const { At(i, loc).Store(v, o, loc); }
  void Store(Value<U32> i, typename T::CType c, MemOpts o = {}, Loc loc = Loc::current()) const {
    At(i, loc).Store(c, o, loc);
  }
  template <size_t N>
  void StoreVec(Value<U32> i, const std::array<Value<T>, N>& v, MemOpts o = {}, Loc loc = Loc::current()) const {
    b_->StoreVec(S::kSpace, At(i, loc).address(), v, o, loc);
  }

  // ldmatrix/stmatrix at this address (shared pointers only): each lane's
  // pointer is the row it gives (KernelBuilder::LdMatrix / StMatrix).
  template <int N>
  std::array<Value<B32>, N> LoadMatrix(bool trans = false, Loc loc = Loc::current()) const
    requires std::is_same_v<S, Shared>
  {
    return b_->template LdMatrix<N>(address(), trans, loc);
  }
  template <size_t N>
  void StoreMatrix(const std::array<Value<B32>, N>& frags, bool trans = false, Loc loc = Loc::current()) const
    requires std::is_same_v<S, Shared>
  {
    b_->StMatrix(address(), frags, trans, loc);
  }

 private:
  KernelBuilder* b_;
  AddrValue base_;
  int64_t offset_;
};

// A .u64 kernel param holding a global pointer (converted with cvta.to.global).
template <ScalarTag T>
Ptr<T, Global> GlobalParam(KernelBuilder& b, std::string name, Loc loc = Loc::current()) {
  return Ptr<T, Global>(b, b.CvtaToGlobal(b.Param<U64>(std::move(name), loc), loc));
}
// A shared array of `count` elements.
template <ScalarTag T>
Ptr<T, Shared> SharedArray(KernelBuilder& b, std::string name, uint32_t count, uint32_t align = 0,
                           Loc loc = Loc::current()) {
  Symbol<T> sym = b.Shared<T>(std::move(name), count, align, loc);
  return Ptr<T, Shared>(b, b.SymbolAddr(sym, loc));
}

// cp.async.{ca,cg}.shared.global: copies cp_size bytes (4, 8 or 16; a
// whole number of T) from src to dst asynchronously (KernelBuilder::CpAsync
// says when they land). `src_size` (bytes, at most cp_size) reads only that
// many and zero-fills the rest: 0 for a tile element past the matrix edge.
//
//   CpAsync(tile.At(row, col), a.At(g_row, g_col), 16, in_bounds_bytes);
//   b.CpAsyncCommitGroup();  ...  b.CpAsyncWaitGroup(0); b.BarSync();
struct CpAsyncOpts {
  std::optional<Src<U32>> src_size;  // none: the whole cp_size
  KernelBuilder::CpAsyncCache cache = KernelBuilder::CpAsyncCache::kCa;
};
template <ScalarTag T>
void CpAsync(const Ptr<T, Shared>& dst, const Ptr<T, Global>& src, uint32_t cp_size, CpAsyncOpts o = {},
             Loc loc = Loc::current()) {
  KernelBuilder& b = dst.builder();
  if (cp_size % Ptr<T, Shared>::kElemSize != 0) {
    b.ReportError(StrCat("cp.async cp-size ", cp_size, " is not a whole number of ", ir::TypeName(T::kType),
                         " elements (", Ptr<T, Shared>::kElemSize, " bytes each)"),
                  loc);
  }
  b.CpAsync(dst.address(), src.address(), cp_size, o.src_size, o.cache, loc);
}

// row < rows && col < cols.
inline Value<Pred> InBounds2D(KernelBuilder& b, Value<U32> row, Value<U32> col, Src<U32> rows, Src<U32> cols,
                              Loc loc = Loc::current()) {
  Value<Pred> row_ok = b.Lt(row, rows, loc);
  return b.SetpCombine(ir::CmpOp::kLt, ir::BoolOp::kAnd, col, cols, row_ok, loc);
}

// A row-major 2-D view: element (r, c) at base[r * row_stride + c].
template <ScalarTag T, typename S>
class View2D {
 public:
  View2D(Ptr<T, S> base, Src<U32> rows, Src<U32> cols, Src<U32> row_stride)
      : base_(base), rows_(rows), cols_(cols), stride_(row_stride) {}

  const Ptr<T, S>& base() const { return base_; }
  const Src<U32>& rows() const { return rows_; }
  const Src<U32>& cols() const { return cols_; }
  const Src<U32>& row_stride() const { return stride_; }

  // Global views index in 64 bits (row * row_stride may pass 2^32
  // elements); shared tiles, which are far smaller, in 32.
  Ptr<T, S> At(Value<U32> row, Value<U32> col, Loc loc = Loc::current()) const {
    KernelBuilder& b = base_.builder();
    if constexpr (std::is_same_v<S, Global>) {
      return base_.At(b.template MadWide<U32>(row, stride_, b.template Cvt<U64>(col, {}, loc), loc), loc);
    } else {
      return base_.At(b.Mad(row, stride_, col, loc), loc);
    }
  }
  Value<T> Load(Value<U32> row, Value<U32> col, MemOpts o = {}, Loc loc = Loc::current()) const {
    return At(row, col, loc).Load(o, loc);
  }
  void Store(Value<U32> row, Value<U32> col, Value<T> v, MemOpts o = {}, Loc loc = Loc::current()) const {
    At(row, col, loc).Store(v, o, loc);
  }
  void Store(Value<U32> row, Value<U32> col, typename T::CType c, MemOpts o = {}, Loc loc = Loc::current()) const {
    At(row, col, loc).Store(c, o, loc);
  }
  // row < rows && col < cols.
  Value<Pred> InBounds(Value<U32> row, Value<U32> col, Loc loc = Loc::current()) const {
    return InBounds2D(base_.builder(), row, col, rows_, cols_, loc);
  }

 private:
  Ptr<T, S> base_;
  Src<U32> rows_, cols_, stride_;
};

// A [rows, cols] view of global memory with rows `row_stride` elements apart
// (cols when not given).
template <ScalarTag T>
View2D<T, Global> GlobalView(Ptr<T, Global> p, Src<U32> rows, Src<U32> cols, Src<U32> row_stride) {
  return View2D<T, Global>(p, rows, cols, row_stride);
}
template <ScalarTag T>
View2D<T, Global> GlobalView(Ptr<T, Global> p, Src<U32> rows, Value<U32> cols) {
  return View2D<T, Global>(p, rows, cols, cols);
}
// A shared [rows, cols] tile whose rows are cols + pad elements apart (a pad
// of 1 on a 32-wide f32 tile puts a column's elements in 32 different banks).
template <ScalarTag T>
View2D<T, Shared> SharedTile(KernelBuilder& b, std::string name, uint32_t rows, uint32_t cols, uint32_t pad = 0,
                             Loc loc = Loc::current()) {
  Ptr<T, Shared> p = SharedArray<T>(b, std::move(name), rows * (cols + pad), 0, loc);
  return View2D<T, Shared>(p, rows, cols, cols + pad);
}

// for (i = begin + global thread index; i < end; i += threads in the grid)
// body(i) (x dimension).
template <typename F>
void GridStrideLoop(KernelBuilder& b, Src<U32> begin, Src<U32> end, F&& body, Loc loc = Loc::current()) {
  Value<U32> start = b.GlobalThreadIdX(loc);
  const bool from_zero = begin.operand().is_imm() && begin.operand().bits() == 0;
  if (!from_zero) start = b.Add(start, begin, {}, loc);
  Value<U32> ntid = b.NtidX(loc);
  Value<U32> nctaid = b.NctaidX(loc);
  Value<U32> stride = b.Mul(ntid, nctaid, {}, loc);
  b.ForRange<U32>(start, end, stride, std::forward<F>(body), loc);
}
// for (i = global thread index; i < n; i += threads in the grid) body(i).
template <typename F>
void GridStrideLoop(KernelBuilder& b, Src<U32> n, F&& body, Loc loc = Loc::current()) {
  GridStrideLoop(b, 0u, n, std::forward<F>(body), loc);
}

}  // namespace ptxforge

#endif  // PTXFORGE_BUILDER_MEMORY_H_
