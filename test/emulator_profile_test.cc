// Emulator memory-efficiency metrics (coalescing, bank conflicts,
// divergence) and race checking, on kernels with known answers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "builder/kernel_builder.h"
#include "emit/ptx_printer.h"
#include "ir/strings.h"
#include "kernels/problem_runner.h"
#include "kernels/registry.h"
#include "passes/pass.h"
#include "runtime/emulator.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using ir::StateSpace::kGlobal;
using ir::StateSpace::kShared;
using runtime::Buffer;
using runtime::EmulatorProfile;
using runtime::InstructionProfile;
using runtime::MakeEmulator;
using testing::FinishOrDie;
using testing::Msg;

// The body index of the instruction the builder recorded at `line`, of
// opcode `op` (the test kernels put each memory access on its own line).
uint32_t IndexAt(const ir::Kernel& k, int line, ir::Opcode op) {
  for (uint32_t i = 0; i < k.body.size(); ++i) {
    if (k.body[i].op == op && static_cast<int>(k.body[i].loc.line()) == line) return i;
  }
  FAIL("no instruction at line " << line);
  return 0;
}

// Runs `k` on an emulator with `options` over buffers of `words` u32 each
// (filled with 1); returns the launch's status and, when it succeeded, the
// last buffer and the profile.
absl::Status Run(runtime::EmulatorOptions options, const ir::Kernel& k, const runtime::LaunchConfig& config,
                 std::vector<size_t> words, std::vector<uint32_t>* last = nullptr, EmulatorProfile* profile = nullptr) {
  auto emu = MakeEmulator(options);
  std::vector<Buffer<uint32_t>> buffers;
  std::vector<runtime::KernelArg> args;
  for (size_t n : words) buffers.push_back(*Buffer<uint32_t>::FromHost(*emu, std::vector<uint32_t>(n, 1)));
  for (auto& buffer : buffers) args.push_back(buffer);
  auto loaded = emu->Load(k);
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, config, args);
  if (s.ok() && last != nullptr) *last = *buffers.back().ToHost();
  if (s.ok() && profile != nullptr) *profile = emu->last_profile();
  return s;
}

// Runs `k` with profiling on (on two host threads) and returns the profile.
EmulatorProfile Profile(const ir::Kernel& k, const runtime::LaunchConfig& config, std::vector<size_t> words) {
  EmulatorProfile p;
  absl::Status s = Run({.worker_threads = 2, .profile = true}, k, config, std::move(words), nullptr, &p);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return p;
}

const InstructionProfile& At(const EmulatorProfile& p, const ir::Kernel& k, int line, ir::Opcode op) {
  const InstructionProfile* i = p.Find(IndexAt(k, line, op));
  REQUIRE(i != nullptr);
  return *i;
}

// out[i] = in[i * stride] for every thread of the grid.
ir::Kernel StridedCopy(uint32_t stride, int* load_line, int* store_line) {
  KernelBuilder b(StrCat("copy_stride", stride));
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> i = b.GlobalThreadIdX();
  Value<U32> v = b.Load<U32>(kGlobal, b.ElementAddr<U32>(in, b.Mul(i, stride))); *load_line = __LINE__;
  b.Store(kGlobal, b.ElementAddr<U32>(out, i), v); *store_line = __LINE__;
  return FinishOrDie(b);
}

