// String building on std::string_view. Debian's Abseil has its own
// absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW is 0), so absl::StrCat
// does not accept std::string_view; these small helpers do.
#ifndef PTXFORGE_IR_STRINGS_H_
#define PTXFORGE_IR_STRINGS_H_

#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace ptxforge {

// Upper-case hex digits, at least `width` of them ("0x" is not added).
struct Hex {
  uint64_t value;
  int width = 0;
};

namespace strings_internal {

// One argument of StrCat/StrAppend: a view of a string argument, or the
// value of a number, character or Hex, formatted when the pieces are
// appended. The pieces of a call are made at the call (a few stores each,
// no branch or call) and formatted and appended by one out-of-line loop
// (AppendPieces), so a call site holds only that call: a first codegen in a
// fresh process pays for each distinct branch and call it runs
// (bench/frontend_cost), and the printer's StrAppend calls, inlined piece by
// piece, were a quarter of PrintPtx's branches.
class Piece {
 public:
  enum class Kind : uint8_t { kText, kChar, kSigned, kUnsigned, kFloat, kDouble, kHex };

  Piece(std::string_view v) : text_{v.data(), v.size()} {}
  Piece(const char* v) : Piece(std::string_view(v)) {}
  Piece(const std::string& v) : text_{v.data(), v.size()} {}
  Piece(absl::string_view v) : text_{v.data(), v.size()} {}
  Piece(char c) : kind_(Kind::kChar), char_(c) {}
  Piece(bool b) : Piece(b ? std::string_view("true") : std::string_view("false")) {}
  template <std::integral T>
    requires(!std::is_same_v<T, char> && !std::is_same_v<T, bool>)
  Piece(T v) {
    static_assert(sizeof(T) <= sizeof(int64_t), "StrCat formats integers of up to 64 bits");
    if constexpr (std::is_signed_v<T>) {
      kind_ = Kind::kSigned;
      signed_ = v;
    } else {
      kind_ = Kind::kUnsigned;
      unsigned_ = v;
    }
  }
  Piece(float v) : kind_(Kind::kFloat), float_(v) {}
  Piece(double v) : kind_(Kind::kDouble), double_(v) {}
  Piece(Hex h) : kind_(Kind::kHex), hex_(h) {}
  template <typename E>
    requires std::is_enum_v<E>
  Piece(E e) = delete;  // print enums by name, not number

  // Appends the text to s.
  void AppendTo(std::string& s) const;

 private:
  struct Text {
    const char* data;
    size_t size;
  };
  Kind kind_ = Kind::kText;
  union {
    Text text_;
    char char_;
    int64_t signed_;
    uint64_t unsigned_;
    float float_;
    double double_;
    Hex hex_;
  };
};

// Appends each piece's text to s, in order.
void AppendPieces(std::string& s, std::initializer_list<Piece> pieces);

inline void Append(std::string& s, const Piece& p) { p.AppendTo(s); }

}  // namespace strings_internal

// StrAppend(&s, "x = ", 3, ", ", name) appends "x = 3, " and name to s;
// StrCat returns the concatenation. Arguments: strings (std::string,
// std::string_view, absl::string_view, const char*), char, bool (true,
// false), integers, float and double (shortest round-trip form), Hex. No
// argument of StrAppend may be *out or a view into it (the views are taken
// before *out grows).
template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  strings_internal::AppendPieces(*out, {strings_internal::Piece(args)...});
}

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string s;
  strings_internal::AppendPieces(s, {strings_internal::Piece(args)...});
  return s;
}

// Appends an integer in decimal, formatted inline: for the printer's
// per-operand paths (register numbers, immediates, labels), run for every
// instruction of a kernel, where StrAppend's shared loop made printing
// 10-15% slower (scale_bench BM_Print).
template <std::integral T>
  requires(!std::is_same_v<T, char> && !std::is_same_v<T, bool>)
inline void AppendDecimal(std::string& s, T v) {
  char buf[24];
  s.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
}

// Writes v's hex digits (upper case, no padding) at p, which has room for
// 16; returns their end.
inline char* WriteHexDigits(char* p, uint64_t v) {
  char* const end = std::to_chars(p, p + 16, v, 16).ptr;
  for (char* q = p; q != end; ++q) *q = *q >= 'a' ? static_cast<char>(*q - 'a' + 'A') : *q;
  return end;
}

// Appends h's digits (upper case, zero-padded to its width), inline.
inline void AppendHex(std::string& s, Hex h) {
  char buf[16];
  char* const end = WriteHexDigits(buf, h.value);
  const int digits = static_cast<int>(end - buf);
  if (h.width > digits) s.append(static_cast<size_t>(h.width - digits), '0');
  s.append(buf, end);
}

template <typename Range>
std::string StrJoin(const Range& range, std::string_view sep) {
  std::string s;
  bool first = true;
  for (const auto& item : range) {
    if (!first) s.append(sep);
    first = false;
    strings_internal::Append(s, item);
  }
  return s;
}

// User input echoed in a one-line message: control characters escaped (a
// newline becomes \n), and text longer than `max` characters cut to its
// start plus "... (N characters)".
inline std::string ForMessage(std::string_view s, size_t max = 64) {
  std::string out;
  const std::string_view shown = s.substr(0, max);
  for (char c : shown) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out.append("\\n");
    } else if (c == '\t') {
      out.append("\\t");
    } else if (u < 0x20 || u == 0x7F) {
      out.append("\\x");
      strings_internal::Append(out, Hex{u, 2});
    } else {
      out.push_back(c);
    }
  }
  if (s.size() > max) StrAppend(&out, "... (", s.size(), " characters)");
  return out;
}

// For Abseil functions that take absl::string_view.
inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace ptxforge

#endif  // PTXFORGE_IR_STRINGS_H_
