// Random programs through the whole pipeline. Instructions are drawn from
// the opcode table with plausible but unchecked types, modifiers and
// operands: the verifier must never crash, and every program it accepts must
// survive the passes, print, assemble with ptxas, and run on the emulator
// (memory errors, deadlocks and runaway loops are fine; crashes are not).
// Addresses take negative offsets, shared and local declarations are
// sometimes large (over the static shared limit: refused cleanly), and
// launches sometimes take extreme shapes (bounded by a launch budget).
// PTXFORGE_FUZZ_ITERATIONS=N runs more programs (default 400);
// PTXFORGE_FUZZ_SEED=S draws other ones.
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>

#include <catch2/catch.hpp>

#include "emit/ir_printer.h"
#include "emit/ptx_printer.h"
#include "ir/strings.h"
#include "passes/pass.h"
#include "passes/verifier.h"
#include "runtime/emulator.h"
#include "runtime/ptxas.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::Opcode;
using ir::Operand;
using ir::ScalarType;

class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint64_t seed) : rng_(seed) {}

  ir::Kernel Generate(std::string name) {
    k_ = ir::Kernel();
    k_.name = std::move(name);
    // Every supported target, so per-target rules are exercised too.
    k_.target = ir::AllTargets()[Uniform(0, static_cast<int>(ir::AllTargets().size()) - 1)].target;
    by_type_.clear();
    k_.params = {{"out", ScalarType::kU64}, {"n", ScalarType::kU32}};
    k_.variables = {{"tile", ir::StateSpace::kShared, ScalarType::kF32, 64, 16, false},
                    {"scratch", ir::StateSpace::kLocal, ScalarType::kU32, 8, 16, false}};
    if (Chance(0.1)) {
      // A large declaration: near or over the 48 KiB static shared limit, or
      // a large local array. Over the limit, the verifier must refuse the
      // kernel with its message; then the defaults are used.
      k_.variables.push_back({"big_shared", ir::StateSpace::kShared, ScalarType::kU32,
                              static_cast<uint32_t>(Pick(std::vector<int>{1000, 12000, 12224, 12225, 1 << 20})), 4,
                              false});
      k_.variables.push_back({"big_local", ir::StateSpace::kLocal, ScalarType::kF64,
                              static_cast<uint32_t>(Pick(std::vector<int>{1, 4096, 1 << 16})), 8, false});
      ir::Kernel probe = k_;
      probe.body.push_back(ir::Instruction{});  // ret
      absl::Status declared = passes::VerifyKernel(probe);
      if (!declared.ok()) {
        if (!std::string(declared.message()).starts_with(StrCat("kernel ", k_.name, ": static shared memory is "))) {
          bad_rejections_.push_back(std::string(declared.message()));
        }
        k_.variables.resize(2);
      }
    }
    // A prologue that makes the pointer and the sizes available.
    ir::Reg out = Def(Opcode::kLd, Mods(ScalarType::kU64, ir::StateSpace::kParam), ScalarType::kU64, {Operand::AddrParam(0)});
    ir::Modifiers to_global = Mods(ScalarType::kU64, ir::StateSpace::kGlobal);
    to_global.cvta_to = true;
    global_ = Def(Opcode::kCvta, to_global, ScalarType::kU64, {out});
    Def(Opcode::kLd, Mods(ScalarType::kU32, ir::StateSpace::kParam), ScalarType::kU32, {Operand::AddrParam(1)});
    Def(Opcode::kMov, Mods(ScalarType::kU32), ScalarType::kU32, {Operand::Special(ir::SpecialReg::kTidX)});
    for (int i = 0; i < 3; ++i) k_.AddLabel(StrCat("l", i));
    std::vector<bool> bound(3, false);
    const int count = Uniform(5, 40);
    for (int i = 0; i < count; ++i) {
      if (Chance(0.08)) {
        int l = Uniform(0, 2);
        if (!bound[l]) {
          bound[l] = true;
          k_.body.push_back(LabelDef(l));
        }
      }
      // Each candidate instruction is kept only if the verifier accepts the
      // program with it; every rejection must be a clean error naming the kernel.
      const size_t regs_before = k_.regs.size();
      k_.body.push_back(RandomInstruction());
      absl::Status verdict = passes::VerifyKernel(Closed(bound));
      ++candidates_;
      if (verdict.ok()) continue;
      if (!std::string(verdict.message()).starts_with(StrCat("kernel ", k_.name, ": "))) bad_rejections_.push_back(std::string(verdict.message()));
      k_.body.pop_back();
      // Its registers go too: one of an instruction-only type (a random
      // tf32 destination) would make the whole kernel invalid.
      k_.regs.resize(regs_before);
      for (auto& [type, regs] : by_type_) {
        std::erase_if(regs, [&](ir::Reg r) { return r.id >= regs_before; });
      }
    }
    k_ = Closed(bound);
    return k_;
  }

 public:
  int candidates() const { return candidates_; }
  const std::vector<std::string>& bad_rejections() const { return bad_rejections_; }

 private:
  ir::Instruction LabelDef(int l) {
    ir::Instruction label;
    label.op = Opcode::kLabel;
    label.srcs.push_back(Operand::FromLabel(ir::Label{static_cast<uint32_t>(l)}));
    return label;
  }
  // The kernel so far with its unbound labels bound and a final ret.
  ir::Kernel Closed(const std::vector<bool>& bound) {
    ir::Kernel k = k_;
    for (int l = 0; l < 3; ++l) {
      if (!bound[l]) k.body.push_back(LabelDef(l));
    }
    ir::Instruction ret;
    ret.op = Opcode::kRet;
    k.body.push_back(ret);
    return k;
  }

  bool HasRegs(ScalarType t) const {
    auto it = by_type_.find(t);
    return it != by_type_.end() && !it->second.empty();
  }

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  T Pick(const std::vector<T>& v) { return v[Uniform(0, static_cast<int>(v.size()) - 1)]; }

  static ir::Modifiers Mods(ScalarType t, ir::StateSpace s = ir::StateSpace::kGeneric) {
    ir::Modifiers m;
    m.type = t;
    m.space = s;
    return m;
  }

  ir::Reg NewReg(ScalarType t, bool is_mutable = false) {
    k_.regs.push_back(ir::RegInfo{t, is_mutable});
    ir::Reg r{static_cast<uint32_t>(k_.regs.size() - 1)};
    by_type_[t].push_back(r);
    return r;
  }

  ir::Reg Def(Opcode op, const ir::Modifiers& m, ScalarType t, std::initializer_list<Operand> srcs) {
    ir::Instruction inst;
    inst.op = op;
    inst.mods = m;
    ir::Reg r = NewReg(t);
    inst.dsts.push_back(r);
    inst.srcs.assign(srcs.begin(), srcs.end());
    k_.body.push_back(inst);
    return r;
  }

  ScalarType RandomType(ir::TypeMask mask) {
    std::vector<ScalarType> types;
    for (int t = 1; t < ir::kNumScalarTypes; ++t) {
      if (ir::InMask(mask, static_cast<ScalarType>(t))) types.push_back(static_cast<ScalarType>(t));
    }
    if (types.empty() || Chance(0.03)) return static_cast<ScalarType>(Uniform(1, ir::kNumScalarTypes - 1));
    return Pick(types);
  }

  // A value operand, usually a register of a compatible type.
  Operand Value(ScalarType t) {
    std::vector<ir::Reg> candidates;
    for (auto& [type, regs] : by_type_) {
      if (ir::TypesCompatible(t, type)) candidates.insert(candidates.end(), regs.begin(), regs.end());
    }
    if (!candidates.empty() && Chance(0.8)) return Pick(candidates);
    if (Chance(0.1)) return Pick(by_type_.at(ScalarType::kU64));  // probably the wrong type (the prologue defines u64s)
    uint64_t bits = Chance(0.5) ? Uniform(0, 8) : std::uniform_int_distribution<uint64_t>()(rng_);
    if (t == ScalarType::kF32) bits = std::bit_cast<uint32_t>(static_cast<float>(Uniform(-4, 4)) * 0.5f);
    if (t == ScalarType::kF64) bits = std::bit_cast<uint64_t>(Uniform(-4, 4) * 0.25);
    int width = ir::TypeBits(t);
    if (width > 0 && width < 64) bits &= (uint64_t{1} << width) - 1;
    return Operand::Imm(t == ScalarType::kNone ? ScalarType::kU32 : t, bits);
  }

  Operand RandomAddress(ir::StateSpace space, int bytes) {
    int offset = Uniform(0, 15) * std::max(bytes, 1);
    // Negative offsets print as [base+-N] (ptxas refuses [base-N]).
    const int negative = Chance(0.1) ? -Uniform(1, 16) * std::max(bytes, 1) : 0;
    switch (space) {
      case ir::StateSpace::kShared:
        if (negative != 0) return Operand::AddrSymbol(0, negative);
        return Chance(0.5) ? Operand::AddrSymbol(0, offset % 256) : Operand::AddrSymbol(0, Uniform(0, 300));
      case ir::StateSpace::kLocal: return Operand::AddrSymbol(1, negative != 0 ? negative : offset % 32);
      default: return Operand::AddrReg(global_, negative != 0 ? negative : offset % 256);
    }
  }

  template <typename E>
  E RandomEnum(int count) { return static_cast<E>(Uniform(0, count - 1)); }

  ir::Instruction RandomInstruction() {
    ir::Instruction inst;
    do {
      inst.op = static_cast<Opcode>(Uniform(0, ir::kNumOpcodes - 1));
    } while (inst.op == Opcode::kLabel || inst.op == Opcode::kRaw || inst.op == Opcode::kRet ||
             inst.op == Opcode::kExit);
    const ir::OpInfo& info = inst.info();
    ir::Modifiers& m = inst.mods;
    m.type = info.types == 0 ? ScalarType::kNone : RandomType(info.types);
    const ScalarType t = m.type;
    // Modifiers: each slot the opcode prints gets a random value, often none.
    for (int s = 0; s < info.num_slots; ++s) {
      switch (info.slots[s]) {
        case ir::ModSlot::kRnd: if (Chance(0.4)) m.rounding = RandomEnum<ir::Rounding>(9); break;
        case ir::ModSlot::kMode: if (Chance(0.6)) m.mode = RandomEnum<ir::Mode>(6); break;
        case ir::ModSlot::kFtz: m.ftz = Chance(0.2); break;
        case ir::ModSlot::kSat: m.sat = Chance(0.1); break;
        case ir::ModSlot::kCmp: m.cmp = static_cast<ir::CmpOp>(Uniform(1, 18)); break;
        case ir::ModSlot::kBool: if (Chance(0.2)) m.bool_op = static_cast<ir::BoolOp>(Uniform(1, 3)); break;
        case ir::ModSlot::kSpace:
          m.space = Pick(std::vector<ir::StateSpace>{ir::StateSpace::kGlobal, ir::StateSpace::kShared,
                                                     ir::StateSpace::kLocal, ir::StateSpace::kGeneric});
          break;
        case ir::ModSlot::kCache: if (Chance(0.2)) m.cache = RandomEnum<ir::CacheOp>(8); break;
        case ir::ModSlot::kVec: m.vec = Pick(std::vector<uint8_t>{1, 1, 1, 2, 4}); break;
        case ir::ModSlot::kNum: m.vec = Pick(std::vector<uint8_t>{1, 2, 4}); break;
        case ir::ModSlot::kAtom: m.atom = static_cast<ir::AtomOp>(Uniform(1, 10)); break;
        case ir::ModSlot::kShfl: m.shfl = static_cast<ir::ShflMode>(Uniform(1, 4)); break;
        case ir::ModSlot::kVote: m.vote = static_cast<ir::VoteMode>(Uniform(1, 4)); break;
        case ir::ModSlot::kLevel:
        case ir::ModSlot::kScope: if (Chance(0.3) || info.slots[s] == ir::ModSlot::kLevel) m.scope = static_cast<ir::Scope>(Uniform(1, 3)); break;
        case ir::ModSlot::kType2: m.type2 = RandomType(ir::TypeSlotMask(info, 1) ? ir::TypeSlotMask(info, 1) : info.types); break;
        case ir::ModSlot::kType3: m.type3 = RandomType(ir::TypeSlotMask(info, 2)); break;
        case ir::ModSlot::kType4: m.type4 = RandomType(ir::TypeSlotMask(info, 3)); break;
        case ir::ModSlot::kShape: m.shape = static_cast<uint8_t>(Uniform(0, ir::NumEnumValues(info, ir::ModSlot::kShape))); break;
        case ir::ModSlot::kLayout: m.layout = static_cast<uint8_t>(Uniform(0, ir::NumEnumValues(info, ir::ModSlot::kLayout))); break;
        case ir::ModSlot::kVariant: m.variant = static_cast<uint8_t>(Uniform(0, ir::NumVariants(info))); break;
        case ir::ModSlot::kNoftz: m.noftz = m.atom == ir::AtomOp::kAdd && ir::IsHalfFamily(t); break;
        case ir::ModSlot::kNc: m.nc = Chance(0.1); break;
        default: break;
      }
    }
    if (inst.op == Opcode::kVote) m.type = m.vote == ir::VoteMode::kBallot ? ScalarType::kB32 : ScalarType::kPred;
    // Operands by rule.
    auto dst = [&](ScalarType type) {
      if (type == ScalarType::kNone) type = ScalarType::kU32;
      inst.dsts.push_back(NewReg(type));
    };
    switch (info.rule) {
      case ir::OpRule::kLoad:
        for (int v = 0; v < m.vec; ++v) dst(t);
        inst.srcs.push_back(RandomAddress(m.space, ir::TypeSize(t) * m.vec));
        break;
      case ir::OpRule::kStore:
        inst.srcs.push_back(RandomAddress(m.space, ir::TypeSize(t) * m.vec));
        for (int v = 0; v < m.vec; ++v) inst.srcs.push_back(Value(t));
        break;
      case ir::OpRule::kAtom:
      case ir::OpRule::kRed:
        if (info.rule == ir::OpRule::kAtom) dst(t);
        inst.srcs.push_back(RandomAddress(m.space, ir::TypeSize(t)));
        inst.srcs.push_back(Value(t));
        if (m.atom == ir::AtomOp::kCas) inst.srcs.push_back(Value(t));
        break;
      case ir::OpRule::kSetp:
        for (int d = 0; d < info.sig.ndst; ++d) dst(ScalarType::kPred);  // setp.f16x2: p|q
        inst.srcs = {Value(t), Value(t)};
        if (m.bool_op != ir::BoolOp::kNone) inst.srcs.push_back(Value(ScalarType::kPred));
        break;
      case ir::OpRule::kCvt:
        dst(t);
        inst.srcs = {Value(m.type2)};
        break;
      case ir::OpRule::kBranch:
        inst.srcs = {Operand::FromLabel(ir::Label{static_cast<uint32_t>(Uniform(0, 2))})};
        if (Chance(0.8) && HasRegs(ScalarType::kPred)) {
          inst.guard = Pick(by_type_[ScalarType::kPred]);
          inst.guard_negated = Chance(0.5);
        }
        return inst;
      case ir::OpRule::kBarrier:
        inst.srcs = {Operand::Imm(ScalarType::kU32, Chance(0.9) ? 0 : Uniform(0, 16))};
        if (Chance(0.2)) inst.srcs.push_back(Operand::Imm(ScalarType::kU32, 32 * Uniform(0, 2)));
        break;
      case ir::OpRule::kShfl:
        dst(t);
        if (Chance(0.3)) dst(ScalarType::kPred);
        inst.srcs = {Value(t), Value(ScalarType::kU32), Operand::Imm(ScalarType::kU32, Chance(0.5) ? 31 : 0),
                     Operand::Imm(ScalarType::kB32, 0xFFFFFFFFu)};
        break;
      case ir::OpRule::kVote:
        dst(m.type);
        inst.srcs = {Value(ScalarType::kPred), Operand::Imm(ScalarType::kB32, 0xFFFFFFFFu)};
        break;
      case ir::OpRule::kMov:
        dst(t);
        inst.srcs = {Chance(0.1) ? Operand::Special(RandomEnum<ir::SpecialReg>(ir::kNumSpecialRegs)) : Value(t)};
        break;
      case ir::OpRule::kMatrix:  // ldmatrix {d..}, [a]; stmatrix [a], {s..}
        if (inst.op == Opcode::kLdmatrix) {
          for (int v = 0; v < m.vec; ++v) dst(ScalarType::kB32);
        }
        inst.srcs.push_back(RandomAddress(m.space, 16));
        if (inst.op == Opcode::kStmatrix) {
          for (int v = 0; v < m.vec; ++v) inst.srcs.push_back(Value(ScalarType::kB32));
        }
        break;
      case ir::OpRule::kCvta:
        dst(ScalarType::kU64);
        inst.srcs = {Chance(0.5) ? Operand::Symbol(Uniform(0, 1)) : Value(ScalarType::kU64)};
        break;
      default: {
        // Everything else from the row's signature (register groups as
        // several registers).
        const ir::Signature& sig = info.sig;
        for (int d = 0; d < sig.ndst; ++d) {
          for (int g = 0; g < ir::GroupCount(inst, sig.dsts[d]); ++g) {
            dst(ir::OperandType(inst, sig.dsts[d]));
          }
        }
        for (int k = 0; k < sig.nsrc; ++k) {
          const ir::OperandSpec& spec = sig.srcs[k];
          const ScalarType st = ir::OperandType(inst, spec);
          for (int g = 0; g < ir::GroupCount(inst, spec); ++g) {
            if (spec.rule == ir::TypeRule::kAddress) {  // cp.async: a shared and a global address
              inst.srcs.push_back(RandomAddress(ir::AddressSpace(inst, spec), Pick(std::vector<int>{4, 8, 16})));
              continue;
            }
            inst.srcs.push_back(spec.cls == ir::OperandClass::kImm ? Operand::Imm(st, Uniform(0, 255)) : Value(st));
          }
        }
      }
    }
    if (Chance(0.05) && HasRegs(ScalarType::kPred)) inst.guard = Pick(by_type_[ScalarType::kPred]);
    return inst;
  }

  std::mt19937_64 rng_;
  int candidates_ = 0;
  std::vector<std::string> bad_rejections_;
  ir::Kernel k_;
  ir::Reg global_;
  std::map<ScalarType, std::vector<ir::Reg>> by_type_;
};

