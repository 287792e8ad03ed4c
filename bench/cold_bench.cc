// Cold-path code generation of vector_add (f32, sm_80): the first codegen in
// a fresh process, codegen after unrelated work, and warm codegen.
//
//   cold_bench [RUNS]   (default 31)
//
// fresh process: this program is executed again RUNS times (posix_spawn,
//   `--child`); each child times its first VectorAddSpec::Build, the standard
//   pipeline and PrintPtx, then its first kernels::FindFamily("vector_add")
//   (what ptx-dump pays to find a family by name) and its first
//   kernels::AllFamilies() (what listing them pays), and prints the numbers,
//   with the minor page faults the first codegen took (first touches of code
//   and heap pages; counted outside the timed stages). A line after the
//   fresh rows groups the children by those faults, with the codegen's
//   median for each count: a fault costs a few microseconds, and whether a
//   child takes one in code follows the address it was loaded at.
// after other work: in this process, before each of RUNS codegens, a 64 MiB
//   sweep evicts the caches and 4000 heap blocks of random sizes are
//   allocated and freed in random order; diagnostic rows: the sweep alone,
//   and the heap churn alone (the three interleaved). `--child after` is
//   the same in a fresh process, for bench/cold_ab.py --mode=after: twice a
//   codegen and the sweep and churn, untimed, then the timed codegen (one
//   sample per process, so that two binaries can be interleaved child by
//   child, as the machine's fast and slow modes last whole runs).
// warm: back-to-back codegens in this process (201 of them).
// where the faults land: RUNS more fresh processes, untimed, compare
//   /proc/self/pagemap before and after their first codegen and count the
//   pages it mapped, by mapping: heap, stack, code, read-only data (and the
//   64 KiB windows those file pages fall in: one fault on a file maps up to
//   16 pages, the kernel's fault-around), other (writable data); means,
//   since which windows start-up has already mapped changes from run to run
//   with the address the program is loaded at.
// Each figure is the median, in microseconds, of wall time per stage and for
// the whole codegen, and of the whole codegen's thread CPU time (the machine
// may be shared: CPU time is the steadier; it also counts parts of the two
// system calls that read it, about 0.35 us each warm).
#include <spawn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "emit/ptx_printer.h"
#include "kernels/registry.h"
#include "kernels/vector_add.h"
#include "passes/pass.h"

extern char** environ;

namespace ptxforge {
namespace {

using bench::OrDie;

// Wall time (the vDSO's clock: tens of nanoseconds, no system call) and the
// thread's CPU time (a system call, about 0.35 us warm), in microseconds.
double WallNow() {
  timespec w;
  clock_gettime(CLOCK_MONOTONIC, &w);
  return w.tv_sec * 1e6 + w.tv_nsec * 1e-3;
}
double CpuNow() {
  timespec c;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
  return c.tv_sec * 1e6 + c.tv_nsec * 1e-3;
}

// The stages of one codegen (wall) and the whole of it (wall and CPU). The
// CPU clock is read only outside the wall-timed interval: read at each
// stage's start, as it was, its three system calls were timed with the
// stages (a fresh process's codegen 33.4 -> 34.9 us, the same binary with
// and without them, bench/cold_ab.py 300).
struct Times {
  double build = 0, passes = 0, print = 0, total = 0, cpu = 0;
};

Times Codegen() {
  kernels::VectorAddSpec spec;
  const double c0 = CpuNow();
  const double t0 = WallNow();
  ir::Kernel kernel = OrDie(spec.Build(ir::Target::kSm80));
  const double t1 = WallNow();
  OrDie(passes::Pipeline::Standard().Run(kernel));
  const double t2 = WallNow();
  std::string ptx = OrDie(emit::PrintPtx(kernel));
  const double t3 = WallNow();
  const double c1 = CpuNow();
  if (ptx.empty()) std::abort();
  return {t1 - t0, t2 - t1, t3 - t2, t3 - t0, c1 - c0};
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Columns: the wall times of build, passes, print and the whole codegen, its
// CPU time, then the wall times of FindFamily and AllFamilies.
constexpr int kColumns = 7;
constexpr const char* kNames[] = {"build", "passes", "print", "codegen", "codegen CPU", "FindFamily()", "AllFamilies()"};

long MinorFaults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Diagnostics for where a fresh process's time goes (rows 2 to 5): "heap"
// touches 64 KiB of heap before the first codegen (TouchHeap), so that the
// codegen's allocations find their pages mapped (1 MiB, as it was, also
// evicted what start-up had left in the caches: the passes and the printer
// took 1.2 us longer); "prefault" does that and also maps every page of the
// program's code and read-only data (MADV_POPULATE_READ), so that the
// codegen takes no page fault but still fetches its code from memory;
// "cached" does both and also reads every cache line of those mappings, so
// that the codegen finds its code and tables in the caches (as data: the
// branch predictors and instruction TLB stay cold); "second" times the
// second codegen of the fresh process instead (no faults, code in the
// caches it left, predictors trained by the first). Row 6, "unmapped", goes
// the other way: the program's code is dropped from its page tables first
// (UnmapProgramCode).
// Session 27, one run of 61: fresh 29.0 us with 3 page faults, heap
// touched first 26.1 us with 1, code mapped too 24.1 us with none (with
// profile feedback most fresh codegens run code in a 64 KiB window that
// start-up did not map; session 21, before it, found populating the code
// alone changed nothing: 1.007 and 1.002).
void PopulateCode() {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return;
  char line[512];
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long begin = 0, end = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &begin, &end, perms) != 3 || perms[0] != 'r' || perms[1] == 'w') continue;
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
  }
  std::fclose(maps);
}

