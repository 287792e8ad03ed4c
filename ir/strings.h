// String building on std::string_view. Debian's Abseil has its own
// absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW is 0), so absl::StrCat
// does not accept std::string_view; these small helpers do.
#ifndef PTXFORGE_IR_STRINGS_H_
#define PTXFORGE_IR_STRINGS_H_

#include <charconv>
#include <concepts>
#include <cstdint>
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
inline void Append(std::string& s, std::string_view v) { s.append(v); }
inline void Append(std::string& s, const char* v) { s.append(v); }
inline void Append(std::string& s, const std::string& v) { s.append(v); }
inline void Append(std::string& s, absl::string_view v) { s.append(v.data(), v.size()); }
inline void Append(std::string& s, char c) { s.push_back(c); }
inline void Append(std::string& s, bool b) { s.append(b ? "true" : "false"); }
template <std::integral T>
  requires(!std::is_same_v<T, char> && !std::is_same_v<T, bool>)
void Append(std::string& s, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  s.append(buf, r.ptr);
}
template <std::floating_point T>
void Append(std::string& s, T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  s.append(buf, r.ptr);
}
template <typename E>
  requires std::is_enum_v<E>
void Append(std::string& s, E e) = delete;  // print enums by name, not number
inline void Append(std::string& s, Hex h) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), h.value, 16);
  for (int pad = h.width - static_cast<int>(r.ptr - buf); pad > 0; --pad) s.push_back('0');
  for (char* p = buf; p != r.ptr; ++p) s.push_back(*p >= 'a' ? static_cast<char>(*p - 'a' + 'A') : *p);
}
}  // namespace strings_internal

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (strings_internal::Append(*out, args), ...);
}

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string s;
  (strings_internal::Append(s, args), ...);
  return s;
}

// Joins the elements of a range of strings (or string views) with `sep`.
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
