// SourceLoc: the file and line of a builder call, for error messages.
#ifndef PTXFORGE_IR_SOURCE_LOC_H_
#define PTXFORGE_IR_SOURCE_LOC_H_

#include <cstdint>

namespace ptxforge::ir {

// Where a call was made. Built on __builtin_FILE/__builtin_LINE (g++ >= 9,
// clang++ >= 9) rather than std::source_location, which clang++ 14 cannot
// compile with libstdc++ 12. The member names follow std::source_location so
// `Loc loc = Loc::current()` default arguments read the same.
class SourceLoc {
 public:
  constexpr SourceLoc() = default;
  // The caller's location when used as a default argument.
  static constexpr SourceLoc current(const char* file = __builtin_FILE(), uint32_t line = __builtin_LINE()) {
    return SourceLoc(file, line);
  }
  constexpr const char* file_name() const { return file_; }
  constexpr uint32_t line() const { return line_; }

 private:
  constexpr SourceLoc(const char* file, uint32_t line) : file_(file), line_(line) {}
  const char* file_ = "";
  uint32_t line_ = 0;
};

// A SourceLoc in 8 bytes, as an Instruction stores it (16 for SourceLoc):
// the file as an index into a process-wide table of file names, interned by
// pointer (ir/source_loc.cc; __builtin_FILE gives string literals, so the
// table holds one entry per source file that made calls), and the line. It
// converts to and from SourceLoc, so `inst.loc = loc` and
// `FormatLoc(inst.loc)` read as before. Interning takes a lock only when the
// file differs from the calling thread's previous one.
class CompactLoc {
 public:
  constexpr CompactLoc() = default;
  CompactLoc(const SourceLoc& loc)  // NOLINT: implicit by design
      : file_(InternFile(loc.file_name())), line_(loc.line()) {}
  operator SourceLoc() const { return SourceLoc::current(file_name(), line_); }  // NOLINT: implicit by design
  const char* file_name() const;
  uint32_t line() const { return line_; }
  SourceLoc loc() const { return *this; }

 private:
  static uint32_t InternFile(const char* file);
  uint32_t file_ = 0;  // 0: "" (no location)
  uint32_t line_ = 0;
};

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_SOURCE_LOC_H_