TEST_CASE("a coalesced copy touches one sector per 32 bytes requested") {
  int load = 0, store = 0;
  ir::Kernel k = StridedCopy(1, &load, &store);
  EmulatorProfile p = Profile(k, {.grid = {4}, .block = {128}}, {512, 512});
  for (int line : {load, store}) {
    const runtime::ProfileCounts& c = At(p, k, line, line == load ? ir::Opcode::kLd : ir::Opcode::kSt).counts;
    CHECK(c.global_requests == 16);
    CHECK(c.global_bytes == 16 * 128);
    CHECK(c.sectors == 64);
    CHECK(c.ideal_sectors == 64);
    CHECK(c.excess_sectors() == 0);
    CHECK(c.lines == 16);
    CHECK(c.sectors_per_request() == 4.0);
    CHECK(c.warp_executions == 16);
    CHECK(c.thread_executions == 512);
  }
  CHECK(p.total.global_requests == 32);
  CHECK(p.total.excess_sectors() == 0);
  CHECK(p.total.active_lanes_per_instruction() == 32.0);
  CHECK(p.total.shared_requests == 0);
  CHECK(p.Summary() ==
        "global: 32 requests, 4.00 sectors/request, 0 excess sectors (128 ideal), 32 lines; shared: 0 requests, 0 bank "
        "conflicts (0 wavefronts); branches: 0 warp executions, 0 splits; 32.00 active lanes/instruction");
}

TEST_CASE("a copy with a stride of 32 floats touches 32 sectors per request") {
  int load = 0, store = 0;
  ir::Kernel k = StridedCopy(32, &load, &store);
  EmulatorProfile p = Profile(k, {.grid = {4}, .block = {128}}, {512 * 32, 512});
  const runtime::ProfileCounts& c = At(p, k, load, ir::Opcode::kLd).counts;
  CHECK(c.global_requests == 16);
  CHECK(c.sectors == 16 * 32);
  CHECK(c.sectors_per_request() == 32.0);
  CHECK(c.ideal_sectors == 16 * 4);
  CHECK(c.excess_sectors() == 16 * 28);
  CHECK(c.lines == 16 * 32);
  CHECK(At(p, k, store, ir::Opcode::kSt).counts.excess_sectors() == 0);
  // The table ranks the load first and leaves the store (no excess) out.
  const std::string table = p.Table(5);
  const std::string load_text = At(p, k, load, ir::Opcode::kLd).ptx;
  CHECK(table == StrCat("profile: ", p.Summary(), "\n", "top instructions by excess sectors:\n",
                        "       448 excess sectors, 32.00 sectors/request, 16 requests  ", load_text,
                        "  (emulator_profile_test.cc:", load, ")\n", "top instructions by bank conflicts: none\n"));
}

// A 32x32 transpose of u32 through a shared tile of 32 x `pitch` words
// (one block of 32x32 threads): tile[ty][tx] = in[ty][tx]; out[ty][tx] = tile[tx][ty].
ir::Kernel Transpose(uint32_t pitch, int* store_line, int* load_line) {
  KernelBuilder b(StrCat("transpose_pitch", pitch));
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U32> tile = b.Shared<U32>("tile", 32 * pitch);
  Value<U32> tx = b.TidX(), ty = b.TidY();
  Value<U32> row = b.Mad(ty, 32u, tx);
  Value<U32> v = b.Load<U32>(kGlobal, b.ElementAddr<U32>(in, row));
  b.Store(kShared, b.ElementAddr(tile, b.Mad(ty, pitch, tx)), v); *store_line = __LINE__;
  b.BarSync();
  Value<U32> t = b.Load<U32>(kShared, b.ElementAddr(tile, b.Mad(tx, pitch, ty))); *load_line = __LINE__;
  b.Store(kGlobal, b.ElementAddr<U32>(out, row), t);
  return FinishOrDie(b);
}