// The "unmapped" child: drops every page of the program's own code from
// its page tables (MADV_DONTNEED over its executable mappings; the pages
// stay in the page cache), so that its first codegen maps, one 64 KiB
// window per fault, all the code it runs, as if start-up had mapped none of
// it. With GCC 12's libstdc++, start-up maps most of the library's code by
// accident: <iostream> (which absl/status/status.h includes) gives every
// object a static initializer, and running each maps the window around it.
// GCC 13's libstdc++ initializes the streams in the library instead, so
// there a program's start-up runs none of the library's objects. This row
// is an upper bound for that: the program's own code and the libstdc++
// code linked into it are dropped too. No stdio and no allocation: the
// heap and the stack stay as the codegen would find them.
void UnmapProgramCode() {
  static char text[64 << 10];
  const int maps = open("/proc/self/maps", O_RDONLY);
  if (maps < 0) return;
  size_t length = 0;
  for (ssize_t n; length < sizeof text - 1 && (n = read(maps, text + length, sizeof text - 1 - length)) > 0;) {
    length += static_cast<size_t>(n);
  }
  close(maps);
  text[length] = '\0';
  // The program's file: the path of the mapping holding this function.
  const uintptr_t here = reinterpret_cast<uintptr_t>(&UnmapProgramCode);
  const char* program = nullptr;
  size_t program_length = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (char* line = text; *line != '\0';) {
      char* end_of_line = std::strchr(line, '\n');
      const size_t line_length = end_of_line != nullptr ? static_cast<size_t>(end_of_line - line) : std::strlen(line);
      char* p = line;
      const uintptr_t begin = std::strtoul(p, &p, 16);
      const uintptr_t end = std::strtoul(p + 1, &p, 16);
      const char* path = static_cast<const char*>(std::memchr(line, '/', line_length));
      const size_t path_length = path != nullptr ? line_length - static_cast<size_t>(path - line) : 0;
      if (pass == 0 && begin <= here && here < end && path != nullptr) {
        program = path;
        program_length = path_length;
      }
      if (pass == 1 && p[3] == 'x' && path_length == program_length &&
          std::memcmp(path, program, path_length) == 0) {
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
      }
      if (end_of_line == nullptr) break;
      line = end_of_line + 1;
    }
    if (program == nullptr) return;
  }
}

void TouchHeap() {
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) {
    blocks.push_back(std::malloc(16 << 10));
    std::memset(blocks.back(), 1, 16 << 10);
  }
  for (void* b : blocks) std::free(b);
}

volatile unsigned char g_sink;

void ReadCode() {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return;
  char line[512];
  unsigned char sum = 0;
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long begin = 0, end = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &begin, &end, perms) != 3 || perms[0] != 'r' || perms[1] == 'w') continue;
    if (std::strchr(line, '[') != nullptr) continue;  // [vvar], [vdso]: not the program's
    for (unsigned long a = begin; a < end; a += 64) sum += *reinterpret_cast<const volatile unsigned char*>(a);
  }
  std::fclose(maps);
  g_sink = sum;
}

// Which pages of the process are present, by mapping, read from /proc/self
// (maps, then pagemap: bit 63 present, bit 61 a file's page, which a write
// to a private mapping turns into an anonymous copy, bits 0-54 the frame).
// Everything it holds is in one mapping of its own, made before the first
// snapshot, so that snapshots move neither the heap's top nor the stack's
// depth: no stdio, no allocation.
class PageSnapshot {
 public:
  enum Kind { kHeap, kStack, kCode, kReadOnly, kOther, kKinds };

