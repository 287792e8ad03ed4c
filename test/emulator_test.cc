// The emulator as a device: barriers and deadlocks, warp collectives,
// atomics, memory checking, launch checks, counters, determinism, buffer
// views, and every registry kernel against its reference.
#include <bit>
#include <cfenv>
#include <limits>
#include <numeric>

#include "ir/strings.h"
#include "ir/verify.h"
#include "kernels/reduce.h"
#include "kernels/vector_add.h"
#include "kernels/registry.h"
#include "passes/pass.h"
#include "kernels/problem_runner.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using ir::StateSpace;
using runtime::Buffer;
using runtime::Emulator;
using runtime::MakeEmulator;
using testing::FinishOrDie;
using testing::LoadOrDie;
using testing::Msg;

constexpr StateSpace kGlobal = StateSpace::kGlobal;
constexpr StateSpace kShared = StateSpace::kShared;

// Runs a kernel whose only param is a u32 output buffer of `count`
// elements; fails the test if the launch fails; returns the buffer.
std::vector<uint32_t> RunToU32(const ir::Kernel& k, size_t count, const runtime::LaunchConfig& config) {
  auto emu = MakeEmulator();
  auto o = Buffer<uint32_t>::Allocate(*emu, count);
  REQUIRE(o.ok());
  auto loaded = LoadOrDie(*emu, k);
  absl::Status s = emu->Launch(*loaded, config, {*o});
  INFO(s.ToString());
  REQUIRE(s.ok());
  return *o->ToHost();
}