TEST_CASE("a naive transpose has 32-way bank conflicts on the column access, a padded tile has none") {
  int store = 0, load = 0;
  ir::Kernel naive = Transpose(32, &store, &load);
  EmulatorProfile p = Profile(naive, {.grid = {1}, .block = {32, 32}}, {1024, 1024});
  const runtime::ProfileCounts& row = At(p, naive, store, ir::Opcode::kSt).counts;
  const runtime::ProfileCounts& column = At(p, naive, load, ir::Opcode::kLd).counts;
  CHECK(row.shared_requests == 32);
  CHECK(row.wavefronts == 32);
  CHECK(row.bank_conflicts() == 0);
  CHECK(column.shared_requests == 32);
  CHECK(column.wavefronts == 32 * 32);
  CHECK(column.bank_conflicts() == 32 * 31);
  CHECK(p.total.bank_conflicts() == 32 * 31);
  CHECK(p.Table(1).ends_with(StrCat("top instructions by bank conflicts:\n",
                                    "       992 bank conflicts, 32.00 wavefronts/request, 32 requests  ",
                                    At(p, naive, load, ir::Opcode::kLd).ptx, "  (emulator_profile_test.cc:", load, ")\n")));

  ir::Kernel padded = Transpose(33, &store, &load);
  EmulatorProfile q = Profile(padded, {.grid = {1}, .block = {32, 32}}, {1024, 1024});
  CHECK(At(q, padded, load, ir::Opcode::kLd).counts.wavefronts == 32);
  CHECK(q.total.shared_requests == 64);
  CHECK(q.total.bank_conflicts() == 0);
}

// Each lane stores and loads `width` u32 words at word (lane * stride_words)
// of a shared array (one warp).
ir::Kernel WideShared(int width, uint32_t stride_words, int* store_line, int* load_line) {
  KernelBuilder b(StrCat("shared_v", width, "_stride", stride_words));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U32> tile = b.Shared<U32>("tile", 32 * stride_words, 16);
  Value<U32> lane = b.TidX();
  Value<U32> at = b.ElementAddr(tile, b.Mul(lane, stride_words));
  Value<U32> sum;
  if (width == 2) {
    b.StoreVec<U32, 2>(kShared, at, {lane, lane}); *store_line = __LINE__;
    auto v = b.LoadVec<U32, 2>(kShared, at); *load_line = __LINE__;
    sum = b.Add(v[0], v[1]);
  } else {
    b.StoreVec<U32, 4>(kShared, at, {lane, lane, lane, lane}); *store_line = __LINE__;
    auto v = b.LoadVec<U32, 4>(kShared, at); *load_line = __LINE__;
    sum = b.Add(b.Add(v[0], v[1]), b.Add(v[2], v[3]));
  }
  b.Store(kGlobal, b.ElementAddr<U32>(out, lane), sum);
  return FinishOrDie(b);
}

TEST_CASE("64-bit shared accesses are served per half warp, 128-bit ones per quarter warp") {
  struct Case {
    int width;
    uint32_t stride;
    uint64_t wavefronts;
  };
  // Contiguous: one wavefront per phase (2 for 64-bit, 4 for 128-bit).
  // Twice the width apart: each phase covers 256 bytes, two words per bank.
  for (Case c : {Case{2, 2, 2}, Case{2, 4, 4}, Case{4, 4, 4}, Case{4, 8, 8}}) {
    INFO("v" << c.width << " stride " << c.stride);
    int store = 0, load = 0;
    ir::Kernel k = WideShared(c.width, c.stride, &store, &load);
    EmulatorProfile p = Profile(k, {.grid = {1}, .block = {32}}, {32});
    for (int line : {store, load}) {
      const runtime::ProfileCounts& s = At(p, k, line, line == store ? ir::Opcode::kSt : ir::Opcode::kLd).counts;
      CHECK(s.shared_requests == 1);
      CHECK(s.wavefronts == c.wavefronts);
      CHECK(s.ideal_wavefronts == (c.width == 2 ? 2u : 4u));
    }
  }
}