  // False (and `error` says why) when /proc cannot be read.
  bool Take(const char*& error) {
    count_ = 0;
    const int maps = open("/proc/self/maps", O_RDONLY);
    const int pagemap = open("/proc/self/pagemap", O_RDONLY);
    bool ok = maps >= 0 && pagemap >= 0;
    size_t length = 0;
    while (ok) {
      const ssize_t n = read(maps, text_ + length, kTextBytes - 1 - length);
      if (n < 0) ok = false;
      if (n <= 0) break;
      length += static_cast<size_t>(n);
    }
    ok = ok && length < kTextBytes - 1;  // all of it (a few kilobytes)
    text_[length] = '\0';
    size_t used = 0;
    for (char* line = text_; ok && *line != '\0' && count_ < kMaxMappings;) {
      char* end_of_line = std::strchr(line, '\n');
      if (end_of_line != nullptr) *end_of_line = '\0';
      char* p = line;
      Mapping& m = mappings_[count_];
      m.begin = std::strtoul(p, &p, 16);
      m.end = std::strtoul(p + 1, &p, 16);
      const char* perms = p + 1;
      const char* path = std::strchr(perms, '/');
      const char* bracket = std::strchr(perms, '[');
      const char* name = path != nullptr ? path : bracket != nullptr ? bracket : "";
      m.kind = std::strcmp(name, "[heap]") == 0    ? kHeap
               : std::strcmp(name, "[stack]") == 0 ? kStack
               : perms[2] == 'x'                   ? kCode
               : perms[1] != 'w'                   ? kReadOnly
                                                   : kOther;
      const size_t pages = (m.end - m.begin) / 4096;
      const uintptr_t self = reinterpret_cast<uintptr_t>(this);
      const bool ours = m.begin <= self && self < m.end;
      const bool kernel_made = std::strncmp(name, "[v", 2) == 0;  // [vvar], [vdso], [vsyscall]
      if (!ours && !kernel_made && perms[0] == 'r' && used + pages <= kMaxPages) {
        m.bits = bits_ + used;
        used += pages;
        ok = pread(pagemap, m.bits, pages * 8, static_cast<off_t>(m.begin / 4096 * 8)) ==
             static_cast<ssize_t>(pages * 8);
        ++count_;
      }
      if (end_of_line == nullptr) break;
      line = end_of_line + 1;
    }
    if (maps >= 0) close(maps);
    if (pagemap >= 0) close(pagemap);
    if (!ok) error = "cannot read /proc/self/maps or /proc/self/pagemap";
    return ok;
  }

  // The pages present in `after` and not here (or copied since), by kind;
  // the last slot counts the 64 KiB windows of the new code and read-only
  // pages (one fault on a file maps up to 16 pages: the kernel's fault-around).
  void NewPages(const PageSnapshot& after, long (&counts)[kKinds + 1]) const {
    uintptr_t last_window = UINTPTR_MAX;
    for (size_t i = 0; i < after.count_; ++i) {
      const Mapping& now = after.mappings_[i];
      // The same mapping before: the heap grows at its end, the stack at
      // its beginning.
      const Mapping* before = nullptr;
      for (size_t j = 0; j < count_; ++j) {
        if (mappings_[j].begin == now.begin || mappings_[j].end == now.end) before = &mappings_[j];
      }
      for (size_t k = 0; k < (now.end - now.begin) / 4096; ++k) {
        const uintptr_t page = now.begin + k * 4096;
        const bool seen = before != nullptr && before->begin <= page && page < before->end;
        const uint64_t was = seen ? before->bits[(page - before->begin) / 4096] : 0;
        const uint64_t is = now.bits[k];
        const bool present = is >> 63 & 1, was_present = was >> 63 & 1;
        // A write to a page mapped from a file or to the shared zero page
        // gives the process a copy: a new frame (bits 0-54; zero when not
        // running as root, then only the file bit tells).
        constexpr uint64_t kFrame = (uint64_t{1} << 55) - 1;
        const bool copied = was_present && (((was >> 61 & 1) && !(is >> 61 & 1)) || (was & kFrame) != (is & kFrame));
        if (!present || (was_present && !copied)) continue;
        ++counts[now.kind];
        const uintptr_t window = page >> 16;
        const bool file = now.kind == kCode || now.kind == kReadOnly;
        if (file && window != last_window) ++counts[kKinds];
        if (file) last_window = window;
      }
    }
  }

 private:
  static constexpr size_t kTextBytes = 64 << 10, kMaxMappings = 256, kMaxPages = 1 << 20;
  struct Mapping {
    uintptr_t begin, end;
    Kind kind;
    uint64_t* bits;
  };
  char text_[kTextBytes];
  Mapping mappings_[kMaxMappings];
  size_t count_ = 0;
  uint64_t bits_[kMaxPages];
};

