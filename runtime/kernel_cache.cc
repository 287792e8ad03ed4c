// Cache keys, the entry file format, and the atomic disk cache.
#include "runtime/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "ir/strings.h"

namespace ptxforge::runtime {
namespace {

constexpr std::string_view kMagic = "PTXFORGE-CACHE 1\n";

std::string Errno(int e) { return std::strerror(e); }

// mkdir -p, each new directory private to the user.
absl::Status MakeDirectories(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = slash == std::string::npos ? path : path.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::InternalError(StrCat("cannot create the cache directory ", prefix, ": ", Errno(errno)));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

absl::Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t w = write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(StrCat("cannot write ", path, ": ", Errno(errno)));
    }
    done += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

// The whole file; nullopt when it does not exist.
absl::StatusOr<std::optional<std::string>> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // No entry (or no directory): a miss.
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return absl::InternalError(StrCat("cannot open ", path, ": ", Errno(errno)));
  }
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    ssize_t r = read(fd, buffer, sizeof(buffer));
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return absl::InternalError(StrCat("cannot read ", path, ": ", Errno(e)));
    }
    if (r == 0) break;
    bytes.append(buffer, static_cast<size_t>(r));
  }
  close(fd);
  return std::optional<std::string>(std::move(bytes));
}

// Takes "<name> <value>\n" off the front of `rest`.
std::optional<std::string_view> HeaderField(std::string_view& rest, std::string_view name) {
  if (!rest.starts_with(name) || rest.size() <= name.size() || rest[name.size()] != ' ') return std::nullopt;
  size_t end = rest.find('\n');
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view value = rest.substr(name.size() + 1, end - name.size() - 1);
  rest.remove_prefix(end + 1);
  return value;
}

// "0775"
std::string Octal(unsigned mode) {
  char digits[8] = {};
  std::snprintf(digits, sizeof(digits), "%04o", mode);
  return digits;
}