// ldmatrix.xN with lane l giving row l at byte l * row_bytes (N = 1: lanes 0-7 only).
ir::Kernel LdMatrixRows(int n, uint32_t row_bytes, int* line) {
  KernelBuilder b(StrCat("ldmatrix_rows", n, "_", row_bytes), ir::Target::kSm80);
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<B32> tile = b.Shared<B32>("tile", 32 * row_bytes / 4, 16);
  Value<U32> lane = b.LaneId();
  Value<U32> row = b.Mad(lane, row_bytes, b.SymbolAddr(tile));
  for (uint32_t k = 0; k < row_bytes / 4; ++k) b.Store(kShared, Address(row, 4 * k), b.Const<B32>(k));
  b.BarSync();
  Value<B32> first;
  if (n == 1) {
    first = b.LdMatrix<1>(Address(row))[0]; *line = __LINE__;
  } else {
    first = b.LdMatrix<4>(Address(row))[0]; *line = __LINE__;
  }
  b.Store(kGlobal, b.ElementAddr<B32>(out, lane), first);
  return FinishOrDie(b);
}

TEST_CASE("ldmatrix: 8 rows of 16 bytes per phase, rows 128 bytes apart are 8-way bank conflicts") {
  struct Case {
    int n;
    uint32_t row_bytes;
    uint64_t wavefronts, ideal;
  };
  for (Case c : {Case{4, 16, 4, 4}, Case{4, 128, 32, 4}, Case{1, 16, 1, 1}, Case{1, 144, 1, 1}}) {
    INFO("x" << c.n << ", rows " << c.row_bytes << " bytes apart");
    int line = 0;
    ir::Kernel k = LdMatrixRows(c.n, c.row_bytes, &line);
    EmulatorProfile p = Profile(k, {.grid = {1}, .block = {32}}, {32});
    const runtime::ProfileCounts& s = At(p, k, line, ir::Opcode::kLdmatrix).counts;
    CHECK(s.shared_requests == 1);
    CHECK(s.wavefronts == c.wavefronts);
    CHECK(s.ideal_wavefronts == c.ideal);
  }
}

TEST_CASE("ldmatrix reads race with unsynchronised stores of other lanes, bar.sync orders them") {
  for (bool barrier : {false, true}) {
    KernelBuilder b(barrier ? "ldmatrix_synced" : "ldmatrix_racy", ir::Target::kSm80);
    Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
    Symbol<B32> tile = b.Shared<B32>("tile", 32, 16);
    Value<U32> lane = b.LaneId();
    // Lane l writes word l; lane r (< 8) reads row r = words 4r..4r+3, written by lanes 4r..4r+3.
    b.Store(kShared, b.ElementAddr(tile, lane), b.Const<B32>(7)); const int store_line = __LINE__;
    if (barrier) b.BarSync();
    Value<U32> row = b.Mad(b.And(lane, 7u), 16u, b.SymbolAddr(tile));
    Value<B32> v = b.LdMatrix<1>(Address(row))[0]; const int load_line = __LINE__;
    b.Store(kGlobal, b.ElementAddr<B32>(out, lane), v);
    ir::Kernel k = FinishOrDie(b);
    absl::Status s = Run({.worker_threads = 1, .race_check = true}, k, {.grid = {1}, .block = {32}}, {32});
    if (barrier) {
      CHECK(Msg(s) == "");
    } else {
      CHECK(Msg(s).find("race") != std::string::npos);
      CHECK(Msg(s).find(StrCat("emulator_profile_test.cc:", load_line)) != std::string::npos);
      CHECK(Msg(s).find(StrCat("emulator_profile_test.cc:", store_line)) != std::string::npos);
    }
  }
}