template <typename T>
std::vector<T> Iota(size_t n, T start = 0) {
  std::vector<T> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// out[i] = in[63 - i] through shared memory, for a block of 64 threads.
ir::Kernel Reverse(bool barrier, bool dynamic, int* bar_line = nullptr) {
  KernelBuilder b(barrier ? "reverse" : "reverse_racy");
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U32> tile = dynamic ? b.DynamicShared<U32>("tile") : b.Shared<U32>("tile", 64);
  Value<U32> tid = b.TidX();
  b.Store(kShared, b.ElementAddr(tile, tid), b.Load<U32>(kGlobal, b.ElementAddr<U32>(in, tid)));
  if (barrier) {
    b.BarSync(); if (bar_line) *bar_line = __LINE__;
  }
  Value<U32> mirror = b.Sub(b.Const<U32>(63), tid);
  b.Store(kGlobal, b.ElementAddr<U32>(out, tid), b.Load<U32>(kShared, b.ElementAddr(tile, mirror)));
  return FinishOrDie(b);
}

std::vector<uint32_t> RunReverse(const ir::Kernel& k, uint32_t dynamic_bytes) {
  auto emu = MakeEmulator();
  auto in = Buffer<uint32_t>::FromHost(*emu, Iota<uint32_t>(64));
  auto out = Buffer<uint32_t>::Allocate(*emu, 64);
  auto loaded = LoadOrDie(*emu, k);
  absl::Status s = emu->Launch(*loaded, {.grid = {1}, .block = {64}, .dynamic_shared_bytes = dynamic_bytes}, {*in, *out});
  INFO(s.ToString());
  REQUIRE(s.ok());
  return *out->ToHost();
}

TEST_CASE("bar.sync makes the shared-memory reversal correct") {
  std::vector<uint32_t> expected(64);
  for (uint32_t i = 0; i < 64; ++i) expected[i] = 63 - i;
  CHECK(RunReverse(Reverse(true, false), 0) == expected);
  CHECK(RunReverse(Reverse(true, true), 64 * 4) == expected);
  // Without the barrier, thread 0 reads tile[63] before thread 63 wrote it:
  // shared memory starts as 0xFF bytes.
  std::vector<uint32_t> racy = RunReverse(Reverse(false, false), 0);
  CHECK(racy[0] == 0xFFFFFFFFu);
  CHECK(racy[63] == 0);
}

TEST_CASE("threads that exit while others wait at a barrier are a deadlock") {
  KernelBuilder b("early_exit");
  Value<U32> tid = b.TidX();
  b.If(b.Ge(tid, 32u), [&] { b.Ret(); });
  b.BarSync(); const int line = __LINE__;
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto loaded = LoadOrDie(*emu, k);
  absl::Status s = emu->Launch(*loaded, {.grid = {2}, .block = {64}}, {});
  CHECK(Msg(s) == StrCat("kernel early_exit: deadlock in block (0,0,0): threads 0-31 wait at `bar.sync 0;` "
                         "(emulator_test.cc:", line, "); threads 32-63 exited"));
}

TEST_CASE("threads waiting at different barriers are a deadlock") {
  KernelBuilder b("split_barriers");
  int line1 = 0, line0 = 0;
  b.IfElse(
      b.Eq(b.TidY(), 0u), [&] { b.BarSync(1); line1 = __LINE__; }, [&] { b.BarSync(0); line0 = __LINE__; });
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto loaded = LoadOrDie(*emu, k);
  absl::Status s = emu->Launch(*loaded, {.grid = {1}, .block = {32, 2}}, {});
  CHECK(Msg(s) == StrCat("kernel split_barriers: deadlock in block (0,0,0): threads 0-31 wait at `bar.sync 1;` "
                         "(emulator_test.cc:", line1, "); threads 32-63 wait at `bar.sync 0;` (emulator_test.cc:", line0,
                         ") (thread numbers are linear: x + y*32 + z*64)"));
}

TEST_CASE("bar.sync with a thread count releases each warp's own barrier") {
  KernelBuilder b("counted");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U32> tile = b.Shared<U32>("tile", 64);
  Value<U32> tid = b.TidX();
  Value<U32> warp = b.Shr(tid, 5u);
  b.Store(kShared, b.ElementAddr(tile, tid), tid);
  // Each warp waits only for itself (barrier 1 + warp, 32 threads), then
  // reads its neighbour lane within the warp.
  b.IfElse(b.Eq(warp, 0u), [&] { b.BarSync(1, 32); }, [&] { b.BarSync(2, 32); });
  Value<U32> partner = b.Xor(tid, 1u);
  b.Store(kGlobal, b.ElementAddr<U32>(out, tid), b.Load<U32>(kShared, b.ElementAddr(tile, partner)));
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto o = Buffer<uint32_t>::Allocate(*emu, 64);
  auto loaded = LoadOrDie(*emu, k);
  REQUIRE(emu->Launch(*loaded, {.grid = {1}, .block = {64}}, {*o}).ok());
  std::vector<uint32_t> expected(64);
  for (uint32_t i = 0; i < 64; ++i) expected[i] = i ^ 1;
  CHECK(*o->ToHost() == expected);
  CHECK(emu->last_counters().barriers == 64);
}

TEST_CASE("warp shuffles and votes") {
  KernelBuilder b("warp_ops");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> lane = b.LaneId();
  Var<U32> sum = b.Mutable<U32>(lane);
  for (uint32_t m = 16; m >= 1; m /= 2) b.Assign(sum, b.Add<U32>(sum, b.ShflXor<U32>(sum, m)));
  Value<U32> up = b.ShflUp(lane, 1);       // lane 0 keeps its own value
  Value<U32> down = b.ShflDown(lane, 4);   // lanes 28..31 keep their own
  Value<U32> idx = b.ShflIdx(lane, 5u);
  Value<Pred> odd = b.Eq(b.And(lane, 1u), 1u);
  Value<U32> ballot = b.VoteBallot(odd);
  Value<U32> all = b.Cvt<U32>(b.VoteAll(b.Lt(lane, 32u)));
  Value<U32> any = b.Cvt<U32>(b.VoteAny(b.Eq(lane, 7u)));
  Value<U32> base = b.Mul(lane, 7u);
  int k = 0;
  for (Value<U32> v : {static_cast<Value<U32>>(sum), up, down, idx, ballot, all, any}) {
    b.Store(kGlobal, b.ElementAddr<U32>(out, b.Add(base, static_cast<uint32_t>(k++))), v);
  }
  ir::Kernel kernel = FinishOrDie(b);
  std::vector<uint32_t> r = RunToU32(kernel, 32 * 7, {.grid = {1}, .block = {32}});
  for (uint32_t l = 0; l < 32; ++l) {
    INFO("lane " << l);
    CHECK(r[l * 7 + 0] == 496);
    CHECK(r[l * 7 + 1] == (l == 0 ? 0 : l - 1));
    CHECK(r[l * 7 + 2] == (l + 4 <= 31 ? l + 4 : l));
    CHECK(r[l * 7 + 3] == 5);
    CHECK(r[l * 7 + 4] == 0xAAAAAAAAu);
    CHECK(r[l * 7 + 5] == 1);
    CHECK(r[l * 7 + 6] == 1);
  }
}

TEST_CASE("a shuffle whose member mask names lanes outside the block is an error") {
  KernelBuilder b("partial_warp");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> v = b.ShflXor(b.TidX(), 1); const int line = __LINE__;
  b.Store(kGlobal, b.ElementAddr<U32>(out, b.TidX()), v);
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto o = Buffer<uint32_t>::Allocate(*emu, 48);
  auto loaded = LoadOrDie(*emu, k);
  absl::Status s = emu->Launch(*loaded, {.grid = {1}, .block = {48}}, {*o});
  CHECK(Msg(s) == StrCat("kernel partial_warp: the member mask 0xFFFFFFFF names lane 16, which is not in the block; "
                         "block (0,0,0) thread (32,0,0) at `shfl.sync.bfly.b32 %r1, %r0, 1, 31, 0xFFFFFFFF;` "
                         "(emulator_test.cc:", line, ")"));
}

TEST_CASE("global and shared atomics") {
  KernelBuilder b("atomics");
  Value<U64> counter = b.CvtaToGlobal(b.Param<U64>("counter"));
  Value<U64> fsum = b.CvtaToGlobal(b.Param<U64>("fsum"));
  Value<U64> per_block = b.CvtaToGlobal(b.Param<U64>("per_block"));
  Symbol<U32> local_count = b.Shared<U32>("local_count", 1);
  Value<U32> tid = b.TidX();
  b.If(b.Eq(tid, 0u), [&] { b.StoreImm<U32>(kShared, local_count, 0); });
  b.BarSync();
  b.AtomicAdd(kGlobal, counter, b.Const<U32>(1));
  b.Red<F32>(ir::AtomOp::kAdd, kGlobal, fsum, b.Cvt<F32>(tid));
  b.Atom<U32>(ir::AtomOp::kInc, kShared, local_count, 1000u);
  b.Atom<U32>(ir::AtomOp::kMax, kGlobal, Address(counter, 4), tid);
  b.BarSync();
  b.If(b.Eq(tid, 0u), [&] {
    b.Store(kGlobal, b.ElementAddr<U32>(per_block, b.CtaidX()), b.Load<U32>(kShared, local_count));
  });
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto counter_buf = Buffer<uint32_t>::FromHost(*emu, std::vector<uint32_t>{0, 0});
  auto fsum_buf = Buffer<float>::FromHost(*emu, std::vector<float>{0});
  auto blocks = Buffer<uint32_t>::Allocate(*emu, 4);
  auto loaded = LoadOrDie(*emu, k);
  REQUIRE(emu->Launch(*loaded, {.grid = {4}, .block = {256}}, {*counter_buf, *fsum_buf, *blocks}).ok());
  CHECK(*counter_buf->ToHost() == std::vector<uint32_t>{1024, 255});
  CHECK((*fsum_buf->ToHost())[0] == 4 * (255 * 256 / 2));
  CHECK(*blocks->ToHost() == std::vector<uint32_t>{256, 256, 256, 256});
  CHECK(emu->last_counters().atomics == 4 * 256 * 4);

  KernelBuilder c("cas");
  Value<U64> slot = c.CvtaToGlobal(c.Param<U64>("slot"));
  Value<U64> old = c.CvtaToGlobal(c.Param<U64>("old"));
  Value<U32> got = c.AtomCas(kGlobal, slot, c.Const<U32>(5), 9u);
  Value<U32> exch = c.Atom<U32>(ir::AtomOp::kExch, kGlobal, Address(slot, 4), 77u);
  c.Store(kGlobal, old, got);
  c.Store(kGlobal, Address(old, 4), exch);
  ir::Kernel ck = FinishOrDie(c);
  auto slots = Buffer<uint32_t>::FromHost(*emu, std::vector<uint32_t>{5, 3});
  auto olds = Buffer<uint32_t>::Allocate(*emu, 2);
  auto cl = LoadOrDie(*emu, ck);
  REQUIRE(emu->Launch(*cl, {}, {*slots, *olds}).ok());
  CHECK(*slots->ToHost() == std::vector<uint32_t>{9, 77});
  CHECK(*olds->ToHost() == std::vector<uint32_t>{5, 3});
}

// A kernel that loads in[i + shift] (u32 elements, shift in bytes) into out[i].
ir::Kernel ShiftedCopy(int* load_line) {
  KernelBuilder b("shifted_copy");
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> shift = b.Param<U32>("shift");
  Value<U32> i = b.GlobalThreadIdX();
  Value<U64> src = b.Add(b.ElementAddr<U32>(in, i), b.Cvt<U64>(shift));
  Value<U32> v = b.Load<U32>(kGlobal, src); *load_line = __LINE__;
  b.Store(kGlobal, b.ElementAddr<U32>(out, i), v);
  return FinishOrDie(b);
}

TEST_CASE("vector loads and stores, generic addresses, local memory") {
  KernelBuilder b("spaces");
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<F32> tile = b.Shared<F32>("tile", 8, 16);
  Symbol<F32> scratch = b.Local<F32>("scratch", 4, 16);
  std::array<Value<F32>, 4> v = b.LoadVec<F32, 4>(kGlobal, in, {.nc = true});
  std::array<Value<F32>, 2> w = b.LoadVec<F32, 2>(kGlobal, Address(in, 16), {.cache = ir::CacheOp::kCg});
  // Through shared memory with a generic address, then local memory.
  Value<U64> generic = b.GenericAddr(tile);
  b.StoreVec(StateSpace::kGeneric, generic, v);
  b.StoreVec(kShared, Address(tile, 16), w);
  std::array<Value<F32>, 4> back = b.LoadVec<F32, 4>(kShared, tile);
  b.StoreVec(StateSpace::kLocal, scratch, back);
  std::array<Value<F32>, 4> local = b.LoadVec<F32, 4>(StateSpace::kLocal, scratch);
  b.StoreVec(kGlobal, out, local, {.cache = ir::CacheOp::kWb});
  b.StoreVec(kGlobal, Address(out, 16), b.LoadVec<F32, 2>(StateSpace::kGeneric, Address(generic, 16)));
  b.Membar(ir::Scope::kGpu);
  b.Store(kGlobal, Address(out, 24), b.ActiveMask());
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto i = Buffer<float>::FromHost(*emu, std::vector<float>{1, 2, 3, 4, 5, 6});
  auto o = Buffer<float>::Allocate(*emu, 7);
  auto loaded = LoadOrDie(*emu, k);
  absl::Status st = emu->Launch(*loaded, {}, {*i, *o});
  INFO(st.ToString());
  REQUIRE(st.ok());
  std::vector<float> r = *o->ToHost();
  CHECK(std::vector<float>(r.begin(), r.begin() + 6) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(std::bit_cast<uint32_t>(r[6]) == 1);  // a one-thread block: lane 0 only
  CHECK(emu->last_counters().shared_loads == 2);
  CHECK(emu->last_counters().shared_stores == 2);
  CHECK(emu->last_counters().global_load_bytes == 24);
  CHECK(emu->last_counters().global_store_bytes == 28);
}

TEST_CASE("out-of-bounds and misaligned global accesses stop the launch") {
  int line = 0;
  ir::Kernel k = ShiftedCopy(&line);
  auto emu = MakeEmulator();
  auto in = Buffer<uint32_t>::FromHost(*emu, Iota<uint32_t>(100));  // at 0x10000000000
  auto out = Buffer<uint32_t>::Allocate(*emu, 128);                // at 0x10000002000
  auto loaded = LoadOrDie(*emu, k);
  std::string at = StrCat("at `ld.global.u32 %r5, [%rd5];` (emulator_test.cc:", line, ")");
  absl::Status s = emu->Launch(*loaded, {.grid = {1}, .block = {128}}, {*in, *out, 0u});
  CHECK(Msg(s) == StrCat("kernel shifted_copy: out-of-bounds global load of 4 bytes at 0x10000000190: nearest "
                         "allocation [0x10000000000, 0x10000000190) of 400 bytes; the access is 0 bytes past its end; "
                         "block (0,0,0) thread (100,0,0) ", at));
  s = emu->Launch(*loaded, {.grid = {1}, .block = {10}}, {*in, *out, 2u});
  CHECK(Msg(s) == StrCat("kernel shifted_copy: misaligned global load of 4 bytes at 0x10000000002: the access needs "
                         "4-byte alignment; block (0,0,0) thread (0,0,0) ", at));
  s = emu->Launch(*loaded, {.grid = {1}, .block = {1}}, {out->address() - 64, *out, 0u});
  CHECK(Msg(s) == StrCat("kernel shifted_copy: out-of-bounds global load of 4 bytes at 0x10000001FC0: nearest "
                         "allocation [0x10000002000, 0x10000002200) of 512 bytes; the access is 64 bytes before its "
                         "start; block (0,0,0) thread (0,0,0) ", at));
  s = emu->Launch(*loaded, {.grid = {1}, .block = {1}}, {uint64_t{0}, *out, 0u});
  CHECK(Msg(s) == StrCat("kernel shifted_copy: out-of-bounds global load of 4 bytes at 0x0: nearest allocation "
                         "[0x10000000000, 0x10000000190) of 400 bytes; the access is 1099511627776 bytes before its "
                         "start; block (0,0,0) thread (0,0,0) ", at));
}

TEST_CASE("out-of-bounds shared and local accesses stop the launch") {
  KernelBuilder b("shared_oob");
  Symbol<F32> tile = b.Shared<F32>("tile", 32);
  Value<U32> tid = b.TidX();
  b.Store(kShared, b.ElementAddr(tile, b.Add(tid, 1u)), b.Const<F32>(1.0f)); const int line = __LINE__;
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto loaded = LoadOrDie(*emu, k);
  absl::Status s = emu->Launch(*loaded, {.grid = {1}, .block = {32}}, {});
  CHECK(Msg(s) == StrCat("kernel shared_oob: out-of-bounds shared store of 4 bytes at shared address 128: the block "
                         "has 128 bytes of shared memory: tile at 0 (128 bytes); block (0,0,0) thread (31,0,0) at "
                         "`st.shared.f32 [%r3], %f0;` (emulator_test.cc:", line, ")"));

  KernelBuilder l("local_oob");
  Symbol<U32> scratch = l.Local<U32>("scratch", 4);
  Value<U32> idx = l.Param<U32>("idx");
  l.Store(StateSpace::kLocal, l.ElementAddr(scratch, idx), idx); const int local_line = __LINE__;
  ir::Kernel lk = FinishOrDie(l);
  auto ll = LoadOrDie(*emu, lk);
  CHECK(emu->Launch(*ll, {}, {3u}).ok());
  s = emu->Launch(*ll, {}, {4u});
  CHECK(Msg(s) == StrCat("kernel local_oob: out-of-bounds local store of 4 bytes at local address 16: each thread has "
                         "16 bytes of local memory; block (0,0,0) thread (0,0,0) at `st.local.u32 [%r2], %r0;` "
                         "(emulator_test.cc:", local_line, ")"));
}

// A kernel reading a register nothing writes (only the generic path can make one).
ir::Kernel UninitializedRead(int* line) {
  KernelBuilder b("uninit");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> never = b.Undefined<U32>("never");
  Value<U32> sum = b.Add(never, 1u); *line = __LINE__;
  b.Store(kGlobal, out, sum);
  ir::Kernel k = b.kernel();  // unverified: Finish() would reject it
  k.body.push_back(ir::Instruction{});
  return k;
}

TEST_CASE("reading a register that was never written is an error") {
  int line = 0;
  ir::Kernel k = UninitializedRead(&line);
  auto checked = MakeEmulator({.verify = false});
  auto out = Buffer<uint32_t>::Allocate(*checked, 1);
  auto loaded = LoadOrDie(*checked, k);
  absl::Status s = checked->Launch(*loaded, {}, {*out});
  CHECK(Msg(s) == StrCat("kernel uninit: read of register %r0, which was never written; block (0,0,0) thread (0,0,0) "
                         "at `add.u32 %r1, %r0, 1;` (emulator_test.cc:", line, ")"));
  // With verification (the default), Load rejects the kernel up front.
  auto verified = MakeEmulator();
  auto rejected = verified->Load(k);
  CHECK(Msg(rejected.status()) == StrCat("kernel uninit: emulator_test.cc:", line,
                                         ": add.u32 %3, %2, 1: %2 is used before it is defined (it is never defined)"));
}

TEST_CASE("what the emulator refuses: raw PTX, runaway loops, bad launches") {
  KernelBuilder r("raw");
  Value<U32> x = r.Const<U32>(1);
  Value<U32> y = r.Undefined<U32>();
  r.RawPtx("add.u32 {0}, {1}, 1;", {y}, {x}); const int raw_line = __LINE__;
  r.Store(kGlobal, r.CvtaToGlobal(r.Param<U64>("out")), y);
  ir::Kernel rk = FinishOrDie(r);
  auto emu = MakeEmulator({.max_instructions_per_thread = 1000});
  CHECK(Msg(emu->Load(rk).status()) == StrCat("kernel raw: emulator_test.cc:", raw_line,
                                              ": the emulator cannot run `add.u32 %1, %0, 1;`: raw PTX is opaque to it"));

  KernelBuilder f("forever");
  ir::Label top = f.NewLabel("top");
  f.Bind(top);
  f.Bra(top); const int loop_line = __LINE__;
  ir::Kernel fk = FinishOrDie(f);
  auto fl = LoadOrDie(*emu, fk);
  CHECK(Msg(emu->Launch(*fl, {}, {})) ==
        StrCat("kernel forever: a thread executed more than 1000 instructions (an infinite loop?); block (0,0,0) "
               "thread (0,0,0) at `bra $L0_top;` (emulator_test.cc:", loop_line, ")"));

  ir::Kernel reduce = *kernels::ReduceSumSpec{}.Build(ir::Target::kSm80);
  auto rl = LoadOrDie(*emu, reduce);
  auto buf = Buffer<float>::Allocate(*emu, 16);
  CHECK(Msg(emu->Launch(*rl, {.grid = {1}, .block = {256}}, {*buf, *buf})) ==
        "kernel reduce_sum_f32_b256 takes 3 argument(s) (x:u64, partial:u64, n:u32), got 2");
  CHECK(Msg(emu->Launch(*rl, {.grid = {1}, .block = {256}}, {*buf, *buf, 2.0f})) ==
        "kernel reduce_sum_f32_b256: param 2 'n' is u32 (4 bytes), got f32 (4 bytes)");
  // Signedness: a negative int would become a huge u32 count.
  CHECK(Msg(emu->Launch(*rl, {.grid = {1}, .block = {256}}, {*buf, *buf, -1})) ==
        "kernel reduce_sum_f32_b256: param 2 'n' is u32 (unsigned), got s32 (a signed C++ integer); pass a uint32_t");
  CHECK(Msg(emu->Launch(*rl, {.grid = {1}, .block = {256}}, {*buf, *buf, int16_t{1}})) ==
        "kernel reduce_sum_f32_b256: param 2 'n' is u32 (4 bytes), got s16 (2 bytes)");
  {
    KernelBuilder sb("signed_param");
    sb.Param<S64>("offset");
    ir::Kernel sk = FinishOrDie(sb);
    auto sl = LoadOrDie(*emu, sk);
    CHECK(Msg(emu->Launch(*sl, {}, {uint64_t{5}})) ==
          "kernel signed_param: param 0 'offset' is s64 (signed), got u64 (an unsigned C++ integer); pass an int64_t");
    CHECK(emu->Launch(*sl, {}, {int64_t{-5}}).ok());
  }
  CHECK(Msg(emu->Launch(*rl, {.grid = {1}, .block = {256}}, {*buf, 7u, 16u})) ==
        "kernel reduce_sum_f32_b256: param 1 'partial' is u64 (8 bytes), got u32 (4 bytes)");
  CHECK(Msg(emu->Launch(*rl, {.grid = {1}, .block = {128}}, {*buf, *buf, 16u})) ==
        "kernel reduce_sum_f32_b256 requires blocks of exactly 256x1x1 threads (.reqntid), got 128x1x1");
  CHECK(Msg(emu->Launch(*rl, {.grid = {0}, .block = {256}}, {*buf, *buf, 16u})) ==
        "kernel reduce_sum_f32_b256: grid 0x1x1 has a zero dimension");
  CHECK(Msg(emu->Launch(*rl, {.grid = {1}, .block = {2048}}, {*buf, *buf, 16u})) ==
        "kernel reduce_sum_f32_b256: block 2048x1x1 exceeds the limits (1024 threads; x, y <= 1024, z <= 64)");
  auto other = MakeEmulator();
  auto foreign = LoadOrDie(*other, reduce);
  CHECK(Msg(emu->Launch(*foreign, {.grid = {1}, .block = {256}}, {*buf, *buf, 16u})) ==
        "Launch: kernel reduce_sum_f32_b256 was not loaded on ptxforge CPU emulator (load it with this device's Load)");
  CHECK(Msg(emu->Free(0x1234)) == "emulator: Free(0x1234): not the start of an allocation");
  std::vector<float> host(17);
  CHECK(Msg(emu->CopyToHost(host.data(), buf->address(), 17 * 4)) ==
        "emulator: copy to the host of 68 bytes at 0x10000000000 is not inside one allocation");
  CHECK(Msg(buf->CopyTo(std::span<float>(host))) == "copy of a buffer of 16 elements into 17");
  CHECK(Msg(buf->View(10, 7).status()) == "view [10, 17) is outside a buffer view of 16 elements");
}

TEST_CASE("3-D grids and blocks see the right special registers") {
  KernelBuilder b("ids");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  // linear block id and thread id, packed: block * 1000 + thread.
  Value<U32> block = b.Mad(b.Mad(b.CtaidZ(), b.NctaidY(), b.CtaidY()), b.NctaidX(), b.CtaidX());
  Value<U32> thread = b.Mad(b.Mad(b.TidZ(), b.NtidY(), b.TidY()), b.NtidX(), b.TidX());
  Value<U32> threads = b.Mul(b.Mul(b.NtidX(), b.NtidY()), b.NtidZ());
  Value<U32> index = b.Mad(block, threads, thread);
  b.Store(kGlobal, b.ElementAddr<U32>(out, index), b.Mad(block, 1000u, thread));
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  const uint32_t blocks = 2 * 3 * 2, per_block = 4 * 2 * 3;
  auto o = Buffer<uint32_t>::Allocate(*emu, blocks * per_block);
  auto loaded = LoadOrDie(*emu, k);
  REQUIRE(emu->Launch(*loaded, {.grid = {2, 3, 2}, .block = {4, 2, 3}}, {*o}).ok());
  std::vector<uint32_t> r = *o->ToHost();
  for (uint32_t bl = 0; bl < blocks; ++bl) {
    for (uint32_t t = 0; t < per_block; ++t) CHECK(r[bl * per_block + t] == bl * 1000 + t);
  }
}

TEST_CASE("counters count what the threads did") {
  // 64 threads: mov tid, ld.param, cvta, mul.wide, add, st, ret (7 each).
  KernelBuilder b("count");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> tid = b.TidX();
  b.Store(kGlobal, b.ElementAddr<U32>(out, tid), tid);
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto o = Buffer<uint32_t>::Allocate(*emu, 64);
  auto loaded = LoadOrDie(*emu, k);
  REQUIRE(emu->Launch(*loaded, {.grid = {2}, .block = {32}}, {*o}).ok());
  const runtime::EmulatorCounters& c = emu->last_counters();
  CHECK(c.instructions == 64 * 7);
  CHECK(c.ToString() ==
        "instructions=448 (move=64 arith=128 convert=64 load=64 store=64 control=64) global_load_bytes=0 "
        "global_store_bytes=256 shared_loads=0 shared_stores=0 atomics=0 barriers=0");
}

TEST_CASE("results and counters do not depend on the number of host threads") {
  kernels::ReduceSumSpec spec{.type = ir::ScalarType::kF32, .block = 128};
  ir::Kernel k = *spec.Build(ir::Target::kSm80);
  std::mt19937_64 rng(7);
  kernels::HostBuffer x = kernels::RandomBuffer("x", ir::ScalarType::kF32, 100000, rng, -1, 1);
  std::vector<float> xs(100000);
  std::memcpy(xs.data(), x.data.data(), x.data.size());
  std::vector<std::vector<float>> results;
  std::vector<std::string> counters;
  for (int workers : {1, 2, 3}) {
    auto emu = MakeEmulator({.worker_threads = workers});
    auto in = Buffer<float>::FromHost(*emu, xs);
    auto partial = Buffer<float>::Allocate(*emu, 37);
    auto loaded = LoadOrDie(*emu, k);
    REQUIRE(emu->Launch(*loaded, {.grid = {37}, .block = {128}}, {*in, *partial, 100000u}).ok());
    results.push_back(*partial->ToHost());
    counters.push_back(emu->last_counters().ToString());
  }
  CHECK(results[0] == results[1]);
  CHECK(results[0] == results[2]);
  CHECK(counters[0] == counters[1]);
  CHECK(counters[0] == counters[2]);
}

TEST_CASE("buffer views chain launches without copies") {
  // x_{t+1} = 2 * x_t + 1 over T steps, each step reading one view of a
  // [T + 1, n] buffer and writing the next: no host copies in between.
  KernelBuilder b("step");
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> count = b.Param<U32>("n");
  Value<U32> i = b.GlobalThreadIdX();
  b.If(b.Lt(i, count), [&] {
    Value<F32> v = b.Load<F32>(kGlobal, b.ElementAddr<F32>(in, i));
    b.Store(kGlobal, b.ElementAddr<F32>(out, i), b.Fma(v, 2.0f, 1.0f));
  });
  ir::Kernel k = FinishOrDie(b);
  const uint32_t n = 50, steps = 6;
  auto emu = MakeEmulator();
  auto states = Buffer<float>::Allocate(*emu, (steps + 1) * n);
  REQUIRE(states->View(0, n)->CopyFrom(std::vector<float>(n, 1.0f)).ok());
  auto loaded = LoadOrDie(*emu, k);
  for (uint32_t t = 0; t < steps; ++t) {
    auto from = states->View(t * n, n);
    auto to = states->View((t + 1) * n, n);
    REQUIRE(emu->Launch(*loaded, {.grid = {1}, .block = {64}}, {*from, *to, n}).ok());
  }
  std::vector<float> all = *states->ToHost();
  for (uint32_t t = 0; t <= steps; ++t) {
    float expected = static_cast<float>((1u << (t + 1)) - 1);  // 1, 3, 7, ...
    for (uint32_t j = 0; j < n; ++j) REQUIRE(all[t * n + j] == expected);
  }
}

// Emits `@[!]guard mov.u32 dst, value`.
void GuardedMov(KernelBuilder& b, Value<Pred> guard, bool negated, Value<U32> dst, uint32_t value) {
  ir::Instruction mov;
  mov.op = ir::Opcode::kMov;
  mov.mods.type = ir::ScalarType::kU32;
  mov.dsts.push_back(dst.reg);
  mov.srcs.push_back(ir::Operand::Imm(ir::ScalarType::kU32, value));
  mov.guard = guard.reg;
  mov.guard_negated = negated;
  b.EmitInstruction(mov);
}

TEST_CASE("predicated instructions run only where their guard holds") {
  // out[tid] = tid odd ? 10 : (untouched); a value defined under @p may be
  // used under the same @p.
  KernelBuilder b("predicated");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> tid = b.TidX();
  Value<Pred> odd = b.Eq(b.And(tid, 1u), 1u);
  Value<U32> ten = b.Undefined<U32>("ten");
  GuardedMov(b, odd, false, ten, 10);
  ir::Instruction st;
  st.op = ir::Opcode::kSt;
  st.mods.space = kGlobal;
  st.mods.type = ir::ScalarType::kU32;
  st.srcs.push_back(ir::Operand::AddrReg(b.ElementAddr<U32>(out, tid).reg, 0));
  st.srcs.push_back(ten.reg);
  st.guard = odd.reg;
  b.EmitInstruction(st);
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto o = Buffer<uint32_t>::FromHost(*emu, std::vector<uint32_t>(4, 7));
  auto loaded = LoadOrDie(*emu, k);
  REQUIRE(emu->Launch(*loaded, {.grid = {1}, .block = {4}}, {*o}).ok());
  CHECK(*o->ToHost() == std::vector<uint32_t>{7, 10, 7, 10});

  // Under the opposite guard the value may never have been written.
  KernelBuilder c("predicated_wrong");
  Value<U32> t = c.TidX();
  Value<Pred> p = c.Eq(t, 0u);
  Value<U32> v = c.Undefined<U32>("v");
  GuardedMov(c, p, false, v, 1);
  ir::Instruction add;
  add.op = ir::Opcode::kAdd;
  add.mods.type = ir::ScalarType::kU32;
  add.dsts.push_back(c.NewReg(ir::ScalarType::kU32));
  add.srcs.push_back(v.reg);
  add.srcs.push_back(v.reg);
  add.guard = p.reg;
  add.guard_negated = true;
  c.EmitInstruction(add); const int line = __LINE__;
  CHECK(Msg(c.Finish().status()) == StrCat("kernel predicated_wrong: emulator_test.cc:", line,
                                           ": @!%1 add.u32 %3, %2, %2: %2 is used before it is defined on some path"));
}

TEST_CASE("addresses near 2^64 are out of bounds, not wrapped") {
  int line = 0;
  ir::Kernel k = ShiftedCopy(&line);
  auto emu = MakeEmulator();
  auto out = Buffer<uint32_t>::Allocate(*emu, 1);
  auto loaded = LoadOrDie(*emu, k);
  absl::Status s = emu->Launch(*loaded, {}, {~uint64_t{0} - 3, *out, 0u});
  CHECK(Msg(s) == StrCat("kernel shifted_copy: out-of-bounds global load of 4 bytes at 0xFFFFFFFFFFFFFFFC: nearest "
                         "allocation [0x10000000000, 0x10000000004) of 4 bytes; the access is 18446742974197923832 "
                         "bytes past its end; block (0,0,0) thread (0,0,0) at `ld.global.u32 %r5, [%rd5];` "
                         "(emulator_test.cc:", line, ")"));
  std::vector<uint8_t> host(32);
  CHECK(Msg(emu->CopyToHost(host.data(), ~uint64_t{0} - 15, 32)) ==
        "emulator: copy to the host of 32 bytes at 0xFFFFFFFFFFFFFFF0 is not inside one allocation");
}

TEST_CASE("the caller's floating-point environment does not leak into kernels") {
  KernelBuilder b("fenv");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  b.Store(kGlobal, out, b.Add(b.Const<F32>(1.0f), 0x1p-30f));
  b.Store(kGlobal, Address(out, 4), b.Add(b.Const<F32>(std::numeric_limits<float>::denorm_min()),
                                         std::numeric_limits<float>::denorm_min()));
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator({.worker_threads = 1});
  auto o = Buffer<float>::Allocate(*emu, 2);
  auto loaded = LoadOrDie(*emu, k);
  std::fesetround(FE_UPWARD);
  absl::Status s = emu->Launch(*loaded, {}, {*o});
  const int after = std::fegetround();
  std::fesetround(FE_TONEAREST);
  REQUIRE(s.ok());
  CHECK(after == FE_UPWARD);  // restored for the caller
  std::vector<float> r = *o->ToHost();
  CHECK(r[0] == 1.0f);
  CHECK(r[1] == 2 * std::numeric_limits<float>::denorm_min());
}

// `threads` threads: warp w waits at bar.sync 1, 64; then stores 1.
ir::Kernel CountedBarrier(int* line) {
  KernelBuilder b("counted_barrier");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  b.BarSync(1, 64); *line = __LINE__;
  b.Store(kGlobal, b.ElementAddr<U32>(out, b.TidX()), b.Const<U32>(1));
  return FinishOrDie(b);
}

TEST_CASE("bar.sync with a count waits for that many threads' worth of warps") {
  int line = 0;
  ir::Kernel k = CountedBarrier(&line);
  auto emu = MakeEmulator();
  auto o = Buffer<uint32_t>::Allocate(*emu, 96);
  auto loaded = LoadOrDie(*emu, k);
  // 48 threads are two warps: 64 threads' worth.
  CHECK(emu->Launch(*loaded, {.grid = {1}, .block = {48}}, {*o}).ok());
  // 96 threads: the first two warps pass, the third waits for two more.
  absl::Status s = emu->Launch(*loaded, {.grid = {1}, .block = {96}}, {*o});
  CHECK(Msg(s) == StrCat("kernel counted_barrier: deadlock in block (0,0,0): threads 64-95 wait at `bar.sync 1, 64;` "
                         "(emulator_test.cc:", line, "); threads 0-63 exited"));
}

TEST_CASE("activemask and shuffles in divergent code") {
  // Lanes 0-15 take one branch: activemask there is 0x0000FFFF and a shuffle
  // with that mask works; lanes 16-31 shuffle with the same full mask from a
  // different instruction (allowed on sm_70+).
  KernelBuilder b("divergent");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> lane = b.LaneId();
  Value<U64> slot = b.ElementAddr<U32>(out, b.Mul(lane, 2u));
  b.IfElse(
      b.Lt(lane, 16u),
      [&] {
        Value<U32> mask = b.ActiveMask();
        b.Store(kGlobal, slot, mask);
        b.Store(kGlobal, Address(slot, 4), b.Shfl(ir::ShflMode::kBfly, lane, 1u, 31u, 0x0000FFFFu));
      },
      [&] {
        b.Store(kGlobal, slot, b.ActiveMask());
        b.Store(kGlobal, Address(slot, 4), b.Shfl(ir::ShflMode::kBfly, lane, 1u, 31u, 0xFFFF0000u));
      });
  b.Store(kGlobal, Address(out, 256), b.ShflIdx(b.Add(lane, 100u), 3u));
  ir::Kernel k = FinishOrDie(b);
  std::vector<uint32_t> r = RunToU32(k, 65, {.grid = {1}, .block = {32}});
  for (uint32_t l = 0; l < 32; ++l) {
    INFO("lane " << l);
    CHECK(r[2 * l] == (l < 16 ? 0x0000FFFFu : 0xFFFF0000u));
    CHECK(r[2 * l + 1] == (l ^ 1));
  }
  CHECK(r[64] == 103);
}

TEST_CASE("a shuffle from a lane outside the member mask gives an undefined value, not an error") {
  KernelBuilder b("outside");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> lane = b.LaneId();
  Value<U32> v = b.Shfl(ir::ShflMode::kDown, lane, 1u, 31u, 0x0000FFFFu);  // lane 15 reads lane 16
  b.Store(kGlobal, b.ElementAddr<U32>(out, lane), v);
  ir::Kernel k = FinishOrDie(b);
  // A block of 16 threads: the mask is exactly the block.
  std::vector<uint32_t> r = RunToU32(k, 16, {.grid = {1}, .block = {16}});
  for (uint32_t l = 0; l < 15; ++l) CHECK(r[l] == l + 1);
  CHECK(r[15] == 0xFFFFFFFFu);
}

TEST_CASE("malformed IR is an error even without the verifier") {
  KernelBuilder b("malformed");
  b.Const<U32>(1);
  ir::Kernel k = b.kernel();
  ir::Instruction add;
  add.op = ir::Opcode::kAdd;
  add.mods.type = ir::ScalarType::kU32;
  add.dsts.push_back(ir::Reg{static_cast<uint32_t>(k.regs.size())});
  k.regs.push_back(ir::RegInfo{ir::ScalarType::kU32});
  add.srcs.push_back(ir::Reg{0});  // x (the builder's Values carry its tag); one source: add takes two
  k.body.push_back(add);
  k.body.push_back(ir::Instruction{});
  auto emu = MakeEmulator({.verify = false});
  // Unverified kernels still get ir::CheckWellFormed, the structural check
  // the verifier and the builder share.
  CHECK(Msg(emu->Load(k).status()) == "kernel malformed: instruction 1: add.u32 %1, %0: add takes 1 destination(s) "
                                      "and 2 source(s), got 1 and 1");
  k.body[1].srcs.push_back(ir::Reg{1000000});
  CHECK(Msg(emu->Load(k).status()) == "kernel malformed: instruction 1: add.u32 %1, %0, %1000000: operand 2 is not a "
                                      "register of this kernel");

  // ld.param must read a param whole: 8 bytes of a u32 param is rejected by
  // the verifier and, unverified, by the structural check, with one message.
  KernelBuilder p("param_size");
  Value<U64> out = p.CvtaToGlobal(p.Param<U64>("out"));
  Value<U32> n = p.Param<U32>("n"); const int param_line = __LINE__;
  p.Store(kGlobal, out, n);
  ir::Kernel pk = p.kernel();
  pk.body[2].mods.type = ir::ScalarType::kU64;  // ld.param.u64 from n
  pk.regs[pk.body[2].dsts[0].id].type = ir::ScalarType::kU64;
  pk.body.push_back(ir::Instruction{});
  CHECK(Msg(MakeEmulator()->Load(pk).status()) ==
        StrCat("kernel param_size: emulator_test.cc:", param_line, ": ld.param.u64 %2, [n]: ld.param reads 8 bytes at "
               "offset 0 of param 'n', which is u32 (4 bytes); read a param whole, with its own size"));
  CHECK(Msg(emu->Load(pk).status()) == Msg(MakeEmulator()->Load(pk).status()));
}

TEST_CASE("local memory frames are aligned for every thread") {
  KernelBuilder b("local_frames");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U64> wide = b.Local<U64>("wide", 1, 8);
  Symbol<U32> narrow = b.Local<U32>("narrow", 1, 4);
  Value<U32> tid = b.TidX();
  b.Store(StateSpace::kLocal, narrow, tid);
  b.Store(StateSpace::kLocal, wide, b.Cvt<U64>(tid));
  b.Red<U64>(ir::AtomOp::kAdd, kGlobal, out, b.Load<U64>(StateSpace::kLocal, wide));
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto o = Buffer<uint64_t>::FromHost(*emu, std::vector<uint64_t>{0});
  auto loaded = LoadOrDie(*emu, k);
  REQUIRE(emu->Launch(*loaded, {.grid = {1}, .block = {8}}, {*o}).ok());
  CHECK((*o->ToHost())[0] == 28);
}

TEST_CASE("atom.add.f32 on global memory flushes subnormals") {
  KernelBuilder b("flush_add");
  Value<U64> g = b.CvtaToGlobal(b.Param<U64>("g"));
  Symbol<F32> s = b.Shared<F32>("s", 1);
  b.Store(kShared, s, b.Const<F32>(0.0f));
  const float tiny = std::numeric_limits<float>::denorm_min();
  b.Red<F32>(ir::AtomOp::kAdd, kGlobal, g, b.Const<F32>(tiny));
  b.Red<F32>(ir::AtomOp::kAdd, kShared, s, b.Const<F32>(tiny));
  b.Store(kGlobal, Address(g, 4), b.Load<F32>(kShared, s));
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto o = Buffer<float>::FromHost(*emu, std::vector<float>{0, 0});
  auto loaded = LoadOrDie(*emu, k);
  REQUIRE(emu->Launch(*loaded, {}, {*o}).ok());
  CHECK(*o->ToHost() == std::vector<float>{0.0f, tiny});
}

// Issue 11 item 19: forms the verifier used to refuse, built by hand (the
// builder materialises immediates in registers): st and cvt of immediates,
// ld.param vectors, atom.cas.b16, atom/red .add.noftz on f16x2 and bf16x2.
// An H100 running the same PTX wrote the same words.
TEST_CASE("st and cvt of immediates, ld.param vectors, 16-bit cas and packed-half atomics") {
  using ir::Opcode;
  using ir::Operand;
  using T = ir::ScalarType;
  ir::Kernel k;
  k.name = "item19";
  k.target = ir::Target::kSm90;
  auto reg = [&](T t) {
    return k.AddReg(t);
  };
  auto add = [&](Opcode op, ir::Modifiers m, std::vector<ir::Reg> dsts, std::vector<Operand> srcs) {
    ir::Instruction inst;
    inst.op = op;
    inst.mods = m;
    inst.dsts.assign(dsts.begin(), dsts.end());
    inst.srcs.assign(srcs.begin(), srcs.end());
    k.body.push_back(std::move(inst));
  };
  auto mem = [](T t, StateSpace space, uint8_t vec = 1) {
    ir::Modifiers m{.type = t, .space = space};
    m.vec = vec;
    return m;
  };
  auto imm = [](T t, uint64_t bits) { return Operand::Imm(t, bits); };
  k.params = {{"out", T::kU64}, {"pair", T::kU64}, {"word", T::kU32}};
  ir::Reg o = reg(T::kU64), a = reg(T::kU32), b = reg(T::kU32);
  std::vector<ir::Reg> bytes = {reg(T::kU8), reg(T::kU8), reg(T::kU8), reg(T::kU8)};
  add(Opcode::kLd, mem(T::kU64, StateSpace::kParam), {o}, {Operand::AddrParam(0)});
  add(Opcode::kLd, mem(T::kU32, StateSpace::kParam, 2), {a, b}, {Operand::AddrParam(1)});  // the u64 in halves
  add(Opcode::kLd, mem(T::kU8, StateSpace::kParam, 4), bytes, {Operand::AddrParam(2)});    // the u32 in bytes
  add(Opcode::kSt, mem(T::kU32, kGlobal, 2), {}, {Operand::AddrReg(o, 0), a, b});
  add(Opcode::kSt, mem(T::kU32, kGlobal, 2), {}, {Operand::AddrReg(o, 8), imm(T::kU32, 7), imm(T::kU32, 0xFFFFFFFF)});
  add(Opcode::kSt, mem(T::kF32, kGlobal), {}, {Operand::AddrReg(o, 16), imm(T::kF32, 0x3FC00000)});  // 1.5
  add(Opcode::kSt, mem(T::kU8, kGlobal, 4), {}, {Operand::AddrReg(o, 20), bytes[0], bytes[1], bytes[2], bytes[3]});
  ir::Reg f = reg(T::kF32), s = reg(T::kS32), h = reg(T::kU16);
  add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = T::kS32, .rounding = ir::Rounding::kRn}, {f},
      {imm(T::kS32, 0xFFFFFFFD)});  // -3
  add(Opcode::kCvt, ir::Modifiers{.type = T::kS32, .type2 = T::kF64, .rounding = ir::Rounding::kRzi}, {s},
      {imm(T::kF64, std::bit_cast<uint64_t>(-2.5))});
  add(Opcode::kCvt, ir::Modifiers{.type = T::kU16, .type2 = T::kU32}, {h}, {imm(T::kU32, 70000)});  // truncated
  add(Opcode::kSt, mem(T::kF32, kGlobal), {}, {Operand::AddrReg(o, 24), f});
  add(Opcode::kSt, mem(T::kS32, kGlobal), {}, {Operand::AddrReg(o, 28), s});
  add(Opcode::kSt, mem(T::kU16, kGlobal), {}, {Operand::AddrReg(o, 32), h});
  // atom.cas.b16 at out+34 (0): the first swaps in 0xBEEF, the second (expecting 1) does not swap.
  ir::Reg old1 = reg(T::kB16), old2 = reg(T::kB16);
  ir::Modifiers cas{.type = T::kB16, .space = kGlobal, .atom = ir::AtomOp::kCas};
  add(Opcode::kAtom, cas, {old1}, {Operand::AddrReg(o, 34), imm(T::kB16, 0), imm(T::kB16, 0xBEEF)});
  add(Opcode::kAtom, cas, {old2}, {Operand::AddrReg(o, 34), imm(T::kB16, 1), imm(T::kB16, 0x1234)});
  add(Opcode::kSt, mem(T::kB16, kGlobal), {}, {Operand::AddrReg(o, 36), old2});
  add(Opcode::kSt, mem(T::kB16, kGlobal), {}, {Operand::AddrReg(o, 38), old1});
  // Packed-half adds, lane by lane: f16x2 (1, 2) + (0.5, -3) and bf16x2 (1, 256) + (1, 1).
  ir::Reg x = reg(T::kB32), y = reg(T::kB32), old = reg(T::kF16x2);
  add(Opcode::kMov, ir::Modifiers{.type = T::kB32}, {x}, {imm(T::kB32, 0xC2003800)});
  add(Opcode::kMov, ir::Modifiers{.type = T::kB32}, {y}, {imm(T::kB32, 0x3F803F80)});
  ir::Modifiers add_f16x2{.type = T::kF16x2, .space = kGlobal, .atom = ir::AtomOp::kAdd};
  add_f16x2.noftz = true;
  ir::Modifiers add_bf16x2{.type = T::kBF16x2, .space = StateSpace::kGeneric, .atom = ir::AtomOp::kAdd};
  add_bf16x2.noftz = true;
  add(Opcode::kAtom, add_f16x2, {old}, {Operand::AddrReg(o, 40), x});
  add(Opcode::kSt, mem(T::kB32, kGlobal), {}, {Operand::AddrReg(o, 44), old});
  add(Opcode::kRed, add_bf16x2, {}, {Operand::AddrReg(o, 48), y});
  add(Opcode::kRet, {}, {}, {});
  REQUIRE(Msg(ir::VerifyKernel(k)) == "");

  auto emu = MakeEmulator();
  std::vector<uint32_t> init(13, 0);
  init[10] = 0x40003C00;  // f16x2 (1, 2)
  init[12] = 0x43803F80;  // bf16x2 (1, 256)
  auto out = Buffer<uint32_t>::FromHost(*emu, init);
  auto loaded = LoadOrDie(*emu, k);
  absl::Status st = emu->Launch(*loaded, {}, {*out, uint64_t{0x0000000200000001}, uint32_t{0x04030201}});
  INFO(st.ToString());
  REQUIRE(st.ok());
  CHECK(*out->ToHost() == std::vector<uint32_t>{
                              1, 2,                    // ld.param.v2.u32 of a u64
                              7, 0xFFFFFFFF,           // st.global.v2.u32 of immediates
                              0x3FC00000,              // st.global.f32 of 1.5
                              0x04030201,              // ld.param.v4.u8 of a u32, stored as st.v4.u8
                              0xC0400000,              // cvt.rn.f32.s32 of -3
                              0xFFFFFFFE,              // cvt.rzi.s32.f64 of -2.5
                              0xBEEF0000 | 4464,       // cvt.u16.u32 of 70000; the swapped-in 0xBEEF
                              0x0000BEEF,              // the failed cas saw 0xBEEF; the first saw 0
                              0xBC003E00,              // (1.5, -1)
                              0x40003C00,              // atom returned the old pair
                              0x43804000});            // (2, 257 -> 256: a tie, to even)
}