std::string Hex16(uint64_t v) {
  std::string s = StrCat(Hex{v, 16});
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

uint64_t StableHash64(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string StableHash128(std::string_view data) {
  using U128 = unsigned __int128;
  const U128 prime = (U128{1} << 88) | 0x13B;
  U128 h = (U128{0x6c62272e07bb0142ULL} << 64) | 0x62b821756295c58dULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= prime;
  }
  return StrCat(Hex16(static_cast<uint64_t>(h >> 64)), Hex16(static_cast<uint64_t>(h)));
}

CacheKey CacheKey::For(std::string_view ptx, int cc_major, int cc_minor, int driver_version,
                       std::string_view jit_options) {
  return CacheKey{StableHash128(ptx), cc_major, cc_minor, driver_version, std::string(jit_options)};
}

std::string CacheKey::Id() const {
  return StrCat(ptx_hash, "-sm", cc_major, cc_minor, "-cuda", driver_version, "-", jit_options);
}

std::string DefaultCacheDirectory() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  if (std::string dir = env("PTXFORGE_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return StrCat(xdg, "/ptxforge");
  if (std::string home = env("HOME"); !home.empty()) return StrCat(home, "/.cache/ptxforge");
  std::string tmp = env("TMPDIR");
  return StrCat(tmp.empty() ? "/tmp" : tmp, "/ptxforge-cache-", geteuid());  // checked to be ours when opened
}

absl::Status PrepareCacheDirectory(const std::string& directory) {
  if (absl::Status s = MakeDirectories(directory); !s.ok()) return s;
  const uid_t me = geteuid();
  std::string what = StrCat("the cache directory ", directory);
  struct stat st = {};
  if (lstat(directory.c_str(), &st) != 0) return absl::InternalError(StrCat("cannot stat ", what, ": ", Errno(errno)));
  if (S_ISLNK(st.st_mode)) {
    if (st.st_uid != me) {
      return absl::PermissionDeniedError(StrCat(what, " is a symbolic link owned by uid ", st.st_uid, ", not by uid ",
                                                me, " (this process's effective user)"));
    }
    if (stat(directory.c_str(), &st) != 0) return absl::InternalError(StrCat("cannot stat ", what, ": ", Errno(errno)));
  }
  if (!S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(StrCat(what, " is not a directory"));
  if (st.st_uid != me) {
    return absl::PermissionDeniedError(
        StrCat(what, " is owned by uid ", st.st_uid, ", not by uid ", me, " (this process's effective user)"));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::PermissionDeniedError(StrCat(what, " is writable by group or others (mode ",
                                              Octal(st.st_mode & 07777), "), who could plant code in it"));
  }
  return absl::OkStatus();
}

std::optional<bool> DiskCacheFromEnvironment() {
  const char* v = std::getenv("PTXFORGE_CACHE");
  std::string_view s = v != nullptr ? v : "";
  if (s == "on" || s == "1" || s == "true") return true;
  if (s == "off" || s == "0" || s == "false") return false;
  return std::nullopt;
}

std::string EncodeCacheEntry(const CacheKey& key, std::string_view payload) {
  return StrCat(kMagic, "key ", key.Id(), "\nsize ", payload.size(), "\nchecksum ", Hex16(StableHash64(payload)),
                "\n\n", payload);
}

absl::StatusOr<std::string> DecodeCacheEntry(const CacheKey& key, std::string_view bytes) {
  if (!bytes.starts_with(kMagic)) return absl::DataLossError("not a ptxforge cache entry (bad magic)");
  std::string_view rest = bytes.substr(kMagic.size());
  std::optional<std::string_view> id = HeaderField(rest, "key");
  std::optional<std::string_view> size = id ? HeaderField(rest, "size") : std::nullopt;
  std::optional<std::string_view> checksum = size ? HeaderField(rest, "checksum") : std::nullopt;
  uint64_t expected_size = 0;
  if (!checksum || !rest.starts_with("\n") || !absl::SimpleAtoi(ToAbsl(*size), &expected_size)) {
    return absl::DataLossError("the entry's header is cut or malformed");
  }
  rest.remove_prefix(1);
  if (*id != key.Id()) return absl::DataLossError(StrCat("the entry is for key ", *id, ", not ", key.Id()));
  if (rest.size() != expected_size) {
    return absl::DataLossError(StrCat("the payload is ", rest.size(), " bytes, the header says ", expected_size));
  }
  std::string actual = Hex16(StableHash64(rest));
  if (actual != *checksum) {
    return absl::DataLossError(StrCat("checksum mismatch (header ", *checksum, ", payload ", actual, ")"));
  }
  return std::string(rest);
}

absl::StatusOr<std::unique_ptr<DiskCache>> DiskCache::Open(std::string directory) {
  if (absl::Status s = PrepareCacheDirectory(directory); !s.ok()) return s;
  return std::make_unique<DiskCache>(std::move(directory));
}

std::string DiskCache::PathFor(const CacheKey& key) const { return StrCat(directory_, "/", key.Id(), ".cubin"); }

DiskCache::Stats DiskCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

DiskCache::Lookup DiskCache::Find(const CacheKey& key) {
  std::string path = PathFor(key);
  Lookup result;
  absl::StatusOr<std::optional<std::string>> bytes = ReadFile(path);
  if (!bytes.ok()) {
    // Not readable now (too many open files, an I/O error...): a miss, and
    // the entry, which may well be whole, stays.
    result.state = State::kMiss;
    result.problem = std::string(bytes.status().message());
  } else if (!bytes->has_value()) {
    result.state = State::kMiss;
  } else {
    absl::StatusOr<std::string> payload = DecodeCacheEntry(key, **bytes);
    if (payload.ok()) {
      result.state = State::kHit;
      result.payload = *std::move(payload);
    } else {
      result.state = State::kCorrupt;
      result.problem = std::string(payload.status().message());
      unlink(path.c_str());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++(result.state == State::kHit ? stats_.hits : result.state == State::kMiss ? stats_.misses : stats_.corrupt);
  if (!bytes.ok()) ++stats_.read_errors;
  return result;
}

void DiskCache::Drop(const CacheKey& key) {
  unlink(PathFor(key).c_str());
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.corrupt;
}

absl::Status DiskCache::Store(const CacheKey& key, std::string_view payload) {
  absl::Status status = MakeDirectories(directory_);
  std::string path = PathFor(key);
  std::string temp = StrCat(directory_, "/.", key.Id(), ".tmp-XXXXXX");
  int fd = -1;
  if (status.ok()) {
    fd = mkstemp(temp.data());
    if (fd < 0) status = absl::InternalError(StrCat("cannot create ", temp, ": ", Errno(errno)));
  }
  if (fd >= 0) {
    status = WriteAll(fd, EncodeCacheEntry(key, payload), temp);
    if (status.ok() && fsync(fd) != 0) status = absl::InternalError(StrCat("fsync ", temp, ": ", Errno(errno)));
    if (close(fd) != 0 && status.ok()) status = absl::InternalError(StrCat("close ", temp, ": ", Errno(errno)));
    if (status.ok() && rename(temp.c_str(), path.c_str()) != 0) {
      status = absl::InternalError(StrCat("cannot rename ", temp, " to ", path, ": ", Errno(errno)));
    }
    if (!status.ok()) unlink(temp.c_str());
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++(status.ok() ? stats_.stores : stats_.store_failures);
  return status;
}

}  // namespace ptxforge::runtime
