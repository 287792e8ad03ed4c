// Tests of the kernel cache on its own, with fake entries: keys, the entry format, corruption, atomic writes, single flight.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/kernel_cache.h"
#include "test/cuda_test_util.h"

namespace ptxforge::runtime {
namespace {

using cuda_testing::Msg;
using cuda_testing::ReadFileText;
using cuda_testing::ScopedEnv;
using cuda_testing::TempDir;
using cuda_testing::WriteFileText;

CacheKey Key(std::string_view ptx = ".version 8.0\n.target sm_80\n") {
  return CacheKey::For(ptx, 8, 6, 12040, "O4-r0-l0");
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("stable hashes are FNV-1a", "[cuda][cache]") {
  CHECK(StableHash64("") == 0xcbf29ce484222325ULL);
  CHECK(StableHash64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(StableHash128("") == "6c62272e07bb014262b821756295c58d");
  CHECK(StableHash128("a") == "d228cb696f1a8caf78912b704e4a8964");
}

TEST_CASE("the cache key holds the PTX hash, the compute capability, the driver and the JIT options",
          "[cuda][cache]") {
  CacheKey key = CacheKey::For("ptx text", 8, 6, 12040, "O4-r0-l0");
  CHECK(key.ptx_hash == StableHash128("ptx text"));
  CHECK(key.Id() == StableHash128("ptx text") + "-sm86-cuda12040-O4-r0-l0");
  std::set<std::string> ids = {
      key.Id(),
      CacheKey::For("ptx text!", 8, 6, 12040, "O4-r0-l0").Id(),
      CacheKey::For("ptx text", 8, 9, 12040, "O4-r0-l0").Id(),
      CacheKey::For("ptx text", 9, 0, 12040, "O4-r0-l0").Id(),
      CacheKey::For("ptx text", 8, 6, 12080, "O4-r0-l0").Id(),
      CacheKey::For("ptx text", 8, 6, 12040, "O3-r0-l0").Id(),
  };
  CHECK(ids.size() == 6);
}

TEST_CASE("cache entries decode only when whole and for their key", "[cuda][cache]") {
  CacheKey key = Key();
  std::string entry = EncodeCacheEntry(key, "CUBIN");
  CHECK(entry == "PTXFORGE-CACHE 1\nkey " + key.Id() + "\nsize 5\nchecksum " + "24e5dd3083c309de" + "\n\nCUBIN");
  CHECK(*DecodeCacheEntry(key, entry) == "CUBIN");
  CHECK(*DecodeCacheEntry(key, EncodeCacheEntry(key, "")) == "");

  CHECK(Msg(DecodeCacheEntry(key, "")) == "not a ptxforge cache entry (bad magic)");
  CHECK(Msg(DecodeCacheEntry(key, "\x7f" "ELF....")) == "not a ptxforge cache entry (bad magic)");
  CHECK(Msg(DecodeCacheEntry(key, entry.substr(0, 40))) == "the entry's header is cut or malformed");
  CHECK(Msg(DecodeCacheEntry(Key("other"), entry)) ==
        "the entry is for key " + key.Id() + ", not " + Key("other").Id());
  CHECK(Msg(DecodeCacheEntry(key, entry.substr(0, entry.size() - 2))) == "the payload is 3 bytes, the header says 5");
  CHECK(Msg(DecodeCacheEntry(key, entry + "X")) == "the payload is 6 bytes, the header says 5");
  std::string flipped = entry;
  flipped.back() = 'X';
  CHECK(Msg(DecodeCacheEntry(key, flipped)) == "checksum mismatch (header 24e5dd3083c309de, payload 24e5ef3083c32874)");
  CHECK(DecodeCacheEntry(key, flipped).status().code() == absl::StatusCode::kDataLoss);
}

TEST_CASE("the disk cache stores atomically and finds its entries", "[cuda][cache]") {
  TempDir tmp;
  std::string dir = tmp.path() + "/a/b/cache";  // created on the first store
  DiskCache cache(dir);
  CacheKey key = Key();
  CHECK(cache.Find(key).state == DiskCache::State::kMiss);
  REQUIRE(cache.Store(key, "CUBIN-1").ok());
  CHECK(cache.PathFor(key) == dir + "/" + key.Id() + ".cubin");
  CHECK(Files(dir) == std::vector<std::string>{key.Id() + ".cubin"});  // no temporary file is left
  CHECK(ReadFileText(cache.PathFor(key)) == EncodeCacheEntry(key, "CUBIN-1"));
  CHECK((std::filesystem::status(cache.PathFor(key)).permissions() & std::filesystem::perms::all) ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));  // 0600: the user's own
  DiskCache::Lookup hit = cache.Find(key);
  CHECK(hit.state == DiskCache::State::kHit);
  CHECK(hit.payload == "CUBIN-1");
  REQUIRE(cache.Store(key, "CUBIN-2").ok());  // replaces the entry
  CHECK(cache.Find(key).payload == "CUBIN-2");
  CHECK(cache.Find(Key("another kernel")).state == DiskCache::State::kMiss);
  DiskCache::Stats stats = cache.stats();
  CHECK(stats.hits == 2);
  CHECK(stats.misses == 2);
  CHECK(stats.stores == 2);
  CHECK(stats.corrupt == 0);
}

TEST_CASE("a corrupt disk entry is reported, deleted and rebuilt", "[cuda][cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path());
  CacheKey key = Key();
  struct Case {
    std::string bytes;
    std::string problem;
  };
  std::string good = EncodeCacheEntry(key, "CUBIN");
  std::string flipped = good;
  flipped[flipped.size() - 3] ^= 0x20;
  std::vector<Case> cases = {
      {"", "not a ptxforge cache entry (bad magic)"},
      {good.substr(0, good.size() - 1), "the payload is 4 bytes, the header says 5"},  // a torn write
      {flipped, "checksum mismatch (header 24e5dd3083c309de, payload 0fb67d2fe6c3347e)"},  // "CUbIN"
      {EncodeCacheEntry(Key("renamed"), "CUBIN"), "the entry is for key " + Key("renamed").Id() + ", not " + key.Id()},
  };
  for (const Case& c : cases) {
    WriteFileText(cache.PathFor(key), c.bytes);
    DiskCache::Lookup found = cache.Find(key);
    CHECK(found.state == DiskCache::State::kCorrupt);
    CHECK(found.problem == c.problem);
    CHECK_FALSE(std::filesystem::exists(cache.PathFor(key)));  // dropped
    CHECK(cache.Find(key).state == DiskCache::State::kMiss);
  }
  CHECK(cache.stats().corrupt == 4);
  REQUIRE(cache.Store(key, "CUBIN").ok());  // rebuilt
  CHECK(cache.Find(key).payload == "CUBIN");
}

TEST_CASE("an entry that cannot be read is a miss and stays", "[cuda][cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path());
  CacheKey key = Key();
  std::string path = cache.PathFor(key);
  // Opening fails (ELOOP), as it may for a whole entry (EMFILE, EIO...).
  REQUIRE(symlink(path.c_str(), path.c_str()) == 0);
  DiskCache::Lookup found = cache.Find(key);
  CHECK(found.state == DiskCache::State::kMiss);
  CHECK(found.problem == "cannot open " + path + ": Too many levels of symbolic links");
  CHECK(std::filesystem::is_symlink(path));  // kept
  std::filesystem::remove(path);
  // Reading fails (EISDIR).
  std::filesystem::create_directory(path);
  found = cache.Find(key);
  CHECK(found.state == DiskCache::State::kMiss);
  CHECK(found.problem == "cannot read " + path + ": Is a directory");
  CHECK(std::filesystem::is_directory(path));
  DiskCache::Stats stats = cache.stats();
  CHECK(stats.misses == 2);
  CHECK(stats.read_errors == 2);
  CHECK(stats.corrupt == 0);
  CHECK(cache.Find(Key("absent")).problem.empty());
}

TEST_CASE("a writer's leftover temporary file is never read as an entry", "[cuda][cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path());
  CacheKey key = Key();
  std::string torn = EncodeCacheEntry(key, "CUBIN");
  WriteFileText(tmp.path() + "/." + key.Id() + ".tmp-Ab12Cd", torn.substr(0, torn.size() / 2));
  CHECK(cache.Find(key).state == DiskCache::State::kMiss);
  REQUIRE(cache.Store(key, "CUBIN").ok());
  CHECK(cache.Find(key).payload == "CUBIN");
}

TEST_CASE("a cache directory that cannot be made fails the store with the reason", "[cuda][cache]") {
  TempDir tmp;
  WriteFileText(tmp.path() + "/file", "not a directory");
  DiskCache cache(tmp.path() + "/file/cache");
  absl::Status s = cache.Store(Key(), "CUBIN");
  CHECK(Msg(s) == "cannot create the cache directory " + tmp.path() + "/file/cache: Not a directory");
  CHECK(cache.stats().store_failures == 1);
  CHECK(cache.Find(Key()).state == DiskCache::State::kMiss);
}

TEST_CASE("readers never see a torn entry while writers replace it", "[cuda][cache]") {
  TempDir tmp;
  CacheKey key = Key();
  std::set<std::string> payloads;
  for (int w = 0; w < 3; ++w) payloads.insert(std::string(20000 + w * 7000, static_cast<char>('a' + w)));
  std::atomic<bool> stop = false;
  std::atomic<int> bad = 0, hits = 0;
  std::thread reader([&] {
    DiskCache cache(tmp.path());
    for (bool last = false; !last;) {
      last = stop;  // one more lookup after the writers are done, which must hit
      DiskCache::Lookup found = cache.Find(key);
      if (found.state == DiskCache::State::kCorrupt || (found.state == DiskCache::State::kHit &&
                                                        payloads.count(found.payload) == 0)) {
        ++bad;
      }
      if (found.state == DiskCache::State::kHit) ++hits;
    }
  });
  std::vector<std::thread> writers;
  for (const std::string& payload : payloads) {
    writers.emplace_back([&, payload] {
      DiskCache cache(tmp.path());
      for (int i = 0; i < 40; ++i) (void)cache.Store(key, payload);
    });
  }
  for (std::thread& t : writers) t.join();
  stop = true;
  reader.join();
  CHECK(bad == 0);
  CHECK(hits > 0);
  CHECK(Files(tmp.path()) == std::vector<std::string>{key.Id() + ".cubin"});
}

TEST_CASE("the cache directory and switch come from the environment", "[cuda][cache]") {
  {
    ScopedEnv dir("PTXFORGE_CACHE_DIR", "/somewhere/cache");
    CHECK(DefaultCacheDirectory() == "/somewhere/cache");
  }
  ScopedEnv no_dir("PTXFORGE_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(DefaultCacheDirectory() == "/xdg/ptxforge");
  }
  ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  {
    ScopedEnv home("HOME", "/home/someone");
    CHECK(DefaultCacheDirectory() == "/home/someone/.cache/ptxforge");
  }
  {
    ScopedEnv no_home("HOME", nullptr);
    ScopedEnv tmpdir("TMPDIR", "/scratch");
    CHECK(DefaultCacheDirectory() == "/scratch/ptxforge-cache-" + std::to_string(geteuid()));  // the user's own
  }
  for (const char* off : {"off", "0", "false"}) {
    ScopedEnv cache("PTXFORGE_CACHE", off);
    CHECK(DiskCacheFromEnvironment() == false);
  }
  for (const char* on : {"on", "1", "true"}) {
    ScopedEnv cache("PTXFORGE_CACHE", on);
    CHECK(DiskCacheFromEnvironment() == true);
  }
  for (const char* neither : {"", "yes", "ON"}) {
    ScopedEnv cache("PTXFORGE_CACHE", neither);
    CHECK(DiskCacheFromEnvironment() == std::nullopt);
  }
  ScopedEnv unset("PTXFORGE_CACHE", nullptr);
  CHECK(DiskCacheFromEnvironment() == std::nullopt);
}

// The mode bits of `path`.
unsigned ModeOf(const std::string& path) {
  struct stat st = {};
  return stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : ~0u;
}

TEST_CASE("a cache directory must be the user's own and closed to others", "[cuda][cache]") {
  TempDir tmp;
  const std::string me = std::to_string(geteuid());
  std::string made = tmp.path() + "/a/b";
  CHECK(Msg(PrepareCacheDirectory(made)) == "OK");
  CHECK(ModeOf(tmp.path() + "/a") == 0700);
  CHECK(ModeOf(made) == 0700);
  CHECK(DiskCache::Open(made).ok());
  CHECK(Msg(PrepareCacheDirectory(made)) == "OK");  // again: it is there

  for (unsigned mode : {0777u, 0770u, 0702u}) {
    REQUIRE(chmod(made.c_str(), mode) == 0);
    std::string message = Msg(PrepareCacheDirectory(made));
    CHECK(message == "the cache directory " + made + " is writable by group or others (mode 0" +
                         std::to_string(mode / 64) + std::to_string(mode / 8 % 8) + std::to_string(mode % 8) +
                         "), who could plant code in it");
    CHECK(Msg(DiskCache::Open(made)) == message);
  }
  REQUIRE(chmod(made.c_str(), 0755) == 0);  // readable by others is fine
  CHECK(Msg(PrepareCacheDirectory(made)) == "OK");

  WriteFileText(tmp.path() + "/file", "");
  CHECK(Msg(PrepareCacheDirectory(tmp.path() + "/file")) == "the cache directory " + tmp.path() +
                                                                "/file is not a directory");
  CHECK(Msg(PrepareCacheDirectory(tmp.path() + "/file/cache")) ==
        "cannot create the cache directory " + tmp.path() + "/file/cache: Not a directory");

  std::string link = tmp.path() + "/link";
  REQUIRE(symlink(made.c_str(), link.c_str()) == 0);
  CHECK(Msg(PrepareCacheDirectory(link)) == "OK");  // the user's link to the user's directory

  // Another user's directory (and link): made by root, else "/" (root's).
  std::string theirs = "/";
  struct stat root = {};
  REQUIRE(stat("/", &root) == 0);
  std::string their_owner = std::to_string(root.st_uid);
  if (geteuid() == 0) {
    theirs = tmp.path() + "/theirs";
    their_owner = "12345";
    REQUIRE(mkdir(theirs.c_str(), 0700) == 0);
    REQUIRE(chown(theirs.c_str(), 12345, 12345) == 0);
    REQUIRE(lchown(link.c_str(), 12345, 12345) == 0);
    CHECK(Msg(PrepareCacheDirectory(link)) == "the cache directory " + link +
                                                  " is a symbolic link owned by uid 12345, not by uid 0 (this "
                                                  "process's effective user)");
  }
  CHECK(Msg(PrepareCacheDirectory(theirs)) == "the cache directory " + theirs + " is owned by uid " + their_owner +
                                                  ", not by uid " + me + " (this process's effective user)");
}

TEST_CASE("two threads asking for the same key build it once", "[cuda][cache]") {
  SingleFlightCache<int> cache;
  std::atomic<int> builds = 0;
  std::atomic<int> created_count = 0;
  std::vector<int> results(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      bool created = false;
      absl::StatusOr<int> v = cache.GetOrCreate(
          "kernel",
          [&]() -> absl::StatusOr<int> {
            ++builds;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            return 42;
          },
          &created);
      results[t] = v.ok() ? *v : -1;
      if (created) ++created_count;
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(builds == 1);
  CHECK(created_count == 1);
  CHECK(results == std::vector<int>(8, 42));
  CHECK(cache.size() == 1);
  CHECK(*cache.GetOrCreate("other", [] { return absl::StatusOr<int>(7); }) == 7);
  CHECK(cache.size() == 2);
}

TEST_CASE("a failed build reaches its waiters and is not cached", "[cuda][cache]") {
  SingleFlightCache<int> cache;
  int builds = 0;
  absl::StatusOr<int> first = cache.GetOrCreate("k", [&]() -> absl::StatusOr<int> {
    ++builds;
    return absl::InvalidArgumentError("JIT failed");
  });
  CHECK(Msg(first) == "JIT failed");
  CHECK(cache.size() == 0);
  absl::StatusOr<int> second = cache.GetOrCreate("k", [&]() -> absl::StatusOr<int> { return ++builds; });
  CHECK(*second == 2);
  cache.Clear();
  CHECK(cache.size() == 0);
}

}  // namespace
}  // namespace ptxforge::runtime
