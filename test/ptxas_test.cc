// ptxas checks: registry kernels and an opcode-table coverage module assemble for every target,
// and the table's minimum targets and PTX versions are neither too low nor too high.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "emit/ptx_printer.h"
#include "ir/format.h"
#include "passes/verifier.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::Opcode;
using ir::Operand;
using ir::ScalarType;
using ir::StateSpace;
using testing::Msg;
using T = ScalarType;

// The ptxas verdict on `ptx`: line number (1-based) -> error messages.
struct Verdict {
  int exit_code = 0;
  std::map<int, std::vector<std::string>> errors;
  std::string output;
};

Verdict Assemble(const std::string& ptxas, const std::string& ptx, ir::Target target,
                 const std::vector<std::string>& extra_args = {}) {
  absl::StatusOr<runtime::PtxasResult> r = runtime::RunPtxas(ptxas, ptx, target, extra_args);
  REQUIRE(Msg(r) == "OK");
  Verdict v{r->exit_code, {}, r->output};
  static const std::regex kError(R"(line (\d+); error\s*: (.*))");
  std::string out = r->output;
  for (std::sregex_iterator it(out.begin(), out.end(), kError), end; it != end; ++it) {
    v.errors[std::stoi((*it)[1])].push_back((*it)[2]);
  }
  return v;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// "line: error" for every error ptxas reported, at most `limit` of them.
std::string Describe(const Verdict& v, const std::string& ptx, size_t limit = 60) {
  std::vector<std::string> lines = Lines(ptx);
  std::string out;
  size_t n = 0;
  for (const auto& [line, messages] : v.errors) {
    if (n++ == limit) {
      StrAppend(&out, "... and ", v.errors.size() - limit, " more lines\n");
      break;
    }
    std::string text = line >= 1 && line <= static_cast<int>(lines.size()) ? lines[line - 1] : "?";
    StrAppend(&out, text, "    <- ", StrJoin(messages, "; "), "\n");
  }
  if (v.errors.empty()) out = v.output;
  return out;
}

TEST_CASE("every registry kernel assembles for every target with 0 spill bytes", "[ptxas]") {
  std::optional<std::string> ptxas = testing::PtxasOrSkip();
  if (!ptxas) return;
  for (const ir::TargetInfo& target : ir::AllTargets()) {
    INFO("target " << target.name);
    ir::Module module;
    module.target = target.target;
    for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
      if (!ir::TargetSatisfies(target.target, family->requirement())) {
        // Refused below its minimum, with a message naming it.
        CHECK_THAT(Msg(testing::BuildRegistryKernel(*family, target.target)),
                   Catch::Contains(ir::RequirementName(family->requirement())));
        continue;
      }
      absl::StatusOr<ir::Kernel> k = testing::BuildRegistryKernel(*family, target.target);
      REQUIRE(Msg(k) == "OK");
      module.kernels.push_back(*std::move(k));
      // Every other element type the family accepts, too.
      for (std::string type : {"f16", "bf16", "f32", "f64", "s32", "u32", "s64", "u64"}) {
        const std::vector<std::pair<std::string, std::string>> overrides = {{"type", type}};
        absl::StatusOr<kernels::Config> config = family->MakeConfig(overrides);
        if (!config.ok()) break;  // the family has no type setting
        absl::StatusOr<ir::Kernel> typed = family->Build(*config, target.target);
        if (!typed.ok() || typed->name == module.kernels.back().name) continue;
        REQUIRE(Msg(passes::Pipeline::Standard().Run(*typed)) == "OK");
        bool seen = false;
        for (const ir::Kernel& other : module.kernels) seen |= other.name == typed->name;
        if (!seen) module.kernels.push_back(*std::move(typed));
      }
    }
    absl::StatusOr<std::string> ptx = emit::PrintPtx(module);
    REQUIRE(Msg(ptx) == "OK");
    Verdict v = Assemble(*ptxas, *ptx, target.target, {"-v"});
    if (v.exit_code != 0) FAIL("ptxas -arch=" << target.name << " rejected the registry kernels:\n" << Describe(v, *ptx));
    // 0 spill bytes in every kernel: ptxas -v names each entry function, then its spill line.
    static const std::regex kEntry(R"(Compiling entry function '(\w+)')");
    static const std::regex kSpills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
    std::string entry;
    size_t reports = 0;
    for (const std::string& line : Lines(v.output)) {
      std::smatch m;
      if (std::regex_search(line, m, kEntry)) entry = m[1];
      if (!std::regex_search(line, m, kSpills)) continue;
      INFO("kernel " << entry << ": " << line);
      CHECK(m[1] == "0");
      CHECK(m[2] == "0");
      ++reports;
    }
    CHECK(reports == module.kernels.size());
  }
}

