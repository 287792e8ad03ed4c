// Renders instructions as PTX-syntax text. Both printers and the verifier's
// messages use it; register and label names come from the caller (virtual
// ids in the IR dump, renumbered per class in PTX).
#ifndef PTXFORGE_IR_FORMAT_H_
#define PTXFORGE_IR_FORMAT_H_

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "ir/kernel.h"

namespace ptxforge::ir {

using RegNameFn = absl::FunctionRef<void(std::string& out, Reg r)>;

// "$L3_loop": label names are the label id plus its hint, so they are unique.
void AppendLabelName(std::string& out, const Kernel& kernel, Label label);
// Immediates in PTX spelling: 0f3F800000 (f32), 0d... (f64), hex for bit
// types, decimal for integers.
void AppendImmediate(std::string& out, ScalarType type, uint64_t bits);
// The mnemonic with its modifiers: "ld.global.nc.v4.f32".
void AppendOpcode(std::string& out, const Instruction& inst);
void AppendOperand(std::string& out, const Kernel& kernel, const Operand& op, RegNameFn reg_name);
// A whole instruction without indentation or trailing newline:
// "@!%p1 bra $L2_endif;" or "add.rn.f32 %f3, %f1, %f2;". Raw PTX has its
// placeholders replaced (and may span several lines). The IR dump leaves out
// the destinations (it prints them first) and the semicolon.
struct FormatStyle {
  bool dsts = true;
  bool semicolon = true;
};
void AppendInstruction(std::string& out, const Kernel& kernel, const Instruction& inst, RegNameFn reg_name,
                       FormatStyle style = {});

// The PTX printer's output buffer: text is stored into a buffer on the
// stack and appended to the string when the buffer fills, or at flush(),
// instead of an append each (a capacity test, and a call to memcpy for
// most). Short pieces of a bounded size (a register name, a modifier, a
// separator, a literal, a number) are stored whole. The functions that know
// only std::string (the rare slots and raw PTX) write to str(), which
// flushes the buffer first.
class LineBuffer {
 public:
  // Through `buffer` (at least kMaxPiece bytes; it outlives this). A text
  // that fits in it reaches `out` in one append, at finish(): an empty
  // string then gets an allocation of exactly the text's size. When text
  // reaches `out` before (the buffer filled, or str() was called), `out`
  // first reserves `spill_reserve` bytes (or what it needs, when more;
  // nothing when it is 0).
  LineBuffer(std::string& out, std::span<char> buffer, size_t spill_reserve)
      : out_(out),
        begin_(buffer.data()),
        end_(buffer.data() + buffer.size()),
        p_(begin_),
        spill_reserve_(spill_reserve) {}
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;
  ~LineBuffer() { finish(); }

  // The largest piece reserve() and put() take.
  static constexpr size_t kMaxPiece = 64;

  // Appends what is buffered to the string.
  void flush();
  // The last flush: no reserve before it.
  void finish() {
    spill_reserve_ = 0;
    flush();
  }
  std::string& str() {
    flush();
    return out_;
  }
  // Room for n <= kMaxPiece bytes at the returned cursor; advance_to() the
  // end of what was written there.
  char* reserve(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) flush();
    return p_;
  }
  void advance_to(char* p) { p_ = p; }
  void push_back(char c) { *reserve(1) = c; ++p_; }
  void append(std::string_view s) {
    if (s.size() > kMaxPiece) {
      str().append(s);
      return;
    }
    std::memcpy(reserve(s.size()), s.data(), s.size());
    p_ += s.size();
  }
  // The first n bytes of text, copied as N bytes whole (n <= N <= kMaxPiece).
  template <size_t N>
  void put(const char (&text)[N], size_t n) {
    static_assert(N <= kMaxPiece);
    std::memcpy(reserve(N), text, N);
    p_ += n;
  }
  // A string literal, without its terminating zero.
  template <size_t N>
  void literal(const char (&text)[N]) {
    put(text, N - 1);
  }
  void decimal(int64_t v) {
    char* p = reserve(20);
    p_ = std::to_chars(p, p + 20, v).ptr;
  }

 private:
  void Spill() {
    out_.reserve(std::max(spill_reserve_, out_.size() + static_cast<size_t>(p_ - begin_)));
    spill_reserve_ = 0;
  }

  std::string& out_;
  char* const begin_;
  char* const end_;
  char* p_;
  size_t spill_reserve_ = 0;
};

// AppendInstruction with PTX register names under `numbering` (the PTX
// printer's), read without a call through a function reference per
// register, into `line`.
struct RegisterNumbering;
void AppendPtxInstruction(LineBuffer& line, const Kernel& kernel, const Instruction& inst,
                          const RegisterNumbering& numbering);
// What slot i of the opcode's format prints, by a switch on the slot: what
// AppendOpcode's tables say for each slot and value (ir_test compares them).
void AppendSlot(std::string& out, const Instruction& inst, int i);

// AppendOpcode into a line buffer (the PTX printer's form: the mnemonic and
// the modifiers stored whole).
void AppendOpcode(LineBuffer& out, const Instruction& inst);

// The virtual name of a register in the IR dump and messages: "%7".
void AppendVirtualRegName(std::string& out, Reg r);
std::string InstructionText(const Kernel& kernel, const Instruction& inst);  // with virtual names

// "kernel_builder_test.cc:42" (the file's base name); "" when unknown.
std::string FormatLoc(const SourceLoc& loc);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_FORMAT_H_