TEST_CASE("a branch that splits every warp in half") {
  KernelBuilder b("half_split");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> i = b.GlobalThreadIdX();
  Value<U32> lane = b.And(b.TidX(), 31u);
  const int low_line = __LINE__ + 1;
  auto low = [&] { b.Store(kGlobal, b.ElementAddr<U32>(out, i), lane); };
  const int high_line = __LINE__ + 1;
  auto high = [&] { b.Store(kGlobal, b.ElementAddr<U32>(out, i), b.Add(lane, 100u)); };
  b.IfElse(b.Lt(lane, 16u), low, high); const int branch = __LINE__;
  ir::Kernel k = FinishOrDie(b);
  EmulatorProfile p = Profile(k, {.grid = {2}, .block = {96}}, {192});
  CHECK(p.total.branch_executions == 6);  // the jump over the else is not guarded
  const InstructionProfile& bra = At(p, k, branch, ir::Opcode::kBra);
  CHECK(bra.counts.branch_executions == 6);
  CHECK(bra.counts.branch_splits == 6);
  CHECK(p.total.branch_splits == 6);
  // The two stores each run with 16 lanes, in 6 warp executions of one request.
  for (int line : {low_line, high_line}) {
    const runtime::ProfileCounts& store = At(p, k, line, ir::Opcode::kSt).counts;
    CHECK(store.warp_executions == 6);
    CHECK(store.thread_executions == 6 * 16);
    CHECK(store.active_lanes_per_instruction() == 16.0);
    CHECK(store.global_requests == 6);
    CHECK(store.sectors == 6 * 2);  // 64 bytes each
  }
  CHECK(p.total.active_lanes_per_instruction() < 32.0);
  CHECK(p.total.active_lanes_per_instruction() > 16.0);
}

// ---- race checking

// Sums 64 u32 in shared memory by a tree of halving steps (one block of 64
// threads); `missing` is the step (32, 16, ...) whose barrier is left out.
struct Reduction {
  ir::Kernel kernel;
  std::map<uint32_t, int> load_line, add_line, store_line;  // by step
};
Reduction TreeReduction(uint32_t missing) {
  Reduction r;
  KernelBuilder b(missing ? "reduce_racy" : "reduce");
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U32> tile = b.Shared<U32>("tile", 64);
  Value<U32> tid = b.TidX();
  Value<U32> mine = b.ElementAddr(tile, tid);
  b.Store(kShared, mine, b.Load<U32>(kGlobal, b.ElementAddr<U32>(in, tid)));
  b.BarSync();
  for (uint32_t step = 32; step >= 1; step /= 2) {
    b.If(b.Lt(tid, step), [&] {
      Value<U32> a = b.Load<U32>(kShared, mine); r.load_line[step] = __LINE__;
      Value<U32> c = b.Load<U32>(kShared, Address(mine, step * 4)); r.add_line[step] = __LINE__;
      b.Store(kShared, mine, b.Add(a, c)); r.store_line[step] = __LINE__;
    });
    if (step != missing) b.BarSync();
  }
  b.If(b.Eq(tid, 0u), [&] { b.Store(kGlobal, out, b.Load<U32>(kShared, mine)); });
  r.kernel = FinishOrDie(b);
  return r;
}

absl::Status RaceCheck(const ir::Kernel& k, const runtime::LaunchConfig& config, std::vector<size_t> words,
                       std::vector<uint32_t>* last = nullptr) {
  return Run({.race_check = true}, k, config, std::move(words), last);
}

TEST_CASE("a reduction with a missing barrier is a shared-memory race naming both accesses") {
  Reduction clean = TreeReduction(0);
  std::vector<uint32_t> out;
  absl::Status s = RaceCheck(clean.kernel, {.grid = {1}, .block = {64}}, {64, 1}, &out);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(out == std::vector<uint32_t>{64});

  // Without the barrier after the step of 32, thread 0 goes on to the step
  // of 16 and reads tile[16] before thread 16 writes its step-32 sum there.
  Reduction racy = TreeReduction(32);
  s = RaceCheck(racy.kernel, {.grid = {1}, .block = {64}}, {64, 1});
  CHECK(Msg(s) == StrCat("kernel reduce_racy: shared-memory data race in block (0,0,0) on shared address 64 (two "
                         "threads, at least one writing, no barrier between): thread (0,0,0) loads at `",
                         "ld.shared.u32 %r8, [%r3+64];` (emulator_profile_test.cc:", racy.add_line[16],
                         "); thread (16,0,0) stores at `st.shared.u32 [%r3], %r6;` (emulator_profile_test.cc:",
                         racy.store_line[32], ")"));
}