std::string TrivialModule(std::string_view version, std::string_view target) {
  return StrCat(".version ", version, "\n.target ", target, "\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n");
}

TEST_CASE("the target table's minimum PTX versions are exact", "[ptxas]") {
  std::optional<std::string> ptxas = testing::PtxasOrSkip();
  if (!ptxas) return;
  auto known = ir::KnownPtxVersions();
  for (const ir::TargetInfo& target : ir::AllTargets()) {
    INFO("target " << target.name);
    Verdict at_min = Assemble(*ptxas, TrivialModule(target.min_ptx.ToString(), target.name), target.target);
    CHECK(at_min.exit_code == 0);
    auto it = std::find(known.begin(), known.end(), target.min_ptx);
    REQUIRE(it != known.end());
    if (it == known.begin()) continue;
    Verdict below = Assemble(*ptxas, TrivialModule(std::prev(it)->ToString(), target.name), target.target);
    CHECK(below.exit_code != 0);
  }
  Verdict newest = Assemble(*ptxas, TrivialModule(ir::MaxPtxVersion().ToString(), "sm_120a"), ir::Target::kSm120a);
  CHECK(newest.exit_code == 0);
}

// ---- the coverage module: every modifier/type combination the verifier
// accepts, one instruction each, assembled for each target.

// Every value of a modifier slot, applied to a copy of `m`.
std::vector<ir::Modifiers> SlotValues(const ir::OpInfo& info, ir::ModSlot slot, const ir::Modifiers& m) {
  std::vector<ir::Modifiers> out;
  auto each = [&](int n, auto set) {
    for (int v = 0; v < n; ++v) {
      ir::Modifiers c = m;
      set(c, v);
      out.push_back(c);
    }
  };
  using ir::ModSlot;
  switch (slot) {
    case ModSlot::kSem: each(5, [](auto& c, int v) { c.sem = static_cast<ir::MemSem>(v); }); break;
    case ModSlot::kScope:
    case ModSlot::kLevel: each(4, [](auto& c, int v) { c.scope = static_cast<ir::Scope>(v); }); break;
    case ModSlot::kSpace: each(6, [](auto& c, int v) { c.space = static_cast<StateSpace>(v); }); break;
    case ModSlot::kTo: each(2, [](auto& c, int v) { c.cvta_to = v; }); break;
    case ModSlot::kNc: each(2, [](auto& c, int v) { c.nc = v; }); break;
    case ModSlot::kCache: each(8, [](auto& c, int v) { c.cache = static_cast<ir::CacheOp>(v); }); break;
    case ModSlot::kVec:
    case ModSlot::kNum: each(3, [](auto& c, int v) { c.vec = static_cast<uint8_t>(1 << v); }); break;
    case ModSlot::kAtom: each(11, [](auto& c, int v) { c.atom = static_cast<ir::AtomOp>(v); }); break;
    case ModSlot::kShfl: each(5, [](auto& c, int v) { c.shfl = static_cast<ir::ShflMode>(v); }); break;
    case ModSlot::kVote: each(5, [](auto& c, int v) { c.vote = static_cast<ir::VoteMode>(v); }); break;
    case ModSlot::kCmp: each(19, [](auto& c, int v) { c.cmp = static_cast<ir::CmpOp>(v); }); break;
    case ModSlot::kBool: each(4, [](auto& c, int v) { c.bool_op = static_cast<ir::BoolOp>(v); }); break;
    case ModSlot::kMode: each(6, [](auto& c, int v) { c.mode = static_cast<ir::Mode>(v); }); break;
    case ModSlot::kRnd: each(9, [](auto& c, int v) { c.rounding = static_cast<ir::Rounding>(v); }); break;
    case ModSlot::kFtz: each(2, [](auto& c, int v) { c.ftz = v; }); break;
    case ModSlot::kSat: each(2, [](auto& c, int v) { c.sat = v; }); break;
    case ModSlot::kNoftz: each(2, [](auto& c, int v) { c.noftz = v; }); break;
    case ModSlot::kUni: each(2, [](auto& c, int v) { c.uni = v; }); break;
    case ModSlot::kVariant:
      each(ir::NumVariants(info) + 1, [](auto& c, int v) { c.variant = static_cast<uint8_t>(v); });
      break;
    case ModSlot::kShape:
      each(ir::NumEnumValues(info, slot) + 1, [](auto& c, int v) { c.shape = static_cast<uint8_t>(v); });
      break;
    case ModSlot::kLayout:
      each(ir::NumEnumValues(info, slot) + 1, [](auto& c, int v) { c.layout = static_cast<uint8_t>(v); });
      break;
    case ModSlot::kLiteral: out.push_back(m); break;  // fixed text
    case ModSlot::kType:
    case ModSlot::kType2:
    case ModSlot::kType3:
    case ModSlot::kType4: {
      const int n = slot == ModSlot::kType ? 0 : slot == ModSlot::kType2 ? 1 : slot == ModSlot::kType3 ? 2 : 3;
      // A cvt's second type takes any of the row's types (the verifier decides the pairs).
      const ir::TypeMask mask = n == 1 && info.type_lists[1] == 0 ? info.types : ir::TypeSlotMask(info, n);
      for (int t = 1; t < ir::kNumScalarTypes; ++t) {
        // cvt.rn.f16x2.f32's second type is outside its row's types: try them all.
        const bool any = n == 1 && info.rule == ir::OpRule::kCvtPack;
        if (!any && !ir::InMask(mask, static_cast<ScalarType>(t))) continue;
        ir::Modifiers c = m;
        ScalarType* field[] = {&c.type, &c.type2, &c.type3, &c.type4};
        *field[n] = static_cast<ScalarType>(t);
        out.push_back(c);
      }
      break;
    }
  }
  return out;
}