TEST_CASE("RunProblem reports wrong numbers without failing") {
  kernels::VectorAddSpec spec;
  ir::Kernel k = *spec.Build(ir::Target::kSm80);
  auto family = kernels::FindFamily("vector_add");
  std::vector<std::pair<std::string, std::string>> shape = {{"n", "3"}};
  auto problem = family->MakeProblem(*family->MakeConfig(shape), 1);
  REQUIRE(problem.ok());
  // Claim c[1] should be 1 more than it is.
  kernels::HostBuffer& c = problem->buffers[2];
  std::vector<double> expected = kernels::AsDoubles(c.type, c.expected);
  expected[1] += 1;
  c.expected = kernels::FromDoubles(c.type, expected);
  auto emu = MakeEmulator();
  auto result = kernels::RunProblem(*emu, k, *problem);
  REQUIRE(result.ok());
  CHECK_FALSE(result->ok());
  CHECK(result->outputs[0].comparison.mismatches == 1);
  CHECK(result->Report() == StrCat("c: 3 elements, max abs error 1, max rel error ", result->outputs[0].comparison.max_rel_error,
                                   " (tolerance 1e-05): 1 mismatches, first c[1]: got ", expected[1] - 1, ", expected ",
                                   expected[1], "\n"));
}

TEST_CASE("CompareOutput: equal values match at any magnitude, others by relative error") {
  kernels::HostBuffer c;
  c.name = "c";
  c.type = ir::ScalarType::kF32;
  c.tolerance = 1e-5;
  c.magnitude = 0;  // an all-zero result (a GEMM with k = 0 and beta = 0) has no scale
  const double inf = std::numeric_limits<double>::infinity();
  c.expected = kernels::FromDoubles(c.type, std::vector<double>{0.0, inf, -inf, 2.0});
  kernels::Comparison same = kernels::CompareOutput(c, kernels::FromDoubles(c.type, std::vector<double>{-0.0, inf, -inf, 2.0}));
  CHECK(same.mismatches == 0);
  CHECK(same.max_abs_error == 0);
  CHECK(same.max_rel_error == 0);
  kernels::Comparison off = kernels::CompareOutput(c, kernels::FromDoubles(c.type, std::vector<double>{0.5, -inf, -inf, 2.00001}));
  CHECK(off.mismatches == 2);  // any error on a zero of magnitude 0, and the wrong infinity; 2.00001 is within 1e-5
  CHECK(off.first_mismatch == "c[0]: got 0.5, expected 0");
}

