// A driver for the fuzz targets where libFuzzer is not available (g++, or a
// clang too old for this code base): runs every file of the corpus
// directories, then random mutations of them (bit flips, byte changes,
// inserts, deletions, splices) until -max_total_time seconds or -runs inputs.
// Not coverage-guided; the sanitizers report what goes wrong, and the input
// that crashed is written to ./crash-<pid> first.
//   builder_fuzzer [-max_total_time=S] [-runs=N] [-seed=N] DIR...
#include <csignal>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

std::vector<uint8_t> current;  // the input being run, for the crash file

void WriteCrash(int sig) {
  char name[64];
  std::snprintf(name, sizeof(name), "crash-%d", static_cast<int>(getpid()));
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    (void)!write(fd, current.data(), current.size());
    close(fd);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void Run(const std::vector<uint8_t>& input) {
  current = input;
  LLVMFuzzerTestOneInput(current.data(), current.size());
}

std::vector<uint8_t> Mutate(std::vector<uint8_t> v, const std::vector<std::vector<uint8_t>>& pool, std::mt19937_64& rng) {
  auto below = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(below(4));
  for (int e = 0; e < edits; ++e) {
    switch (below(6)) {
      case 0: if (!v.empty()) v[below(v.size())] ^= static_cast<uint8_t>(1u << below(8)); break;
      case 1: if (!v.empty()) v[below(v.size())] = static_cast<uint8_t>(rng()); break;
      case 2: v.insert(v.begin() + static_cast<long>(below(v.size() + 1)), static_cast<uint8_t>(rng())); break;
      case 3: if (!v.empty()) v.erase(v.begin() + static_cast<long>(below(v.size()))); break;
      case 4: {  // splice in a piece of another input
        const std::vector<uint8_t>& o = pool[below(pool.size())];
        if (o.empty()) break;
        size_t at = below(o.size()), len = 1 + below(o.size() - at);
        v.insert(v.begin() + static_cast<long>(below(v.size() + 1)), o.begin() + static_cast<long>(at),
                 o.begin() + static_cast<long>(at + len));
        break;
      }
      default: {  // an interesting value
        static const uint8_t kBytes[] = {0, 1, 0x7F, 0x80, 0xFF, '\n', '=', '-', '9'};
        if (!v.empty()) v[below(v.size())] = kBytes[below(sizeof(kBytes))];
      }
    }
  }
  if (v.size() > 4096) v.resize(4096);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  double seconds = 10;
  uint64_t runs = UINT64_MAX, seed = 1;
  std::vector<std::vector<uint8_t>> pool;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-max_total_time=", 0) == 0) {
      seconds = std::atof(a.c_str() + 16);
    } else if (a.rfind("-runs=", 0) == 0) {
      runs = std::strtoull(a.c_str() + 6, nullptr, 10);
    } else if (a.rfind("-seed=", 0) == 0) {
      seed = std::strtoull(a.c_str() + 6, nullptr, 10);
    } else if (a.rfind("-", 0) == 0) {
      continue;  // libFuzzer options this driver does not have
    } else if (std::filesystem::is_directory(a)) {
      for (const auto& entry : std::filesystem::directory_iterator(a)) {
        std::ifstream f(entry.path(), std::ios::binary);
        pool.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      }
    }
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, WriteCrash);
  if (pool.empty()) pool.emplace_back();
  uint64_t done = 0;
  for (const auto& input : pool) {
    if (done++ >= runs) break;
    Run(input);
  }
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (done < runs && std::chrono::steady_clock::now() < end) {
    Run(Mutate(pool[rng() % pool.size()], pool, rng));
    ++done;
  }
  std::printf("standalone fuzz driver: %llu inputs (%zu from the corpus) in up to %.0f s, no failure\n",
              static_cast<unsigned long long>(done), pool.size(), seconds);
  return 0;
}