// The type ld/st use for a register of type t.
ScalarType MemType(ScalarType t) {
  if (t == T::kF16 || t == T::kBF16) return T::kB16;
  if (t == T::kF16x2 || t == T::kBF16x2) return T::kB32;
  return t;
}

class Coverage {
 public:
  Coverage() {
    ir::Kernel& k = h_.kernel();
    k.target = ir::AllTargets().back().target;
    param_ = h_.Param("p", T::kU64);
    params_ = {param_, h_.Param("q", T::kU32), h_.Param("h", T::kU16)};  // ld.param vectors of each size
    sbuf_ = h_.Variable(ir::Variable{"sbuf", StateSpace::kShared, T::kB64, 64, 16, false});
    lbuf_ = h_.Variable(ir::Variable{"lbuf", StateSpace::kLocal, T::kB64, 8, 16, false});
    gen_ = h_.Reg(T::kU64);
    h_.Add(Opcode::kLd, ir::Modifiers{.type = T::kU64, .space = StateSpace::kParam}, {gen_}, {Operand::AddrParam(param_)});
    gaddr_ = h_.Reg(T::kU64);
    h_.Add(Opcode::kCvta, ir::Modifiers{.type = T::kU64, .space = StateSpace::kGlobal, .cvta_to = true}, {gaddr_},
           {gen_});
    for (int t = 2; t < ir::kNumScalarTypes; ++t) {
      auto type = static_cast<ScalarType>(t);
      if (ir::IsInstructionOnlyType(type)) continue;  // no register has it
      in_[t] = h_.Reg(type);
      h_.Add(Opcode::kLd, ir::Modifiers{.type = MemType(type), .space = StateSpace::kGlobal}, {in_[t]},
             {Operand::AddrReg(gaddr_, 8 * t)});
    }
    in_[1] = h_.Reg(T::kPred);
    h_.Add(Opcode::kSetp, ir::Modifiers{.type = T::kU32, .cmp = ir::CmpOp::kNe}, {in_[1]},
           {In(T::kU32), Imm(T::kU32, 0)});
    saddr_ = h_.Reg(T::kU32);
    h_.Add(Opcode::kMov, ir::Modifiers{.type = T::kU32}, {saddr_}, {Operand::Symbol(sbuf_)});
    prologue_ = k.body.size();
    REQUIRE(Msg(Verify()) == "OK");
  }

  Operand In(ScalarType t) const { return in_[static_cast<int>(t)]; }
  static Operand Imm(ScalarType t, uint64_t bits) { return Operand::Imm(t, bits); }
  // An immediate of type t worth converting or storing: 1.5 for floats, 5 otherwise.
  static Operand ImmValue(ScalarType t) {
    if (t == T::kF32) return Imm(t, 0x3FC00000);
    if (t == T::kF64) return Imm(t, 0x3FF8000000000000);
    if (ir::IsHalfFamily(t)) return Imm(t, t == T::kF16 ? 0x3E00 : 0x3FC0);  // refused: PTX has no half immediates
    return Imm(t, 5);
  }

  // Keeps `inst` (with fresh destinations of `dst_types`) if the verifier accepts it.
  void Try(ir::Instruction inst, const std::vector<ScalarType>& dst_types) {
    ++tried_;
    ir::Kernel& k = h_.kernel();
    const size_t nregs = k.regs.size();
    for (ScalarType t : dst_types) {
      if (t == T::kNone) return;
      inst.dsts.push_back(h_.Reg(t));
    }
    k.body.push_back(inst);
    absl::Status s = Verify();
    k.body.pop_back();
    if (s.ok()) {
      accepted_.push_back(std::move(inst));
    } else {
      k.regs.resize(nregs);
    }
  }

