#include "ir/source_loc.h"

#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace ptxforge::ir {
namespace {

// The process's file names, by the id CompactLoc stores. Names are interned
// by pointer (what __builtin_FILE gives is a string literal, alive for the
// whole program); id 0 is "".
struct FileTable {
  std::mutex mu;
  std::vector<const char*> names{""};
  absl::flat_hash_map<const char*, uint32_t> ids;
};

FileTable& Files() {
  static FileTable* table = new FileTable;  // never destroyed: locations outlive static destructors
  return *table;
}

}  // namespace

uint32_t CompactLoc::InternFile(const char* file) {
  if (file == nullptr || *file == '\0') return 0;
  // Consecutive builder calls nearly always come from the same file.
  thread_local const char* last_file = nullptr;
  thread_local uint32_t last_id = 0;
  if (file == last_file) return last_id;
  FileTable& t = Files();
  std::lock_guard<std::mutex> lock(t.mu);
  auto [it, inserted] = t.ids.try_emplace(file, static_cast<uint32_t>(t.names.size()));
  if (inserted) t.names.push_back(file);
  last_file = file;
  last_id = it->second;
  return it->second;
}

const char* CompactLoc::file_name() const {
  if (file_ == 0) return "";
  FileTable& t = Files();
  std::lock_guard<std::mutex> lock(t.mu);
  return file_ < t.names.size() ? t.names[file_] : "";
}

}  // namespace ptxforge::ir
