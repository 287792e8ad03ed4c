#include "ir/source_loc.h"

#include <algorithm>
#include <mutex>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace ptxforge::ir {
namespace {

// The process's file names, by the id CompactLoc stores. Names are interned
// by pointer (what __builtin_FILE gives is a string literal, alive for the
// whole program); id 0 is "". The first kFixed names live in an array that
// is part of the program's data: the first builder call of a process runs
// no initialization, allocates nothing and hashes nothing (a program names
// a few dozen files at most); past them, names go to a vector and a map
// made then. A miss is rare (consecutive builder calls nearly always come
// from the same file, see InternFile), so the array is searched in order.
// Never destroyed: locations outlive static destructors.
constexpr uint32_t kFixed = 128;
struct FileTable {
  std::mutex mu;
  uint32_t count = 1;  // ids in use
  const char* fixed[kFixed] = {""};
  std::vector<const char*>* more = nullptr;                    // ids kFixed.., in order
  absl::flat_hash_map<const char*, uint32_t>* ids = nullptr;  // the ids of more's names
};
static_assert(std::is_trivially_destructible_v<FileTable>);
// In the program's initialized data (its initializer is a pointer, relocated
// when the program is loaded): no static initializer and no guard.
constinit FileTable g_files;

uint32_t Intern(FileTable& t, const char* file) {
  const uint32_t fixed = std::min(t.count, kFixed);
  for (uint32_t id = 1; id < fixed; ++id) {
    if (t.fixed[id] == file) return id;
  }
  if (t.count < kFixed) {
    t.fixed[t.count] = file;
    return t.count++;
  }
  if (t.more == nullptr) {
    t.more = new std::vector<const char*>;
    t.ids = new absl::flat_hash_map<const char*, uint32_t>;
  }
  auto [it, inserted] = t.ids->try_emplace(file, t.count);
  if (inserted) {
    t.more->push_back(file);
    ++t.count;
  }
  return it->second;
}

}  // namespace

uint32_t CompactLoc::InternFile(const char* file) {
  // Consecutive builder calls nearly always come from the same file: that
  // test first. last_file is only ever a nonempty name, or null with id 0,
  // the id of null.
  thread_local const char* last_file = nullptr;
  thread_local uint32_t last_id = 0;
  if (file == last_file) [[likely]] return last_id;
  if (file == nullptr || *file == '\0') return 0;
  FileTable& t = g_files;
  std::lock_guard<std::mutex> lock(t.mu);
  const uint32_t id = Intern(t, file);
  last_file = file;
  last_id = id;
  return id;
}

const char* CompactLoc::file_name() const {
  if (file_ == 0) return "";
  FileTable& t = g_files;
  std::lock_guard<std::mutex> lock(t.mu);
  if (file_ >= t.count) return "";
  return file_ < kFixed ? t.fixed[file_] : (*t.more)[file_ - kFixed];
}

}  // namespace ptxforge::ir