  // Every opcode with every modifier combination and operand form.
  void EnumerateAll() {
    for (int o = 0; o < ir::kNumOpcodes; ++o) {
      auto op = static_cast<Opcode>(o);
      const ir::OpInfo& info = ir::GetOpInfo(op);
      std::vector<ir::Modifiers> mods = {ir::Modifiers{}};
      for (int s = 0; s < info.num_slots; ++s) {
        std::vector<ir::Modifiers> next;
        for (const ir::Modifiers& m : mods) {
          for (ir::Modifiers& v : SlotValues(info, info.slots[s], m)) next.push_back(v);
        }
        mods = std::move(next);
      }
      for (const ir::Modifiers& m : mods) TryOperandForms(op, m);
    }
    // Reads of every special register, of variable addresses and of immediates.
    for (int s = 0; s < ir::kNumSpecialRegs; ++s) {
      auto special = static_cast<ir::SpecialReg>(s);
      ScalarType t = ir::SpecialRegType(special);
      Try(Make(Opcode::kMov, ir::Modifiers{.type = t}, {Operand::Special(special)}), {t});
    }
    for (ScalarType t : {T::kU32, T::kU64}) {
      Try(Make(Opcode::kMov, ir::Modifiers{.type = t}, {Operand::Symbol(sbuf_)}), {t});
      Try(Make(Opcode::kMov, ir::Modifiers{.type = t}, {Operand::Symbol(lbuf_)}), {t});
    }
    for (int t = 1; t < ir::kNumScalarTypes; ++t) {
      auto type = static_cast<ScalarType>(t);
      Try(Make(Opcode::kMov, ir::Modifiers{.type = type}, {Imm(type, 1)}), {type});
      Try(Make(Opcode::kAdd, ir::Modifiers{.type = type}, {In(type), Imm(type, 1)}), {type});
    }
  }

  // The module for `target`: the prologue and every accepted instruction the target allows.
  ir::Kernel KernelFor(ir::Target target, const std::function<bool(const ir::Instruction&)>& keep) const {
    ir::Kernel k = h_.kernel();
    k.name = StrCat("coverage_", ir::TargetName(target));
    k.target = target;
    for (const ir::Instruction& inst : accepted_) {
      if (keep(inst)) k.body.push_back(inst);
    }
    k.body.push_back(ir::Instruction{});  // ret
    return k;
  }

  const std::vector<ir::Instruction>& accepted() const { return accepted_; }
  size_t prologue() const { return prologue_; }
  int tried() const { return tried_; }

 private:
  static ir::Instruction Make(Opcode op, const ir::Modifiers& m, std::initializer_list<Operand> srcs) {
    ir::Instruction inst;
    inst.op = op;
    inst.mods = m;
    inst.srcs.assign(srcs.begin(), srcs.end());
    return inst;
  }

  absl::Status Verify() {
    ir::Kernel& k = h_.kernel();
    k.body.push_back(ir::Instruction{});  // ret
    absl::Status s = passes::VerifyKernel(k);
    k.body.pop_back();
    return s;
  }

  // The addresses an instruction on `space` can use.
  std::vector<Operand> Addresses(StateSpace space) const {
    switch (space) {
      case StateSpace::kGlobal: return {Operand::AddrReg(gaddr_, 0)};
      case StateSpace::kShared: return {Operand::AddrSymbol(sbuf_, 0), Operand::AddrReg(saddr_, 0)};
      case StateSpace::kLocal: return {Operand::AddrSymbol(lbuf_, 0)};
      case StateSpace::kParam:
        return {Operand::AddrParam(params_[0]), Operand::AddrParam(params_[1]), Operand::AddrParam(params_[2])};
      default: return {Operand::AddrReg(gen_, 0)};  // generic, const
    }
  }

  // The operands the row's signature asks for: a register of each type
  // (register groups as several), immediates as 0xF8.
  void TrySignature(Opcode op, const ir::Modifiers& m) {
    const ir::Signature& sig = ir::GetOpInfo(op).sig;
    ir::Instruction inst = Make(op, m, {});
    std::vector<ScalarType> dsts;
    for (int k = 0; k < sig.ndst; ++k) {
      ScalarType t = ir::OperandType(inst, sig.dsts[k]);
      if (t == T::kNone) return;
      for (int g = 0; g < ir::GroupCount(inst, sig.dsts[k]); ++g) dsts.push_back(t);
    }
    for (int k = 0; k < sig.nsrc; ++k) {
      const ir::OperandSpec& spec = sig.srcs[k];
      ScalarType t = ir::OperandType(inst, spec);
      if (t == T::kNone) return;
      for (int g = 0; g < ir::GroupCount(inst, spec); ++g) {
        inst.srcs.push_back(spec.cls == ir::OperandClass::kImm ? Imm(t, 0xF8) : In(t));
      }
    }
    Try(inst, dsts);
    if (sig.ndst > 0 && sig.dsts[sig.ndst - 1].optional) {  // and without the optional destination (match.all's p)
      dsts.pop_back();
      Try(inst, dsts);
    }
  }

