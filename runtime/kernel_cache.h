// The compiled-kernel cache: keys, an in-memory single-flight map, and cubins on disk.
//
// Key: the PTX's hash, the device's compute capability, the driver version
// and the JIT options. In memory, two threads asking for the same key build
// it once (the second waits for the first). On disk, each entry is one file
// "<dir>/<key id>.cubin", written to a temporary file in the same directory
// and renamed into place, so a reader sees a whole entry or none; every entry
// carries its key, size and checksum, and one that does not check out is
// deleted and reported as corrupt (the caller rebuilds it). An entry that
// cannot be read (too many open files, an I/O error) is a miss and stays.
//
// The disk cache is per user: entries are made with mode 0600, directories
// with 0700, and DiskCache::Open (which CudaDevice uses) refuses a directory
// that is not owned by the effective user or that group or others may write
// to, since whoever can write there chooses the code that runs.
#ifndef PTXFORGE_RUNTIME_KERNEL_CACHE_H_
#define PTXFORGE_RUNTIME_KERNEL_CACHE_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ptxforge::runtime {

// FNV-1a: stable across runs, machines and builds (unlike absl::Hash).
uint64_t StableHash64(std::string_view data);
// 128-bit FNV-1a as 32 lower-case hex digits.
std::string StableHash128(std::string_view data);

struct CacheKey {
  std::string ptx_hash;  // StableHash128 of the PTX text
  int cc_major = 0;
  int cc_minor = 0;
  int driver_version = 0;   // cuDriverGetVersion
  std::string jit_options;  // JitOptions::Fingerprint()

  static CacheKey For(std::string_view ptx, int cc_major, int cc_minor, int driver_version,
                      std::string_view jit_options);
  // "<ptx hash>-sm86-cuda12040-O4-r0-l0": one per key, safe as a file name.
  std::string Id() const;
};

// Where the disk cache lives: $PTXFORGE_CACHE_DIR, else
// $XDG_CACHE_HOME/ptxforge, else $HOME/.cache/ptxforge, else
// <$TMPDIR or /tmp>/ptxforge-cache-<effective uid>.
std::string DefaultCacheDirectory();
// Makes `directory` (mode 0700, with its missing parents) and checks that
// only this user can change what is in it: a directory owned by the
// effective user and not writable by group or others (through a symbolic
// link only when the link is the user's too). The error says what is wrong.
absl::Status PrepareCacheDirectory(const std::string& directory);
// The disk cache switch in $PTXFORGE_CACHE: true for "on", "1" or "true",
// false for "off", "0" or "false", nullopt when unset or anything else (the
// program's choice stands).
std::optional<bool> DiskCacheFromEnvironment();

// The bytes of an entry file, and back. Decoding fails (with the reason) when
// the bytes are not a whole entry for `key`.
std::string EncodeCacheEntry(const CacheKey& key, std::string_view payload);
absl::StatusOr<std::string> DecodeCacheEntry(const CacheKey& key, std::string_view bytes);

class DiskCache {
 public:
  // A cache in `directory` after PrepareCacheDirectory, or its error.
  static absl::StatusOr<std::unique_ptr<DiskCache>> Open(std::string directory);
  // A cache in `directory`, unchecked (Open checks it).
  explicit DiskCache(std::string directory) : directory_(std::move(directory)) {}

  enum class State { kHit, kMiss, kCorrupt };
  struct Lookup {
    State state = State::kMiss;
    std::string payload;  // kHit
    // kCorrupt: why the entry was dropped; kMiss: why an entry that is there
    // could not be read ("" when there is none).
    std::string problem;
  };
  struct Stats {
    int hits = 0;
    int misses = 0;
    int read_errors = 0;  // of the misses: an entry was there but could not be read (and stays)
    int corrupt = 0;      // entries found bad (or refused by the driver) and deleted
    int stores = 0;
    int store_failures = 0;
  };

  // The entry for `key`. A corrupt one (bad header, size, key or checksum)
  // is deleted; one that cannot be read is a miss and stays.
  Lookup Find(const CacheKey& key);
  // Deletes the entry for `key`, which the caller found bad (the driver
  // refused its image); counted as corrupt.
  void Drop(const CacheKey& key);
  // Writes the entry atomically (temporary file, fsync, rename), creating the
  // directory when needed.
  absl::Status Store(const CacheKey& key, std::string_view payload);

  const std::string& directory() const { return directory_; }
  std::string PathFor(const CacheKey& key) const;
  Stats stats() const;

 private:
  std::string directory_;
  mutable std::mutex mu_;
  Stats stats_;
};

// A map from key to value where concurrent requests for one key run the
// creating function once: the first caller creates, the others wait for it
// and share its result. A failure reaches every waiter and is not kept, so a
// later request tries again. Thread-safe.
template <typename V>
class SingleFlightCache {
 public:
  // `created` (optional) tells whether this call ran `create`.
  absl::StatusOr<V> GetOrCreate(const std::string& key, absl::FunctionRef<absl::StatusOr<V>()> create,
                                bool* created = nullptr) {
    std::shared_ptr<Slot> slot;
    bool mine = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto [it, inserted] = slots_.try_emplace(key, nullptr);
      if (inserted) it->second = std::make_shared<Slot>();
      slot = it->second;
      mine = inserted;
      if (!mine) {
        done_.wait(lock, [&] { return slot->done; });
        if (created != nullptr) *created = false;
        return slot->value;
      }
    }
    absl::StatusOr<V> value = create();
    {
      std::lock_guard<std::mutex> lock(mu_);
      slot->value = value;
      slot->done = true;
      if (!value.ok()) slots_.erase(key);
    }
    done_.notify_all();
    if (created != nullptr) *created = true;
    return value;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return slots_.size();
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(slots_, [](const auto& entry) { return entry.second->done; });
  }

 private:
  struct Slot {
    bool done = false;
    absl::StatusOr<V> value = absl::UnknownError("not built yet");
  };
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::map<std::string, std::shared_ptr<Slot>, std::less<>> slots_;
};

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_KERNEL_CACHE_H_
