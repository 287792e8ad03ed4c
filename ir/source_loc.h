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

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_SOURCE_LOC_H_