  void TryOperandForms(Opcode op, const ir::Modifiers& m) {
    const ScalarType t = m.type;
    const ir::OpInfo& info = ir::GetOpInfo(op);
    switch (info.rule) {
      case ir::OpRule::kMov:
      case ir::OpRule::kGeneric:
      case ir::OpRule::kBitField:
      case ir::OpRule::kVote:
      case ir::OpRule::kMembar:
      case ir::OpRule::kFence:
        if (!info.has(ir::kTerminator)) TrySignature(op, m);
        return;
      case ir::OpRule::kCpAsync:
        // Shared destinations (variable, u32 register) x the global source x
        // cp-sizes (2 and 32 refused) x no src-size, an immediate, a register.
        for (const Operand& dst : Addresses(StateSpace::kShared)) {
          for (uint64_t size : {2, 4, 8, 16, 32}) {
            for (int src_size = 0; src_size < 3; ++src_size) {
              ir::Instruction inst = Make(op, m, {dst, Operand::AddrReg(gaddr_, 0), Imm(T::kU32, size)});
              if (src_size == 1) inst.srcs.push_back(Imm(T::kU32, size / 2));
              if (src_size == 2) inst.srcs.push_back(In(T::kU32));
              Try(inst, {});
            }
          }
        }
        return;
      case ir::OpRule::kCvtPack:
      case ir::OpRule::kRedux:
        if (!info.has(ir::kTerminator)) TrySignature(op, m);
        return;
      case ir::OpRule::kMatrix:  // ldmatrix {d..}, [a]; stmatrix [a], {s..}
        for (const Operand& addr : Addresses(StateSpace::kShared)) {
          ir::Instruction inst = Make(op, m, {addr});
          if (op == Opcode::kStmatrix) {
            for (int v = 0; v < m.vec; ++v) inst.srcs.push_back(In(T::kB32));
          }
          Try(inst, std::vector<ScalarType>(op == Opcode::kLdmatrix ? m.vec : 0, T::kB32));
        }
        return;
      case ir::OpRule::kSetp: {
        const std::vector<ScalarType> preds(info.sig.ndst, T::kPred);  // setp.f16x2: p|q
        if (m.bool_op == ir::BoolOp::kNone) {
          Try(Make(op, m, {In(t), In(t)}), preds);
        } else {
          Try(Make(op, m, {In(t), In(t), In(T::kPred)}), preds);
        }
        return;
      }
      case ir::OpRule::kCvt:
        if (m.type2 != T::kNone) {
          Try(Make(op, m, {In(m.type2)}), {t});
          Try(Make(op, m, {ImmValue(m.type2)}), {t});
        }
        return;
      case ir::OpRule::kCvta:
        Try(Make(op, m, {In(T::kU64)}), {T::kU64});
        Try(Make(op, m, {Operand::Symbol(sbuf_)}), {T::kU64});
        Try(Make(op, m, {Operand::Symbol(lbuf_)}), {T::kU64});
        return;
      case ir::OpRule::kLoad:
        for (const Operand& addr : Addresses(m.space)) {
          Try(Make(op, m, {addr}), std::vector<ScalarType>(m.vec, t));
        }
        return;
      case ir::OpRule::kStore:
        for (const Operand& addr : Addresses(m.space)) {
          for (bool imm : {false, true}) {  // registers, and immediates
            ir::Instruction inst = Make(op, m, {addr});
            for (int v = 0; v < m.vec; ++v) inst.srcs.push_back(imm ? ImmValue(t) : In(t));
            Try(inst, {});
          }
        }
        return;
      case ir::OpRule::kAtom:
      case ir::OpRule::kRed:
        for (const Operand& addr : Addresses(m.space)) {
          ir::Instruction inst = Make(op, m, {addr, In(t)});
          if (m.atom == ir::AtomOp::kCas) inst.srcs.push_back(In(t));
          Try(inst, info.rule == ir::OpRule::kAtom ? std::vector<ScalarType>{t} : std::vector<ScalarType>{});
        }
        return;
      case ir::OpRule::kBarrier:
        Try(Make(op, m, {Imm(T::kU32, 0)}), {});
        Try(Make(op, m, {In(T::kU32)}), {});
        Try(Make(op, m, {Imm(T::kU32, 1), Imm(T::kU32, 64)}), {});
        Try(Make(op, m, {In(T::kU32), In(T::kU32)}), {});
        return;
      case ir::OpRule::kShfl:
        for (bool with_pred : {false, true}) {
          std::vector<ScalarType> dsts = {t};
          if (with_pred) dsts.push_back(T::kPred);
          Try(Make(op, m, {In(t), In(T::kU32), Imm(T::kU32, 31), Imm(T::kB32, 0xFFFFFFFF)}), dsts);
        }
        return;
      case ir::OpRule::kBranch:
      case ir::OpRule::kLabelDef:
      case ir::OpRule::kRawPtx:
      case ir::OpRule::kLoopPragma: return;  // control flow, raw PTX and loop pragmas are covered by the kernels
    }
  }

