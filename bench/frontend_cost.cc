// What code costs the first time it runs, by kind: the calibration behind
// bench/cold_footprint.py's branch columns.
//
//   frontend_cost [RUNS]   (default 31)
//
// Each of RUNS fresh processes (this program again, `--child`) maps its code
// pages, then runs each block below twice and times both runs; the block's
// cost per unit on its first run over its second is what a cold codegen pays
// for each such unit it executes. The blocks are 2,000 distinct copies of:
//   call site        `call` of one shared, empty function
//   taken branch     a conditional branch that is taken
//   not-taken branch a conditional branch that falls through
//   straight code    four independent adds (16 bytes)
// and, for what a first codegen's heap costs, 64 pages of fresh anonymous
// memory (what the heap grows into), one byte written to each: the first
// write of a page is a page fault.
// Printed: medians over the processes, in nanoseconds. On the machines here
// (AMD EPYC, 2026-11): a call site 5.0 ns, a taken branch 5.3, a not-taken
// one 0.02, 16 bytes of straight code 0.26 (a 64-byte line about 1 ns): the
// first codegen in a process pays for the branches and calls on its path
// far more than for the bytes of its code (bench/COLD_PATH.md, session
// 18). A page's first write took 1.2 us (session
// 27): vector_add's first codegen writes one new heap page in cold_bench's
// children (two before session 32).
// Then, in this process, code it ran before and a 64 MiB sweep evicted
// (bench::SweepCaches, what cold_bench's "after other work" runs): per line
// of code, 1,024 lines run in address order, 64 lines a page apart, and the
// 1,024 after a prefetch of each (timed with them). Session 37, four runs
// in the machine's fast mode: 4.8-6.3 ns in address order, 87-174 a page
// apart, 8.0-9.0 prefetched; three in its slow mode: 8.2-11.1, 123-214 and
// 9.4-10.8. The hardware fetches code ahead in address order, and a line
// on a page of its own costs a trip to memory and a page walk. vector_add's
// codegen after other work fetches about 1,200 code lines in 77-83 pages.
// x86-64 only: elsewhere it says so and exits 0.
#include <link.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"

extern char** environ;

#if defined(__x86_64__)

// Four functions of 2,000 units each, written in assembly so that the units
// are exactly what they say (the compiler would merge or unroll them).
// Each takes one argument (rdi) and returns a value (rax) the caller prints.
asm(R"(
  .text
  .p2align 6
ptxforge_fc_leaf:
  ret
  .globl ptxforge_fc_calls
ptxforge_fc_calls:
  push %rbx
  xor %eax, %eax
  .rept 2000
  call ptxforge_fc_leaf
  .endr
  pop %rbx
  ret
  .globl ptxforge_fc_taken
ptxforge_fc_taken:
  xor %eax, %eax
  mov $1, %ecx
  .rept 2000
  test %ecx, %ecx
  jnz 1f
  add $1, %rax
1:
  .endr
  ret
  .globl ptxforge_fc_not_taken
ptxforge_fc_not_taken:
  xor %eax, %eax
  xor %ecx, %ecx
  .rept 2000
  test %ecx, %ecx
  jnz 1f
  add $1, %rax
1:
  .endr
  ret
  .globl ptxforge_fc_straight
ptxforge_fc_straight:
  xor %eax, %eax
  .rept 2000
  add $1, %r8
  add $1, %r9
  add $1, %r10
  add $1, %r11
  .endr
  ret

  # After the caches were swept: 1,024 lines of code run in address order
  # (an add and a jump to the next line in each), and 64 lines a page apart.
  .p2align 12
  .globl ptxforge_fc_lines
ptxforge_fc_lines:
  .globl ptxforge_fc_lines_begin
ptxforge_fc_lines_begin:
  xor %eax, %eax
  .rept 1024
  add $1, %rax
  jmp 1f
  .p2align 6
1:
  .endr
  ret
  .globl ptxforge_fc_lines_end
ptxforge_fc_lines_end:
  .p2align 12
  .globl ptxforge_fc_pages
ptxforge_fc_pages:
  xor %eax, %eax
  .rept 64
  add $1, %rax
  jmp 1f
  .p2align 12
1:
  .endr
  ret
)");

extern "C" long ptxforge_fc_lines();
extern "C" char ptxforge_fc_lines_begin;
extern "C" char ptxforge_fc_lines_end;
extern "C" long ptxforge_fc_pages();
extern "C" long ptxforge_fc_calls();
extern "C" long ptxforge_fc_taken();
extern "C" long ptxforge_fc_not_taken();
extern "C" long ptxforge_fc_straight();

namespace {

constexpr int kUnits = 2000;  // of each block of code
constexpr int kPages = 64;
constexpr const char* kKinds[] = {"call site", "taken branch", "not-taken branch", "16 bytes of straight code",
                                  "page of new memory"};
constexpr int kNumKinds = 5;
constexpr int kCodeKinds = 4;  // the first four; then the pages
constexpr int kUnitsOf[kNumKinds] = {kUnits, kUnits, kUnits, kUnits, kPages};
long (*const kBlocks[kCodeKinds])() = {ptxforge_fc_calls, ptxforge_fc_taken, ptxforge_fc_not_taken,
                                       ptxforge_fc_straight};

double NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

volatile char g_sink;

// Reads a byte of each page of the program's code (its executable
// segments; there may be unmapped pages between segments).
int MapCode(dl_phdr_info* info, size_t, void*) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_X) == 0) continue;
    const char* begin = reinterpret_cast<const char*>(info->dlpi_addr + segment.p_vaddr);
    for (const char* p = begin; p < begin + segment.p_memsz; p += 4096) g_sink = *p;
  }
  return 1;  // the program only: it comes first
}