TEST_CASE("lanes of one warp exchanging through shared memory without a barrier race") {
  KernelBuilder b("warp_exchange");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U32> tile = b.Shared<U32>("tile", 32);
  Value<U32> lane = b.TidX();
  b.Store(kShared, b.ElementAddr(tile, lane), lane); const int store = __LINE__;
  Value<U32> v = b.Load<U32>(kShared, b.ElementAddr(tile, b.Xor(lane, 1u))); const int load = __LINE__;
  b.Store(kGlobal, b.ElementAddr<U32>(out, lane), v);
  ir::Kernel k = FinishOrDie(b);
  // Thread 0 reads tile[1] before thread 1 writes it: warp-synchronous
  // code is a race unless something orders it.
  absl::Status s = RaceCheck(k, {.grid = {1}, .block = {32}}, {32});
  CHECK(Msg(s) == StrCat("kernel warp_exchange: shared-memory data race in block (0,0,0) on shared address 4 (two "
                         "threads, at least one writing, no barrier between): thread (0,0,0) loads at `ld.shared.u32 "
                         "%r6, [%r5];` (emulator_profile_test.cc:", load, "); thread (1,0,0) stores at `st.shared.u32 "
                         "[%r2], %r0;` (emulator_profile_test.cc:", store, ")"));
}

// Lanes exchange tile[lane ^ partner] through shared memory, ordered by
// bar.warp.sync: over the whole warp, or per half warp (lanes 0-15 with
// mask 0x0000FFFF, lanes 16-31 with 0xFFFF0000).
struct WarpExchange {
  ir::Kernel kernel;
  int store = 0, load = 0;
};
WarpExchange SyncedExchange(uint32_t partner, bool half_masks) {
  WarpExchange w;
  KernelBuilder b("warp_exchange_synced");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U32> tile = b.Shared<U32>("tile", 64);
  Value<U32> tid = b.TidX();
  b.Store(kShared, b.ElementAddr(tile, tid), tid); w.store = __LINE__;
  if (half_masks) {
    b.IfElse(b.Lt(b.And(tid, 31u), 16u), [&] { b.SyncWarp(0x0000FFFFu); }, [&] { b.SyncWarp(0xFFFF0000u); });
  } else {
    b.SyncWarp();
  }
  Value<U32> v = b.Load<U32>(kShared, b.ElementAddr(tile, b.Xor(tid, partner))); w.load = __LINE__;
  b.Store(kGlobal, b.ElementAddr<U32>(out, tid), v);
  w.kernel = FinishOrDie(b);
  return w;
}

TEST_CASE("bar.warp.sync orders the shared accesses of the lanes it names") {
  std::vector<uint32_t> expected(64);
  for (uint32_t i = 0; i < 64; ++i) expected[i] = i ^ 1;
  for (bool half : {false, true}) {
    INFO("half masks " << half);
    WarpExchange w = SyncedExchange(1, half);
    std::vector<uint32_t> out;
    absl::Status s = RaceCheck(w.kernel, {.grid = {1}, .block = {64}}, {64}, &out);
    INFO(s.ToString());
    REQUIRE(s.ok());
    CHECK(out == expected);
  }
  // Lanes 0 and 16 synchronise with different masks: nothing orders lane
  // 16's store before lane 0's load.
  WarpExchange across = SyncedExchange(16, true);
  CHECK(Msg(RaceCheck(across.kernel, {.grid = {1}, .block = {32}}, {32})) ==
        StrCat("kernel warp_exchange_synced: shared-memory data race in block (0,0,0) on shared address 64 (two "
               "threads, at least one writing, no barrier between): thread (16,0,0) stores at `st.shared.u32 [%r2], "
               "%r0;` (emulator_profile_test.cc:", across.store, "); thread (0,0,0) loads at `ld.shared.u32 %r7, "
               "[%r6];` (emulator_profile_test.cc:", across.load, ")"));
  // A barrier between warps is still needed: bar.warp.sync orders one warp.
  WarpExchange warps = SyncedExchange(32, false);
  CHECK(Msg(RaceCheck(warps.kernel, {.grid = {1}, .block = {64}}, {64})) ==
        StrCat("kernel warp_exchange_synced: shared-memory data race in block (0,0,0) on shared address 128 (two "
               "threads, at least one writing, no barrier between): thread (32,0,0) stores at `st.shared.u32 [%r2], "
               "%r0;` (emulator_profile_test.cc:", warps.store, "); thread (0,0,0) loads at `ld.shared.u32 %r6, "
               "[%r5];` (emulator_profile_test.cc:", warps.load, ")"));
}