  testing::HandKernel h_{"coverage"};
  uint32_t param_ = 0, sbuf_ = 0, lbuf_ = 0;
  std::array<uint32_t, 3> params_{};
  ir::Reg gen_, gaddr_, saddr_;
  std::array<ir::Reg, ir::kNumScalarTypes> in_{};
  size_t prologue_ = 0;
  int tried_ = 0;
  std::vector<ir::Instruction> accepted_;
};

const Coverage& TheCoverage() {
  static const Coverage* c = [] {
    auto* cov = new Coverage();
    cov->EnumerateAll();
    return cov;
  }();
  return *c;
}

// Prints `k`; the PTX line of each instruction in body order (labels included).
std::string PrintOrDie(const ir::Kernel& k, std::optional<ir::PtxVersion> version = std::nullopt) {
  absl::StatusOr<std::string> ptx = emit::PrintPtx(k, version);
  REQUIRE(Msg(ptx) == "OK");
  return *ptx;
}

TEST_CASE("the coverage module holds the forms the table promises", "[coverage]") {
  const Coverage& cov = TheCoverage();
  std::set<std::string> forms;
  for (const ir::Instruction& inst : cov.accepted()) {
    std::string text;
    ir::AppendOpcode(text, inst);
    forms.insert(text);
  }
  INFO("tried " << cov.tried() << " combinations; " << cov.accepted().size() << " instructions in "
                << forms.size() << " distinct forms");
  for (std::string form :
       {"setp.eq.u32", "setp.hs.u64", "setp.nan.f64", "setp.ltu.ftz.f32", "setp.ge.or.s32", "setp.ne.bf16",
        "cvt.rn.bf16.f32", "cvt.f32.bf16", "cvt.rn.f16.f64", "cvt.rzi.s8.f16", "cvt.rn.bf16.f16", "cvt.sat.u8.s32",
        "atom.global.add.noftz.bf16", "atom.shared.cas.b64", "atom.acq_rel.gpu.global.exch.b32",
        "atom.relaxed.cta.shared.inc.u32", "red.release.sys.global.add.f64", "red.shared.xor.b32",
        "ld.global.nc.cs.v4.f32", "ld.shared.v2.b64", "ld.local.u8", "ld.param.f64", "ld.global.v4.f64",
        "st.global.wt.v2.f32", "st.cs.v4.s32", "shfl.sync.idx.b32", "shfl.sync.down.b32", "vote.sync.ballot.b32",
        "vote.sync.uni.pred", "bar.sync", "membar.cta", "membar.gl", "membar.sys", "activemask.b32",
        "mul.wide.s16", "mad.hi.u64", "fma.rn.ftz.sat.f32", "div.full.f32", "rcp.approx.ftz.f64", "tanh.approx.f16x2",
        "ex2.approx.ftz.f32", "cvta.to.shared.u64", "cvta.param.u64", "bfe.s64", "bfi.b32", "popc.b64",
        "prmt.b32", "prmt.b32.f4e", "prmt.b32.rc16", "lop3.b32", "dp4a.u32.s32", "dp4a.s32.s32", "dp2a.lo.u32.u32",
        "dp2a.hi.s32.u32",
        // issue 9: mma and the fp8 packing conversions
        "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32", "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32",
        "mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32", "mma.sync.aligned.m16n8k16.row.col.satfinite.s32.s8.s8.s32",
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32",
        "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", "mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e5m2.f32",
        "cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.f16x2.e4m3x2", "cvt.rn.f16x2.e5m2x2",
        // issue 11 item 19: forms the verifier used to refuse
        "atom.global.cas.b16", "atom.acq_rel.gpu.shared.cas.b16", "atom.global.add.noftz.f16x2",
        "atom.add.noftz.bf16x2", "red.shared.add.noftz.f16x2", "red.release.sys.global.add.noftz.bf16x2",
        "setp.eq.f16x2", "setp.ltu.ftz.f16x2", "setp.ge.and.bf16x2", "ld.param.v2.u32", "ld.param.v4.b16",
        "ld.param.v4.u8", "ld.param.v2.s8", "ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16x2", "tanh.approx.bf16",
        "tanh.approx.bf16x2",
        // issue 9: cp.async and its groups, bar.arrive, fence
        "cp.async.ca.shared.global", "cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group",
        "cp.async.wait_all", "bar.arrive", "fence.acq_rel.cta", "fence.acq_rel.gpu", "fence.acq_rel.sys",
        "fence.sc.cta", "fence.sc.gpu", "fence.sc.sys",
        // issue 9: warp fragments and collectives, packing conversions
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
        "stmatrix.sync.aligned.m8n8.x4.shared.b16", "redux.sync.add.u32", "redux.sync.min.s32", "redux.sync.max.u32",
        "redux.sync.and.b32", "redux.sync.or.b32", "redux.sync.xor.b32", "match.any.sync.b32", "match.any.sync.b64",
        "match.all.sync.b32", "match.all.sync.b64", "cvt.rn.f16x2.f32", "cvt.rn.bf16x2.f32", "cvt.rn.relu.f16x2.f32",
        "cvt.rn.relu.bf16x2.f32", "cvt.rn.satfinite.f16x2.f32", "cvt.rn.relu.satfinite.bf16x2.f32"}) {
    INFO("form " << form);
    CHECK(forms.contains(form));
  }
  // match.all with and without its predicate, b32 and b64; ldmatrix/stmatrix from a variable and a register.
  CHECK(std::count_if(cov.accepted().begin(), cov.accepted().end(),
                      [](const ir::Instruction& inst) { return inst.op == Opcode::kMatchAll; }) == 4);
  CHECK(std::count_if(cov.accepted().begin(), cov.accepted().end(),
                      [](const ir::Instruction& inst) { return inst.op == Opcode::kLdmatrix; }) == 12);
  CHECK(std::count_if(cov.accepted().begin(), cov.accepted().end(),
                      [](const ir::Instruction& inst) { return inst.op == Opcode::kStmatrix; }) == 12);
  // mov packing prints as plain mov.b32/.b64: count the opcodes (b32 and b64 each way).
  for (Opcode op : {Opcode::kMovPack, Opcode::kMovUnpack}) {
    CHECK(std::count_if(cov.accepted().begin(), cov.accepted().end(),
                        [&](const ir::Instruction& inst) { return inst.op == op; }) == 2);
  }
  CHECK(cov.accepted().size() > 5000);
  // cp.async: .ca with 4, 8 and 16 bytes, .cg with 16, each without src-size,
  // with an immediate one and with a register, to a shared variable and a
  // shared register address: (3 + 1) x 3 x 2.
  CHECK(std::count_if(cov.accepted().begin(), cov.accepted().end(),
                      [](const ir::Instruction& inst) { return inst.op == Opcode::kCpAsync; }) == 24);
  // st and cvt of immediates (issue 11 item 19): every st type and every non-half cvt source.
  std::set<std::string> st_imm, cvt_imm;
  for (const ir::Instruction& inst : cov.accepted()) {
    if (inst.op != Opcode::kSt && inst.op != Opcode::kCvt) continue;
    std::string text;
    ir::AppendOpcode(text, inst);
    if (inst.op == Opcode::kSt && inst.srcs[1].is_imm()) st_imm.insert(text);
    if (inst.op == Opcode::kCvt && inst.srcs[0].is_imm()) cvt_imm.insert(text);
  }
  for (std::string form : {"st.global.u8", "st.shared.v4.s16", "st.local.v2.f64", "st.f32", "st.global.cs.v4.b32"}) {
    INFO("st of immediates: " << form);
    CHECK(st_imm.contains(form));
  }
  for (std::string form : {"cvt.rn.f32.s32", "cvt.rzi.s32.f64", "cvt.f64.f32", "cvt.u16.u32", "cvt.rn.bf16.f32",
                           "cvt.rn.f16.f64", "cvt.sat.s8.u64"}) {
    INFO("cvt of an immediate: " << form);
    CHECK(cvt_imm.contains(form));
  }
  CHECK(std::none_of(cov.accepted().begin(), cov.accepted().end(), [](const ir::Instruction& inst) {
    return inst.op == Opcode::kCvt && inst.srcs[0].is_imm() && ir::IsHalfFamily(inst.mods.type2);
  }));
}