// Prints each block's first and second run in ns.
int Child() {
  // Map every page of the program's code first: a page fault is not what is measured.
  dl_iterate_phdr(MapCode, nullptr);
  NowNs();
  long sum = 0;
  for (long (*block)() : kBlocks) {
    const double t0 = NowNs();
    sum += block();
    const double t1 = NowNs();
    sum += block();
    const double t2 = NowNs();
    std::printf("%.0f %.0f ", t1 - t0, t2 - t1);
  }
  // Fresh pages, as the heap grows into: the first write of each maps it.
  void* memory = mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    std::fprintf(stderr, "cannot map %d pages\n", kPages);
    return 1;
  }
  volatile char* pages = static_cast<char*>(memory);
  const double t0 = NowNs();
  for (int i = 0; i < kPages; ++i) pages[i * 4096] = 1;
  const double t1 = NowNs();
  for (int i = 0; i < kPages; ++i) pages[i * 4096 + 64] = 1;
  const double t2 = NowNs();
  std::printf("%.0f %.0f %ld\n", t1 - t0, t2 - t1, sum);
  return 0;
}

std::vector<double> RunChild(const std::string& self) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::string arg = "--child";
  char* argv[] = {const_cast<char*>(self.c_str()), arg.data(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, environ) != 0) {
    std::fprintf(stderr, "frontend_cost: cannot run %s\n", self.c_str());
    std::exit(1);
  }
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "frontend_cost: the child failed: %s\n", out.c_str());
    std::exit(1);
  }
  std::vector<double> v(2 * kNumKinds);
  char* p = out.data();
  for (double& x : v) x = std::strtod(p, &p);
  return v;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Code this process ran before, after bench::SweepCaches() evicted it
// (what a codegen after other work fetches): per line, run in address
// order, one line a page apart (each line on a page of its own), and in
// address order after one prefetch (prefetcht1) per line, the prefetches
// timed with it; then warm.
void AfterSweep(int runs) {
  constexpr int kLines = 1024, kPageLines = 64;
  long sum = ptxforge_fc_lines() + ptxforge_fc_pages();  // maps their pages
  std::vector<double> lines, pages, prefetched, warm;
  for (int i = 0; i < runs; ++i) {
    ptxforge::bench::SweepCaches();
    double t0 = NowNs();
    sum += ptxforge_fc_lines();
    lines.push_back((NowNs() - t0) / kLines);
    ptxforge::bench::SweepCaches();
    t0 = NowNs();
    sum += ptxforge_fc_pages();
    pages.push_back((NowNs() - t0) / kPageLines);
    ptxforge::bench::SweepCaches();
    t0 = NowNs();
    for (const char* p = &ptxforge_fc_lines_begin; p < &ptxforge_fc_lines_end; p += 64) __builtin_prefetch(p, 0, 2);
    sum += ptxforge_fc_lines();
    prefetched.push_back((NowNs() - t0) / kLines);
    t0 = NowNs();
    sum += ptxforge_fc_lines();
    warm.push_back((NowNs() - t0) / kLines);
  }
  std::printf("after a 64 MiB sweep, per line of code (medians of %d, in this process, ns):\n", runs);
  std::printf("  %-26s %7.2f\n", "in address order", Median(lines));
  std::printf("  %-26s %7.2f\n", "a page apart", Median(pages));
  std::printf("  %-26s %7.2f\n", "prefetched, then in order", Median(prefetched));
  std::printf("  %-26s %7.2f  (%ld)\n", "warm", Median(warm), sum);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--child") return Child();
  const int runs = argc >= 2 ? std::atoi(argv[1]) : 31;
  if (argc > 2 || runs <= 0) {
    std::fprintf(stderr, "usage: frontend_cost [RUNS]\n");
    return 2;
  }
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  const std::string me = len > 0 ? std::string(self, static_cast<size_t>(len)) : std::string(argv[0]);
  std::vector<std::vector<double>> samples;
  for (int i = 0; i < runs; ++i) samples.push_back(RunChild(me));
  std::printf("first run over the second, per unit of %d distinct ones (%d pages; medians of %d fresh processes, ns)\n",
              kUnits, kPages, runs);
  for (int k = 0; k < kNumKinds; ++k) {
    std::vector<double> first, second, extra;
    for (const auto& s : samples) {
      first.push_back(s[2 * k] / kUnitsOf[k]);
      second.push_back(s[2 * k + 1] / kUnitsOf[k]);
      extra.push_back((s[2 * k] - s[2 * k + 1]) / kUnitsOf[k]);
    }
    std::printf("  %-26s %7.2f  (first %.2f, second %.2f)\n", kKinds[k], Median(extra), Median(first), Median(second));
  }
  AfterSweep(runs);
  return 0;
}

#else

int main() {
  std::printf("frontend_cost: x86-64 only\n");
  return 0;
}

#endif