TEST_CASE("bar.warp.sync: its PTX, and the lanes of its mask must all reach it") {
  KernelBuilder b("warp_sync_first_lane");
  b.SyncWarp(0x1u); const int line = __LINE__;
  b.Ret();
  ir::Kernel k = FinishOrDie(b);
  absl::StatusOr<std::string> ptx = emit::PrintPtx(k);
  REQUIRE(ptx.ok());
  CHECK(ptx->find("\tbar.warp.sync 1;\n") != std::string::npos);
  // Every lane runs it with mask 0x1: lane 1 is not in the mask.
  CHECK(Msg(Run({}, k, {.grid = {1}, .block = {32}}, {})) ==
        StrCat("kernel warp_sync_first_lane: the member mask 0x00000001 does not include the calling lane 1; block "
               "(0,0,0) thread (1,0,0) at `bar.warp.sync 1;` (emulator_profile_test.cc:", line, ")"));
  KernelBuilder empty("warp_sync_empty");
  empty.SyncWarp(0u); const int empty_line = __LINE__;
  empty.Ret();
  CHECK(Msg(empty.Finish().status()) ==
        StrCat("kernel warp_sync_empty: emulator_profile_test.cc:", empty_line, ": bar.warp.sync needs a non-empty "
               "member mask"));
}

TEST_CASE("atomics do not race with atomics, but do with plain accesses") {
  auto kernel = [](bool plain_read, int* atom_line, int* read_line) {
    KernelBuilder b(plain_read ? "count_then_read" : "count");
    Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
    Symbol<U32> counter = b.Shared<U32>("counter", 1);
    Value<U32> tid = b.TidX();
    b.If(b.Eq(tid, 0u), [&] { b.Store(kShared, Address(counter), b.Const<U32>(0)); });
    b.BarSync();
    b.Red<U32>(ir::AtomOp::kAdd, kShared, Address(counter), b.Const<U32>(1)); *atom_line = __LINE__;
    if (!plain_read) b.BarSync();
    Value<U32> v = b.Load<U32>(kShared, Address(counter)); *read_line = __LINE__;
    b.Store(kGlobal, b.ElementAddr<U32>(out, tid), v);
    return FinishOrDie(b);
  };
  int atom = 0, read = 0;
  std::vector<uint32_t> out;
  absl::Status s = RaceCheck(kernel(false, &atom, &read), {.grid = {1}, .block = {64}}, {64}, &out);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(out == std::vector<uint32_t>(64, 64));
  s = RaceCheck(kernel(true, &atom, &read), {.grid = {1}, .block = {64}}, {64});
  CHECK(Msg(s) == StrCat("kernel count_then_read: shared-memory data race in block (0,0,0) on shared address 0 (two "
                         "threads, at least one writing, no barrier between): thread (0,0,0) loads at `ld.shared.u32 "
                         "%r3, [counter];` (emulator_profile_test.cc:", read, "); thread (1,0,0) accesses atomically at "
                         "`red.shared.add.u32 [counter], %r2;` (emulator_profile_test.cc:", atom, ")"));
}