TEST_CASE("random programs: the verifier decides, everything after it copes") {
  // Programs are grown one random instruction at a time; the verifier sees
  // every candidate (most are wrong somehow) and must reject with a message
  // naming the kernel; the programs it accepts go on through the passes,
  // both printers, the emulator and ptxas.
  int iterations = 400;
  if (const char* env = std::getenv("PTXFORGE_FUZZ_ITERATIONS")) iterations = std::max(1, std::atoi(env));
  uint64_t seed = 20261122;
  if (const char* env = std::getenv("PTXFORGE_FUZZ_SEED")) seed = std::strtoull(env, nullptr, 10);
  ProgramGenerator gen(seed);
  std::mt19937_64 shapes(seed);
  auto emu = runtime::MakeEmulator({.worker_threads = 1,
                                    .max_instructions_per_thread = 2000,
                                    .max_launch_instructions = 1u << 20,
                                    .launch_timeout = std::chrono::milliseconds(5000)});
  auto out = runtime::Buffer<uint8_t>::Allocate(*emu, 256);
  REQUIRE(out.ok());
  std::map<ir::Target, ir::Module> by_target;
  int launches_ok = 0;
  for (int i = 0; i < iterations; ++i) {
    ir::Kernel k = gen.Generate(StrCat("fuzz", i));
    INFO(emit::PrintIr(k));
    REQUIRE(passes::VerifyKernel(k).ok());
    passes::Pipeline pipeline = passes::Pipeline::Standard();
    REQUIRE(pipeline.Run(k).ok());
    REQUIRE(emit::PrintPtx(k).ok());
    auto loaded = emu->Load(k);
    REQUIRE(loaded.ok());
    // Mostly one warp; sometimes an extreme shape (the largest grid, a full
    // or odd block, or one past CUDA's limits, which must be refused).
    runtime::LaunchConfig config{.grid = {1}, .block = {32}};
    const bool extreme = std::bernoulli_distribution(0.1)(shapes);
    if (extreme) {
      const std::vector<runtime::LaunchConfig> kShapes = {
          {.grid = {0x7FFFFFFFu}, .block = {32}}, {.grid = {0x80000000u}, .block = {32}},
          {.grid = {1, 65535, 1}, .block = {1}}, {.grid = {1, 65536, 1}, .block = {1}},
          {.grid = {2}, .block = {1024}},         {.grid = {1}, .block = {1025}},
          {.grid = {1}, .block = {7, 3, 2}},      {.grid = {0xFFFFFFFFu}, .block = {1}},
      };
      config = kShapes[std::uniform_int_distribution<size_t>(0, kShapes.size() - 1)(shapes)];
    }
    absl::Status run = emu->Launch(**loaded, config, {*out, 16u});
    if (!run.ok()) {
      // Every failure names the kernel.
      INFO(run.message());
      REQUIRE(std::string(run.message()).starts_with(StrCat("kernel ", k.name)));
    }
    launches_ok += run.ok() && !extreme;
    ir::Module& module = by_target[k.target];
    module.target = k.target;
    module.kernels.push_back(std::move(k));
  }
  size_t instructions = 0;
  for (const auto& [target, module] : by_target) {
    for (const ir::Kernel& k : module.kernels) instructions += k.body.size();
  }
  WARN(gen.candidates() << " candidate instructions, " << instructions << " kept in " << iterations << " programs; "
                        << launches_ok << " ran cleanly");
  CHECK(gen.bad_rejections() == std::vector<std::string>{});
  // The generator must produce enough valid instructions and clean runs for
  // the test to mean something.
  CHECK(instructions * 4 >= static_cast<size_t>(gen.candidates()));
  CHECK(launches_ok * 4 >= iterations);

  std::optional<std::string> ptxas = runtime::FindPtxas();
  if (!ptxas) {
    WARN("SKIPPED: ptxas not found; the verified programs were not assembled");
    return;
  }
  for (const auto& [target, module] : by_target) {
    absl::StatusOr<std::string> ptx = emit::PrintPtx(module);
    REQUIRE(ptx.ok());
    absl::StatusOr<runtime::PtxasResult> result = runtime::RunPtxas(*ptxas, *ptx, target);
    REQUIRE(result.ok());
    if (result->exit_code == 0) continue;
    // Name the first program ptxas rejects, with its IR.
    for (const ir::Kernel& k : module.kernels) {
      absl::StatusOr<runtime::PtxasResult> one = runtime::RunPtxas(*ptxas, *emit::PrintPtx(k), target);
      if (one.ok() && one->exit_code != 0) {
        INFO(emit::PrintIr(k));
        INFO(one->output);
        FAIL("ptxas rejects a program the verifier accepted");
      }
    }
    FAIL("ptxas rejects the module for " << ir::TargetName(target) << ": " << result->output);
  }
}