// A "pages" child: its first codegen, untimed, between two snapshots; prints
// the new pages by kind, the code windows and the faults.
int ChildPages() {
  // A mapping of their own, between two inaccessible pages so that the
  // kernel merges it with no neighbour (PageSnapshot skips it by address).
  const size_t bytes = (2 * sizeof(PageSnapshot) + 4095) / 4096 * 4096 + 2 * 4096;
  void* memory = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED ||
      mprotect(static_cast<char*>(memory) + 4096, bytes - 2 * 4096, PROT_READ | PROT_WRITE) != 0) {
    std::fprintf(stderr, "cannot map %zu bytes for page snapshots\n", bytes);
    return 1;
  }
  auto* snapshots = static_cast<PageSnapshot*>(static_cast<void*>(static_cast<char*>(memory) + 4096));
  new (&snapshots[0]) PageSnapshot;
  new (&snapshots[1]) PageSnapshot;
  const char* error = nullptr;
  if (!snapshots[0].Take(error)) {
    std::fprintf(stderr, "%s\n", error);
    return 1;
  }
  const long faults_before = MinorFaults();
  Codegen();
  const long faults = MinorFaults() - faults_before;
  if (!snapshots[1].Take(error)) {
    std::fprintf(stderr, "%s\n", error);
    return 1;
  }
  long counts[PageSnapshot::kKinds + 1] = {};
  snapshots[0].NewPages(snapshots[1], counts);
  std::printf("%ld %ld %ld %ld %ld %ld %ld\n", counts[PageSnapshot::kHeap], counts[PageSnapshot::kStack],
              counts[PageSnapshot::kCode], counts[PageSnapshot::kReadOnly], counts[PageSnapshot::kKinds],
              counts[PageSnapshot::kOther], faults);
  return 0;
}

int Child(std::string_view mode) {
  // The first read of the clock maps the vDSO's data page: a fault before
  // the timed interval starts, but inside the count of the codegen's faults.
  WallNow();
  if (mode == "pages") return ChildPages();
  if (mode == "prefault" || mode == "cached") PopulateCode();
  if (mode == "heap" || mode == "prefault" || mode == "cached") TouchHeap();
  if (mode == "cached") ReadCode();
  if (mode == "second") Codegen();
  if (mode == "unmapped") UnmapProgramCode();
  if (mode == "after") {
    // Twice: the printer kept a buffer from a thread's second print until
    // session 32; still twice, so that this row compares with earlier ones.
    for (int i = 0; i < 2; ++i) {
      Codegen();
      bench::Disturb();
    }
  }
  long faults_before = MinorFaults();
  Times t = Codegen();
  long faults = MinorFaults() - faults_before;
  const double f0 = WallNow();
  const kernels::KernelFamily* found = kernels::FindFamily("vector_add");
  const double f1 = WallNow();
  size_t families = kernels::AllFamilies().size();
  const double f2 = WallNow();
  if (found == nullptr || families == 0) return 1;
  std::printf("%.3f %.3f %.3f %.3f %.3f %.3f %.3f %ld\n", t.build, t.passes, t.print, t.total, t.cpu, f1 - f0,
              f2 - f1, faults);
  return 0;
}

// One fresh-process measurement: the child's seven times and its page faults.
std::vector<double> RunChild(const std::string& self, std::string_view mode) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::string arg = "--child", arg2(mode);
  char* argv[] = {const_cast<char*>(self.c_str()), arg.data(), arg2.data(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, environ) != 0) {
    std::fprintf(stderr, "cold_bench: cannot run %s\n", self.c_str());
    std::exit(1);
  }
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::vector<double> v(kColumns + 1);
  char* p = out.data();
  for (double& x : v) x = std::strtod(p, &p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "cold_bench: the child failed: %s\n", out.c_str());
    std::exit(1);
  }
  return v;
}

void Row(const char* what, const std::vector<std::vector<double>>& samples, int columns) {
  std::printf("%-22s", what);
  for (int c = 0; c < columns; ++c) {
    std::vector<double> column;
    for (const auto& s : samples) column.push_back(s[c]);
    std::printf(" %13.1f", Median(column));
  }
  std::printf("\n");
}

std::vector<double> AsRow(const Times& t) {
  return {t.build, t.passes, t.print, t.total, t.cpu, 0, 0};
}