TEST_CASE("plain global accesses of different blocks to the same bytes race, atomics do not") {
  auto kernel = [](bool atomic, int* line) {
    KernelBuilder b(atomic ? "total_atomic" : "total_plain");
    Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
    Value<U32> tid = b.TidX();
    b.If(b.Eq(tid, 0u), [&] {
      if (atomic) {
        b.Red<U32>(ir::AtomOp::kAdd, kGlobal, out, b.CtaidX()); *line = __LINE__;
      } else {
        b.Store(kGlobal, out, b.CtaidX()); *line = __LINE__;
      }
    });
    return FinishOrDie(b);
  };
  int line = 0;
  std::vector<uint32_t> out;
  absl::Status s = RaceCheck(kernel(true, &line), {.grid = {4}, .block = {32}}, {1}, &out);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(out == std::vector<uint32_t>{1 + 0 + 1 + 2 + 3});
  s = RaceCheck(kernel(false, &line), {.grid = {4}, .block = {32}}, {1});
  CHECK(Msg(s) == StrCat("kernel total_plain: global-memory data race on 0x10000000000 between blocks (plain "
                         "accesses, at least one writing, no ordering within a launch): block (0,0,0) thread (0,0,0) "
                         "stores at `st.global.u32 [%rd1], %r1;` (emulator_profile_test.cc:", line,
                         "); block (1,0,0) thread (0,0,0) stores at `st.global.u32 [%rd1], %r1;` "
                         "(emulator_profile_test.cc:", line, ")"));
}

// Families whose design promises conflict-free shared memory (sequential
// addressing, padded or swizzled tiles); checked once they are registered.
constexpr std::string_view kConflictFree[] = {"reduce_sum", "transpose", "gemm.simt", "gemm.tensor_core"};

TEST_CASE("every registry kernel runs race-free, with zero bank conflicts where its design claims it") {
  auto emu = MakeEmulator({.profile = true, .race_check = true});
  int checked = 0;
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    INFO(family->name());
    auto config = family->MakeConfig();
    REQUIRE(config.ok());
    auto kernel = family->Build(*config, ir::Target::kSm80);
    REQUIRE(kernel.ok());
    REQUIRE(passes::Pipeline::Standard().Run(*kernel).ok());
    auto problem = family->MakeProblem(*config, 1);
    REQUIRE(problem.ok());
    auto result = kernels::RunProblem(*emu, *kernel, *problem);
    INFO(result.status().ToString());
    REQUIRE(result.ok());
    CHECK(result->ok());
    const EmulatorProfile& p = emu->last_profile();
    CHECK(p.total.warp_executions > 0);
    if (std::find(std::begin(kConflictFree), std::end(kConflictFree), family->name()) != std::end(kConflictFree)) {
      INFO(p.Table(3));
      CHECK(p.total.shared_requests > 0);
      CHECK(p.total.bank_conflicts() == 0);
      ++checked;
    }
  }
  CHECK(checked >= 1);
}

TEST_CASE("profiling and race checking are off by default and leave the results alone") {
  int load = 0, store = 0;
  ir::Kernel k = StridedCopy(1, &load, &store);
  auto emu = MakeEmulator();
  auto in = Buffer<uint32_t>::FromHost(*emu, std::vector<uint32_t>(64, 7));
  auto out = Buffer<uint32_t>::Allocate(*emu, 64);
  auto loaded = emu->Load(k);
  REQUIRE(loaded.ok());
  REQUIRE(emu->Launch(**loaded, {.grid = {1}, .block = {64}}, {*in, *out}).ok());
  CHECK(emu->last_profile().instructions.empty());
  CHECK(emu->last_profile().total.warp_executions == 0);
  CHECK(*out->ToHost() == std::vector<uint32_t>(64, 7));
}

}  // namespace
}  // namespace ptxforge