TEST_CASE("the coverage module assembles for every target", "[ptxas][coverage]") {
  std::optional<std::string> ptxas = testing::PtxasOrSkip();
  if (!ptxas) return;
  const Coverage& cov = TheCoverage();
  std::string failures;
  for (const ir::TargetInfo& target : ir::AllTargets()) {
    ir::Kernel k = cov.KernelFor(target.target, [&](const ir::Instruction& inst) {
      return ir::TargetSatisfies(target.target, ir::RequirementOf(inst));
    });
    REQUIRE(Msg(passes::VerifyKernel(k)) == "OK");
    // Several kernels of a few hundred instructions each, assembled without
    // optimisation: ptxas checks the same, several times faster.
    ir::Module m;
    m.target = target.target;
    const size_t chunk = 300;
    for (size_t start = cov.prologue(); start + 1 < k.body.size(); start += chunk) {
      ir::Kernel part = k;
      part.name = StrCat(k.name, "_", m.kernels.size());
      part.body.assign(k.body.begin(), k.body.begin() + cov.prologue());
      size_t end = std::min(start + chunk, k.body.size() - 1);
      part.body.insert(part.body.end(), k.body.begin() + start, k.body.begin() + end);
      part.body.push_back(ir::Instruction{});
      m.kernels.push_back(std::move(part));
    }
    absl::StatusOr<std::string> module_ptx = emit::PrintPtx(m);
    REQUIRE(Msg(module_ptx) == "OK");
    std::string ptx = *module_ptx;
    Verdict v = Assemble(*ptxas, ptx, target.target, {"-O0"});
    if (v.exit_code != 0) {
      StrAppend(&failures, "ptxas -arch=", target.name, " rejected ", v.errors.size(),
                " instructions the verifier accepts:\n", Describe(v, ptx));
    }
  }
  if (!failures.empty()) FAIL(failures);
}

