// libFuzzer target: the input is a program of builder calls (one byte picks
// the call, the next bytes its arguments: pool indices, enum values cast from
// any byte, sizes, offsets, raw PTX text, launch shapes). Whatever the bytes,
// the builder, verifier, passes, printers and the emulator must answer with a
// Status, never crash, hang or trip a sanitizer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "builder/kernel_builder.h"
#include "emit/ir_printer.h"
#include "emit/ptx_printer.h"
#include "passes/pass.h"
#include "runtime/emulator.h"

namespace ptxforge {
namespace {

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t U8() { return p_ == end_ ? 0 : *p_++; }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | U8();
    return v;
  }
  // Small values mostly, extremes sometimes.
  uint32_t Count() {
    switch (U8() % 4) {
      case 0: return U8();
      case 1: return U8() * 256u + U8();
      case 2: return U32();
      default: return 1u << (U8() % 32);
    }
  }
  int64_t Offset() {
    switch (U8() % 3) {
      case 0: return static_cast<int8_t>(U8()) * 4;
      case 1: return static_cast<int16_t>(U8() << 8 | U8());
      default: return static_cast<int64_t>(uint64_t{U32()} << 32 | U32());
    }
  }
  std::string Text(size_t max) {
    size_t n = U8() % (max + 1);
    std::string s;
    for (size_t i = 0; i < n && !empty(); ++i) s.push_back(static_cast<char>(U8()));
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

template <typename E>
E AnyEnum(Reader& r) {
  return static_cast<E>(r.U8() % 40 == 0 ? r.U8() : r.U8() % 24);
}

template <typename T>
T Pick(std::vector<T>& pool, Reader& r) {
  return pool[r.U8() % pool.size()];
}

void Run(const uint8_t* data, size_t size) {
  Reader r(data, size);
  KernelBuilder other("other");  // Values from another builder
  std::vector<Value<U32>> foreign = {other.Param<U32>("x"), other.TidX()};

  KernelBuilder b("fuzz", AnyEnum<ir::Target>(r));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  std::vector<Value<U32>> u32 = {b.TidX(), b.Param<U32>("n"), b.Const<U32>(r.U32())};
  std::vector<Value<F32>> f32 = {b.Cvt<F32>(u32[0])};
  std::vector<Value<Pred>> preds = {b.Lt(u32[0], u32[1])};
  std::vector<Symbol<U32>> symbols;
  int names = 0;
  for (int step = 0; step < 48 && !r.empty(); ++step) {
    switch (r.U8() % 16) {
      case 0: {
        Value<U32> a = Pick(u32, r), c = Pick(u32, r);
        switch (r.U8() % 6) {
          case 0: u32.push_back(b.Add(a, c)); break;
          case 1: u32.push_back(b.Sub(a, r.U32())); break;
          case 2: u32.push_back(b.Mul(a, c)); break;
          case 3: u32.push_back(b.Div(a, c)); break;
          case 4: u32.push_back(b.Shl(a, r.U8())); break;
          default: u32.push_back(b.Bfe(a, r.U32(), r.U32())); break;
        }
        break;
      }
      case 1: {
        FloatOpts o{.rounding = AnyEnum<ir::Rounding>(r), .mode = AnyEnum<ir::Mode>(r), .ftz = (r.U8() & 1) != 0,
                    .sat = (r.U8() & 1) != 0};
        Value<F32> a = Pick(f32, r);
        switch (r.U8() % 4) {
          case 0: f32.push_back(b.Add(a, Pick(f32, r), o)); break;
          case 1: f32.push_back(b.Div(a, Pick(f32, r), o)); break;
          case 2: f32.push_back(b.Sqrt(a, o)); break;
          default: f32.push_back(b.Fma(a, a, 1.5f, o)); break;
        }
        break;
      }
      case 2: preds.push_back(b.Setp(AnyEnum<ir::CmpOp>(r), Pick(u32, r), Pick(u32, r))); break;
      case 3: {
        std::string name = "v" + std::to_string(names++);
        uint32_t count = r.Count();
        symbols.push_back(r.U8() & 1 ? b.Shared<U32>(name, count, 1u << (r.U8() % 8))
                                     : b.Local<U32>(name, count, 1u << (r.U8() % 8)));
        break;
      }
      case 4:
        if (!symbols.empty()) {
          Symbol<U32> s = Pick(symbols, r);
          if (r.U8() & 1) {
            b.Store(s.space, Address(s, r.Offset()), Pick(u32, r));
          } else {
            u32.push_back(b.Load<U32>(s.space, Address(s, r.Offset())));
          }
        }
        break;
      case 5:
        b.Store(ir::StateSpace::kGlobal, Address(out, r.Offset()), Pick(u32, r),
                MemOpts{.cache = AnyEnum<ir::CacheOp>(r)});
        break;
      case 6:
        if (r.U8() & 1) {
          b.SetMaxThreads(r.Count(), r.U8(), r.U8());
        } else {
          b.SetRequiredThreads(r.Count(), r.U8() % 4 + 1, 1);
        }
        break;
      case 7: {  // the generic path with any opcode, modifiers and types
        ir::Modifiers m{.type = AnyEnum<ir::ScalarType>(r), .type2 = AnyEnum<ir::ScalarType>(r),
                        .rounding = AnyEnum<ir::Rounding>(r), .cmp = AnyEnum<ir::CmpOp>(r),
                        .space = AnyEnum<ir::StateSpace>(r), .atom = AnyEnum<ir::AtomOp>(r),
                        .scope = AnyEnum<ir::Scope>(r)};
        ir::Opcode op = static_cast<ir::Opcode>(r.U8() % (ir::kNumOpcodes + 4));
        b.Emit(op, m, AnyEnum<ir::ScalarType>(r), {ir::Operand(Pick(u32, r).reg), ir::Operand(Pick(u32, r).reg)});
        break;
      }
      case 8: {
        Value<U32> o = b.Undefined<U32>();
        std::string text = r.Text(24);
        b.RawPtx(text, {o}, {Pick(u32, r)});
        u32.push_back(o);
        break;
      }
      case 9: u32.push_back(b.Add(Pick(u32, r), Pick(foreign, r))); break;
      case 10: {
        Value<Pred> p = Pick(preds, r);
        Value<U32> a = Pick(u32, r);
        b.If(p, [&] { b.Store(ir::StateSpace::kGlobal, Address(out, 4), a); });
        break;
      }
      case 11:
        if (r.U8() & 1) {
          b.BarSync(r.U8() % 18);
        } else {
          u32.push_back(b.ShflXor(Pick(u32, r), r.U8() % 32));
        }
        break;
      case 12: u32.push_back(b.Special(AnyEnum<ir::SpecialReg>(r))); break;
      case 13: f32.push_back(b.Cvt<F32>(Pick(u32, r), CvtOpts{.rounding = AnyEnum<ir::Rounding>(r)})); break;
      case 14: u32.push_back(b.Cvt<U32>(Pick(f32, r), CvtOpts{.rounding = AnyEnum<ir::Rounding>(r)})); break;
      default:
        u32.push_back(b.Atom<U32>(AnyEnum<ir::AtomOp>(r), ir::StateSpace::kGlobal, Address(out, r.Offset() & ~int64_t{3}),
                                  Pick(u32, r)));
        break;
    }
  }
  b.Store(ir::StateSpace::kGlobal, out, Pick(u32, r));
  absl::StatusOr<ir::Kernel> kernel = b.Finish();
  if (!kernel.ok()) return;
  if (!passes::Pipeline::Standard().Run(*kernel).ok()) return;
  (void)emit::PrintPtx(*kernel);
  (void)emit::PrintIr(*kernel);
  // Run it under bounds: a small budget, a deadline, little memory.
  auto emu = runtime::MakeEmulator({.worker_threads = 1,
                                    .max_instructions_per_thread = 1u << 16,
                                    .max_launch_instructions = 1u << 20,
                                    .launch_timeout = std::chrono::milliseconds(2000),
                                    .max_block_memory_bytes = 64u << 20});
  auto loaded = emu->Load(*kernel);
  if (!loaded.ok()) return;
  auto buffer = runtime::Buffer<uint32_t>::Allocate(*emu, 64);
  if (!buffer.ok()) return;
  runtime::LaunchConfig config;
  config.grid = {r.U8() & 1 ? r.U32() : r.U8() % 4 + 1u, r.U8() % 3 + 1u, 1};
  config.block = {r.U8() & 1 ? r.Count() : r.U8() % 64 + 1u, r.U8() % 2 + 1u, 1};
  config.dynamic_shared_bytes = r.U8() & 1 ? r.U32() : 0;
  (void)emu->Launch(**loaded, config, {*buffer, r.U32()});
  (void)buffer->ToHost();
}

}  // namespace
}  // namespace ptxforge

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ptxforge::Run(data, size);
  return 0;
}
