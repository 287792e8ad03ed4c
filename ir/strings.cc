// The formatting behind StrCat and StrAppend (ir/strings.h).
#include "ir/strings.h"

#include <algorithm>
#include <charconv>

namespace ptxforge::strings_internal {

void Piece::AppendTo(std::string& s) const {
  // Room for any number: 20 digits and a sign, the shortest round-trip form
  // of a double (24 characters).
  char buf[32];
  char* end = buf;
  switch (kind_) {
    case Kind::kText: s.append(text_.data, text_.size); return;
    case Kind::kChar: s.push_back(char_); return;
    case Kind::kSigned: end = std::to_chars(buf, buf + sizeof(buf), signed_).ptr; break;
    case Kind::kUnsigned: end = std::to_chars(buf, buf + sizeof(buf), unsigned_).ptr; break;
    case Kind::kFloat: end = std::to_chars(buf, buf + sizeof(buf), float_).ptr; break;
    case Kind::kDouble: end = std::to_chars(buf, buf + sizeof(buf), double_).ptr; break;
    case Kind::kHex: AppendHex(s, hex_); return;
  }
  s.append(buf, end);
}

void AppendPieces(std::string& s, std::initializer_list<Piece> pieces) {
  for (const Piece& p : pieces) p.AppendTo(s);
}

}  // namespace ptxforge::strings_internal