// The body lines of instructions that ptxas did not flag in `ptx`.
std::vector<std::string> Unflagged(const Verdict& v, const std::string& ptx, size_t first_line) {
  std::vector<std::string> lines = Lines(ptx);
  std::vector<std::string> out;
  for (size_t i = first_line; i < lines.size(); ++i) {
    if (lines[i] == "\tret;" || lines[i] == "}") continue;
    if (!v.errors.contains(static_cast<int>(i + 1))) out.push_back(lines[i]);
  }
  return out;
}

TEST_CASE("the opcode table's minimum targets and PTX versions are not too high", "[ptxas][coverage]") {
  std::optional<std::string> ptxas = testing::PtxasOrSkip();
  if (!ptxas) return;
  const Coverage& cov = TheCoverage();
  // Group the accepted instructions by what the table says they need.
  std::map<std::pair<int, int>, std::vector<const ir::Instruction*>> by_requirement;
  for (const ir::Instruction& inst : cov.accepted()) {
    ir::TargetRequirement r = ir::RequirementOf(inst);
    if (!r.arch_specific) by_requirement[{r.sm, r.ptx.value}].push_back(&inst);
  }
  for (const auto& entry : by_requirement) {
    auto [sm, ptx_version] = entry.first;
    const std::vector<const ir::Instruction*>& insts = entry.second;  // a plain name: clang 14 cannot capture bindings
    auto only_these = [&](const ir::Instruction& inst) {
      return std::find(insts.begin(), insts.end(), &inst) != insts.end();
    };
    // The newest target below the required SM must reject each of them.
    const ir::TargetInfo* below = nullptr;
    const ir::TargetInfo* lowest_ok = nullptr;
    for (const ir::TargetInfo& t : ir::AllTargets()) {
      if (t.arch_specific) continue;
      if (t.sm < sm) below = &t;
      if (t.sm >= sm && lowest_ok == nullptr) lowest_ok = &t;
    }
    if (below != nullptr) {
      ir::Kernel k = cov.KernelFor(below->target, only_these);
      std::string ptx = PrintOrDie(k);
      size_t body = Lines(ptx).size() - insts.size() - 2;
      std::vector<std::string> ok = Unflagged(Assemble(*ptxas, ptx, below->target, {"-O0"}), ptx, body);
      if (!ok.empty()) {
        FAIL("the table says these need sm_" << sm << ", but ptxas accepts them on " << below->name << ":\n"
                                             << StrJoin(ok, "\n"));
      }
    }
    // On the lowest target that has the SM, the PTX version below the required one must reject them.
    if (lowest_ok == nullptr || ptx_version <= lowest_ok->min_ptx.value) continue;
    auto known = ir::KnownPtxVersions();
    auto it = std::find(known.begin(), known.end(), ir::PtxVersion{ptx_version});
    REQUIRE(it != known.end());
    ir::Kernel k = cov.KernelFor(lowest_ok->target, only_these);
    std::string ptx = PrintOrDie(k);
    const std::string from = StrCat(".version ", it->ToString(), "\n");
    REQUIRE(ptx.find(from) != std::string::npos);
    ptx.replace(ptx.find(from), from.size(), StrCat(".version ", std::prev(it)->ToString(), "\n"));
    size_t body = Lines(ptx).size() - insts.size() - 2;
    std::vector<std::string> ok = Unflagged(Assemble(*ptxas, ptx, lowest_ok->target, {"-O0"}), ptx, body);
    if (!ok.empty()) {
      FAIL("the table says these need PTX " << it->ToString() << ", but ptxas accepts them with "
                                            << std::prev(it)->ToString() << " on " << lowest_ok->name << ":\n"
                                            << StrJoin(ok, "\n"));
    }
  }
}

}  // namespace
}  // namespace ptxforge