TEST_CASE("every registry kernel matches its reference on the emulator") {
  // Default configurations plus the type variants each family supports.
  const std::vector<std::vector<std::pair<std::string, std::string>>> variants = {
      {}, {{"type", "f64"}}, {{"type", "s32"}}, {{"type", "u64"}}, {{"type", "f16"}}, {{"block", "64"}, {"n", "777"}},
  };
  // Approximate instructions at their documented worst error: a family's
  // tolerance must hold on hardware. A data race fails the launch.
  auto emu = MakeEmulator({.approx_worst_error = true, .race_check = true});
  int runs = 0;
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    for (const auto& overrides : variants) {
      auto config = family->MakeConfig(overrides);
      if (!config.ok()) continue;  // a setting this family does not have
      auto kernel = family->Build(*config, ir::Target::kSm80);
      if (!kernel.ok()) continue;  // a type this family does not offer
      INFO(kernel->name);
      passes::Pipeline pipeline = passes::Pipeline::Standard();
      REQUIRE(pipeline.Run(*kernel).ok());
      auto problem = family->MakeProblem(*config, 1);
      REQUIRE(problem.ok());
      auto result = kernels::RunProblem(*emu, *kernel, *problem);
      INFO(result.status().ToString());
      REQUIRE(result.ok());
      INFO(result->Report());
      CHECK(result->ok());
      ++runs;
    }
  }
  CHECK(runs >= 2 * 5);
}

}  // namespace
}  // namespace ptxforge