// This program's path, for spawning children. Not in main: its 4 KiB
// buffer would be in main's frame, which a child's codegen runs below (a
// child returns from main early), and would put that codegen 4 KiB deeper
// in the stack than a program of its own: below the pages start-up touched.
[[gnu::noinline]] std::string SelfPath(const char* argv0) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return len > 0 ? std::string(self, static_cast<size_t>(len)) : std::string(argv0);
}

}  // namespace
}  // namespace ptxforge

int main(int argc, char** argv) {
  using namespace ptxforge;
  if (argc == 3 && std::string_view(argv[1]) == "--child") return Child(argv[2]);
  int runs = argc >= 2 ? std::atoi(argv[1]) : 31;
  if (runs <= 0) {
    std::fprintf(stderr, "usage: cold_bench [RUNS]\n");
    return 2;
  }
  std::string me = SelfPath(argv[0]);

  std::vector<std::vector<double>> fresh, heap, prefaulted, cached, second, unmapped, after, swept, churned, warm;
  for (int i = 0; i < runs; ++i) {
    fresh.push_back(RunChild(me, "first"));
    heap.push_back(RunChild(me, "heap"));
    prefaulted.push_back(RunChild(me, "prefault"));
    cached.push_back(RunChild(me, "cached"));
    second.push_back(RunChild(me, "second"));
    unmapped.push_back(RunChild(me, "unmapped"));
  }
  std::vector<std::vector<double>> pages;
  for (int i = 0; i < runs; ++i) pages.push_back(RunChild(me, "pages"));
  for (int i = 0; i < runs; ++i) {
    bench::Disturb();
    after.push_back(AsRow(Codegen()));
    bench::SweepCaches();
    swept.push_back(AsRow(Codegen()));
    bench::ChurnHeap();
    churned.push_back(AsRow(Codegen()));
  }
  for (int i = 0; i < 201; ++i) warm.push_back(AsRow(Codegen()));

  std::printf("vector_add f32 sm_80, medians in microseconds (wall time; the codegen's thread CPU time too); %d runs\n",
              runs);
  std::printf("%-22s", "");
  for (const char* n : kNames) std::printf(" %13s", n);
  std::printf("\n");
  Row("fresh process", fresh, 7);
  Row(" heap pre-touched", heap, 5);
  Row(" code pre-faulted too", prefaulted, 5);
  Row(" code in the caches", cached, 5);
  Row(" second codegen", second, 5);
  Row(" no code mapped", unmapped, 5);
  for (auto* rows : {&fresh, &heap, &prefaulted, &cached, &second, &unmapped}) {
    std::vector<double> faults;
    for (const auto& s : *rows) faults.push_back(s[kColumns]);
    std::printf("%.0f ", Median(faults));
  }
  std::printf("minor page faults during the timed codegen (fresh, heap pre-touched, pre-faulted, in the caches, second, no code mapped; medians)\n");
  // The fresh children grouped by their faults: each one takes a few
  // microseconds, and whether a child takes one in a 64 KiB window of code
  // follows the address it was loaded at, so the fresh row's median moves
  // with the share of such children in a run.
  std::printf("fresh process by its faults:");
  for (int f = 0; f <= 4; ++f) {
    std::vector<double> codegen;
    for (const auto& s : fresh) {
      if (std::min(static_cast<int>(s[kColumns]), 4) == f) codegen.push_back(s[3]);
    }
    if (!codegen.empty()) {
      std::printf(" %d%s fault%s in %zu, %.1f;", f, f == 4 ? " or more" : "", f == 1 ? "" : "s", codegen.size(),
                  Median(codegen));
    }
  }
  std::printf(" (children, codegen median)\n");
  // A "pages" child's numbers: pages by kind, the file windows, the faults.
  constexpr int kPageColumns = PageSnapshot::kKinds + 2;
  static_assert(kPageColumns <= kColumns + 1, "RunChild reads kColumns + 1 numbers");
  std::vector<double> by_kind[kPageColumns];
  for (const auto& s : pages) {
    for (int c = 0; c < kPageColumns; ++c) by_kind[c].push_back(s[c]);
  }
  std::printf("pages a fresh process's first codegen maps (%d more, untimed; means): heap %.1f, stack %.1f, code %.1f, "
              "read-only data %.1f (in %.1f 64 KiB windows), other %.1f; %.1f faults\n",
              runs, Mean(by_kind[0]), Mean(by_kind[1]), Mean(by_kind[2]), Mean(by_kind[3]), Mean(by_kind[4]),
              Mean(by_kind[5]), Mean(by_kind[6]));
  Row("after other work", after, 5);
  Row(" caches swept only", swept, 5);
  Row(" heap churned only", churned, 5);
  Row("warm", warm, 5);
  return 0;
}