// Item of issue 13: the optimizer must not change what a program computes.
// Each verified random program runs on the emulator with the optimizer off
// and on (the verifier after every pass) on the same zero-filled output;
// when both launches finish, the output bytes are identical. The optimized
// launch may stop where the other finishes only by the instruction budget.
TEST_CASE("random programs: the optimizer does not change what they compute") {
  int iterations = 300;
  if (const char* env = std::getenv("PTXFORGE_FUZZ_ITERATIONS")) iterations = std::max(1, std::atoi(env));
  uint64_t seed = 20261123;
  if (const char* env = std::getenv("PTXFORGE_FUZZ_SEED")) seed = std::strtoull(env, nullptr, 10) + 1;
  ProgramGenerator gen(seed);
  auto emu = runtime::MakeEmulator({.worker_threads = 1,
                                    .max_instructions_per_thread = 2000,
                                    .max_launch_instructions = 1u << 20,
                                    .launch_timeout = std::chrono::milliseconds(5000)});
  auto out = runtime::Buffer<uint8_t>::Allocate(*emu, 256);
  REQUIRE(out.ok());
  int compared = 0, changed = 0;
  for (int i = 0; i < iterations; ++i) {
    const ir::Kernel original = gen.Generate(StrCat("fuzz", i));
    INFO(emit::PrintIr(original));
    REQUIRE(passes::VerifyKernel(original).ok());
    absl::Status status[2];
    std::vector<uint8_t> bytes[2];
    size_t sizes[2] = {0, 0};
    for (int optimized = 0; optimized < 2; ++optimized) {
      ir::Kernel k = original;
      passes::PipelineOptions options = optimized ? passes::PipelineOptions{} : passes::PipelineOptions::None();
      options.verify_each = true;
      REQUIRE(testing::Msg(passes::Pipeline::Standard(options).Run(k)) == "OK");
      sizes[optimized] = k.body.size();
      if (optimized) INFO(emit::PrintIr(k));
      REQUIRE(out->CopyFrom(std::vector<uint8_t>(256, 0)).ok());
      auto loaded = emu->Load(k);
      REQUIRE(loaded.ok());
      status[optimized] = emu->Launch(**loaded, {.grid = {1}, .block = {32}}, {*out, 16u});
      absl::StatusOr<std::vector<uint8_t>> host = out->ToHost();
      REQUIRE(host.ok());
      bytes[optimized] = *std::move(host);
    }
    changed += sizes[1] != sizes[0];
    if (status[0].ok() && status[1].ok()) {
      ++compared;
      CHECK(bytes[0] == bytes[1]);
    } else if (status[0].ok() && !status[1].ok()) {
      // Only the instruction budget may stop the optimized program alone.
      const std::string failed(status[1].message());
      INFO(failed);
      CHECK(failed.find("instructions") != std::string::npos);
    }
    // The unoptimized program may fail alone: a load that only unreachable
    // code used (removed by the optimizer, then by dce) can fault there.
  }
  WARN(compared << " of " << iterations << " programs compared, " << changed << " changed by the optimizer");
  CHECK(compared * 4 >= iterations);
}

}  // namespace
}  // namespace ptxforge
