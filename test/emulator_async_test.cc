// cp.async on the emulator: tiles copied with a zero-filled edge, groups
// landing at wait_group/wait_all, the memcheck errors for touching bytes in
// flight, and the race checker seeing the copy where it lands; bar.arrive
// with named barriers (producer/consumer) and fence.
#include <cstdint>
#include <string>
#include <vector>

#include "builder/memory.h"
#include "ir/strings.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using runtime::Buffer;
using runtime::MakeEmulator;
using testing::FinishOrDie;
using testing::LoadOrDie;
using testing::Msg;

// 32 threads copy a 32 x 4 f32 tile from `src` (n floats) with 16-byte
// cp.asyncs; the part past n is zero-filled through src-size (partly for
// the thread at the edge, wholly past it). After wait_group 0 and a barrier
// each thread writes out the row another thread copied.
TEST_CASE("cp.async copies a tile with a zero-filled edge, it lands at wait_group") {
  KernelBuilder b("tile_copy", ir::Target::kSm80);
  Ptr<F32, Global> src = GlobalParam<F32>(b, "src");
  Ptr<F32, Global> out = GlobalParam<F32>(b, "out");
  Value<U32> n = b.Param<U32>("n");
  Ptr<F32, Shared> tile = SharedArray<F32>(b, "tile", 128, 16);
  Value<U32> tid = b.TidX();
  Value<U32> first = b.Mul(tid, 4u);
  // Floats of this row inside the source: min(max(n - first, 0), 4), in bytes.
  Value<U32> left = b.Sub(b.Max(n, first), first);
  Value<U32> bytes = b.Mul(b.Min(left, 4u), 4u);
  // Past the edge the source address stays at the start (src-size 0 reads nothing).
  Value<U32> from = b.Select(b.Lt(first, n), first, 0u);
  CpAsync(tile.At(first), src.At(from), 16, {.src_size = bytes});
  b.CpAsyncCommitGroup();
  b.CpAsyncWaitGroup(0);
  b.BarSync();
  Value<U32> row = b.Mul(b.Sub(b.Const<U32>(31), tid), 4u);
  for (uint32_t k = 0; k < 4; ++k) out.At(b.Add(first, k)).Store(tile.Load(b.Add(row, k)));
  b.Ret();
  ir::Kernel kernel = FinishOrDie(b);
  auto emu = MakeEmulator();
  std::vector<float> host(92);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i + 1);
  auto in = Buffer<float>::FromHost(*emu, host);
  auto result = Buffer<float>::Allocate(*emu, 128);
  REQUIRE(in.ok());
  REQUIRE(result.ok());
  auto loaded = LoadOrDie(*emu, kernel);
  const uint32_t count = 90;  // row 22 holds 2 floats, rows 23.. none
  REQUIRE(Msg(emu->Launch(*loaded, {.grid = {1}, .block = {32}}, {*in, *result, count})) == "");
  std::vector<float> got = *result->ToHost();
  std::vector<float> want(128);
  for (uint32_t t = 0; t < 32; ++t) {
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t i = (31 - t) * 4 + k;
      want[t * 4 + k] = i < count ? static_cast<float>(i + 1) : 0.0f;
    }
  }
  CHECK(got == want);
  // Thread 9 reads row 22, the edge: 89, 90 and two zero-filled floats.
  CHECK(std::vector<float>(got.begin() + 36, got.begin() + 40) == std::vector<float>{89, 90, 0, 0});
  CHECK(got[0] == 0.0f);  // thread 0 reads row 31, wholly past the edge (src-size 0)
  CHECK(emu->last_counters().global_load_bytes == count * 4);
  // The same kernel under the race checker: the barrier orders the landing
  // before the other threads' reads.
  auto checked = MakeEmulator({.race_check = true});
  auto in2 = Buffer<float>::FromHost(*checked, host);
  auto result2 = Buffer<float>::Allocate(*checked, 128);
  auto loaded2 = LoadOrDie(*checked, kernel);
  CHECK(Msg(checked->Launch(*loaded2, {.grid = {1}, .block = {32}}, {*in2, *result2, count})) == "");
  CHECK(*result2->ToHost() == want);
}

// Thread 0 copies src[0..3] into tile[0..3] in group 0 and src[4..7] into
// tile[4..7] in group 1, waits with `wait`, overwrites src[0] (its copy has
// landed) and copies the tile out.
struct Groups {
  ir::Kernel kernel;
  int copy2_line = 0, read_line = 0;
};

template <typename Wait>
Groups TwoGroups(std::string name, Wait wait) {
  Groups g;
  KernelBuilder b(name, ir::Target::kSm80);
  Ptr<F32, Global> src = GlobalParam<F32>(b, "src");
  Ptr<F32, Global> out = GlobalParam<F32>(b, "out");
  Ptr<F32, Shared> tile = SharedArray<F32>(b, "tile", 8, 16);
  CpAsync(tile, src, 16);
  b.CpAsyncCommitGroup();
  CpAsync(tile.At(4u), src.At(4u), 16); g.copy2_line = __LINE__;
  b.CpAsyncCommitGroup();
  wait(b);
  src.Store(b.Const<F32>(-1.0f));
  for (uint32_t k = 0; k < 8; ++k) {
    out.At(k).Store(tile.Load(k)); g.read_line = __LINE__;
  }
  b.CpAsyncWaitAll();
  b.Ret();
  g.kernel = FinishOrDie(b);
  return g;
}

TEST_CASE("cp.async groups: wait_group n leaves the n newest groups in flight") {
  auto emu = MakeEmulator();
  const std::vector<float> values = {1, 2, 3, 4, 5, 6, 7, 8};
  auto src = Buffer<float>::FromHost(*emu, values);
  auto out = Buffer<float>::Allocate(*emu, 8);
  REQUIRE(src.ok());
  REQUIRE(out.ok());
  for (bool all : {true, false}) {
    Groups g = TwoGroups(all ? "wait_all" : "wait_group_0", [&](KernelBuilder& b) {
      all ? b.CpAsyncWaitAll() : b.CpAsyncWaitGroup(0);
    });
    auto loaded = LoadOrDie(*emu, g.kernel);
    REQUIRE(Msg(emu->Launch(*loaded, {}, {*src, *out})) == "");
    CHECK(*out->ToHost() == values);
    REQUIRE(src->CopyFrom(values).ok());
  }
  // wait_group 1: group 0 landed and reads back; group 1 is still in flight.
  Groups g = TwoGroups("wait_one", [](KernelBuilder& b) { b.CpAsyncWaitGroup(1); });
  auto loaded = LoadOrDie(*emu, g.kernel);
  REQUIRE(out->CopyFrom(std::vector<float>(8, 0.0f)).ok());
  CHECK(Msg(emu->Launch(*loaded, {}, {*src, *out})) ==
        StrCat("kernel wait_one: shared load of 4 bytes at shared address 16 reads bytes that a cp.async in flight "
               "will write (shared address 16): this thread issued `cp.async.ca.shared.global [%r0+16], [%rd3+16], 16;` "
               "(emulator_async_test.cc:", g.copy2_line, ") and has not waited for it (cp.async.wait_group or "
               "cp.async.wait_all); block (0,0,0) thread (0,0,0) at `ld.shared.f32 %f5, [%r0+16];` "
               "(emulator_async_test.cc:", g.read_line, ")"));
  CHECK(*out->ToHost() == std::vector<float>{1, 2, 3, 4, 0, 0, 0, 0});
}

// A one-thread-or-two kernel around a 16-byte cp.async into tile[4*slot]
// from src[4*slot] (slot: a param), for the memcheck messages.
struct Misuse {
  ir::Kernel kernel;
  int copy_line = 0, access_line = 0, ret_line = 0;
};

TEST_CASE("memcheck: touching bytes of a cp.async in flight, misaligned copies, src-size past cp-size") {
  auto emu = MakeEmulator();
  auto src = Buffer<float>::FromHost(*emu, std::vector<float>(16, 2.0f));
  REQUIRE(src.ok());
  const std::string issued = "`cp.async.ca.shared.global [%r2], [%rd3], 16, %r3;` (emulator_async_test.cc:";
  auto kernel = [](std::string name, auto&& body) {
    KernelBuilder b(name, ir::Target::kSm80);
    Ptr<F32, Global> src = GlobalParam<F32>(b, "src");
    Value<U32> slot = b.Param<U32>("slot");
    Value<U32> size = b.Param<U32>("size");
    Ptr<F32, Shared> tile = SharedArray<F32>(b, "tile", 16, 16);
    Misuse m;
    body(b, src, slot, size, tile, m);
    b.Ret(); m.ret_line = __LINE__;
    m.kernel = FinishOrDie(b);
    return m;
  };
  // The issuing thread reads its destination before waiting.
  Misuse read = kernel("read_early", [](KernelBuilder& b, auto src, auto slot, auto size, auto tile, Misuse& m) {
    CpAsync(tile.At(slot), src.At(slot), 16, {.src_size = size}); m.copy_line = __LINE__;
    Value<F32> v = tile.Load(2u); m.access_line = __LINE__;
    b.CpAsyncWaitAll();
    tile.Store(v);
  });
  auto loaded = LoadOrDie(*emu, read.kernel);
  CHECK(Msg(emu->Launch(*loaded, {}, {*src, 0u, 16u})) ==
        StrCat("kernel read_early: shared load of 4 bytes at shared address 8 reads bytes that a cp.async in flight "
               "will write (shared address 8): this thread issued ", issued, read.copy_line, ") and has not waited "
               "for it (cp.async.wait_group or cp.async.wait_all); block (0,0,0) thread (0,0,0) at `ld.shared.f32 "
               "%f0, [%r1+8];` (emulator_async_test.cc:", read.access_line, ")"));
  // Misaligned destination (slot 1: 4 bytes in) and source; src-size 20.
  CHECK(Msg(emu->Launch(*loaded, {}, {*src, 1u, 16u})) ==
        StrCat("kernel read_early: misaligned shared cp.async destination of 16 bytes at shared address 4: the access "
               "needs 16-byte alignment; block (0,0,0) thread (0,0,0) at ", issued, read.copy_line, ")"));
  CHECK(Msg(emu->Launch(*loaded, {}, {src->address() + 4, 0u, 16u})) ==
        StrCat("kernel read_early: misaligned global cp.async source of 16 bytes at 0x", Hex{src->address() + 4},
               ": the access needs 16-byte alignment; block (0,0,0) thread (0,0,0) at ", issued, read.copy_line, ")"));
  CHECK(Msg(emu->Launch(*loaded, {}, {*src, 0u, 20u})) ==
        StrCat("kernel read_early: cp.async src-size 20 is larger than the cp-size 16; block (0,0,0) thread (0,0,0) "
               "at ", issued, read.copy_line, ")"));
  // Overwriting the destination before the wait, by the issuing thread.
  Misuse write = kernel("write_early", [](KernelBuilder& b, auto src, auto slot, auto size, auto tile, Misuse& m) {
    CpAsync(tile.At(slot), src.At(slot), 16, {.src_size = size}); m.copy_line = __LINE__;
    tile.At(3u).Store(1.0f); m.access_line = __LINE__;
    b.CpAsyncWaitAll();
  });
  loaded = LoadOrDie(*emu, write.kernel);
  CHECK(Msg(emu->Launch(*loaded, {}, {*src, 0u, 0u})) ==
        StrCat("kernel write_early: shared store of 4 bytes at shared address 12 overwrites bytes that a cp.async in "
               "flight will write (shared address 12): this thread issued ", issued, write.copy_line, ") and has not "
               "waited for it (cp.async.wait_group or cp.async.wait_all); block (0,0,0) thread (0,0,0) at "
               "`st.shared.f32 [%r1+12], %f0;` (emulator_async_test.cc:", write.access_line, ")"));
  // A second cp.async onto the bytes of one in flight.
  Misuse twice = kernel("copy_twice", [](KernelBuilder& b, auto src, auto slot, auto size, auto tile, Misuse& m) {
    CpAsync(tile.At(slot), src.At(slot), 16, {.src_size = size}); m.copy_line = __LINE__;
    CpAsync(tile.At(2u), src, 8); m.access_line = __LINE__;
    b.CpAsyncWaitAll();
  });
  loaded = LoadOrDie(*emu, twice.kernel);
  CHECK(Msg(emu->Launch(*loaded, {}, {*src, 0u, 16u})) ==
        StrCat("kernel copy_twice: cp.async of 8 bytes to shared address 8 overwrites bytes that a cp.async in flight "
               "will write (shared address 8): this thread issued ", issued, twice.copy_line, ") and has not waited "
               "for it (cp.async.wait_group or cp.async.wait_all); block (0,0,0) thread (0,0,0) at "
               "`cp.async.ca.shared.global [%r1+8], [%rd1], 8;` (emulator_async_test.cc:", twice.access_line, ")"));
  // Another thread reads the bytes after a barrier but before the issuing
  // thread waited for them.
  Misuse other = kernel("other_early", [](KernelBuilder& b, auto src, auto slot, auto size, auto tile, Misuse& m) {
    Value<U32> tid = b.TidX();
    b.If(b.Eq(tid, 0u), [&] { CpAsync(tile.At(slot), src.At(slot), 16, {.src_size = size}); m.copy_line = __LINE__; });
    b.BarSync();
    b.If(b.Eq(tid, 1u), [&] { tile.Store(tile.Load(1u)); m.access_line = __LINE__; });
    b.BarSync();
    b.CpAsyncWaitAll();
  });
  loaded = LoadOrDie(*emu, other.kernel);
  const std::string msg = Msg(emu->Launch(*loaded, {.block = {2}}, {*src, 0u, 16u}));
  CHECK(msg == StrCat("kernel other_early: shared load of 4 bytes at shared address 4 reads bytes that a cp.async in "
                      "flight will write (shared address 4): thread (0,0,0) issued `cp.async.ca.shared.global [%r4], "
                      "[%rd3], 16, %r2;` (emulator_async_test.cc:", other.copy_line, ") and has not waited for it "
                      "(cp.async.wait_group or cp.async.wait_all); block (0,0,0) thread (1,0,0) at `ld.shared.f32 "
                      "%f0, [%r1+4];` (emulator_async_test.cc:", other.access_line, ")"));
  // Overwriting the global source of a copy in flight: the ISA orders the
  // copy's read only at the wait, so it may read either value. Here another
  // thread writes after a barrier.
  Misuse source = kernel("source_early", [](KernelBuilder& b, auto src, auto slot, auto size, auto tile, Misuse& m) {
    Value<U32> tid = b.TidX();
    b.If(b.Eq(tid, 0u), [&] { CpAsync(tile.At(slot), src.At(slot), 16, {.src_size = size}); m.copy_line = __LINE__; });
    b.BarSync();
    b.If(b.Eq(tid, size), [&] { src.At(2u).Store(0.0f); m.access_line = __LINE__; });
    b.BarSync();
    b.If(b.Eq(tid, 0u), [&] { b.CpAsyncWaitAll(); });
  });
  loaded = LoadOrDie(*emu, source.kernel);
  const std::string source_issued =
      StrCat("`cp.async.ca.shared.global [%r4], [%rd3], 16, %r2;` (emulator_async_test.cc:", source.copy_line, ")");
  // size 16: thread 16 of 17 writes src[2] (bytes 8..11), which the copy reads.
  CHECK(Msg(emu->Launch(*loaded, {.block = {17}}, {*src, 0u, 16u})) ==
        StrCat("kernel source_early: global store of 4 bytes overwrites bytes that a cp.async in flight reads (global "
               "address 0x", Hex{src->address() + 8}, "): thread (0,0,0) issued ", source_issued, " and has not "
               "waited for it (cp.async.wait_group or cp.async.wait_all), so the copy may read the old or the new "
               "bytes; block (0,0,0) thread (16,0,0) at `st.global.f32 [%rd1+8], %f0;` (emulator_async_test.cc:",
               source.access_line, ")"));
  // size 8: the copy reads src[0..1] only (the rest is zero-filled), so thread 8 may write src[2].
  CHECK(Msg(emu->Launch(*loaded, {.block = {9}}, {*src, 0u, 8u})) == "");
  REQUIRE(src->CopyFrom(std::vector<float>(16, 2.0f)).ok());
  // A thread may not end with copies in flight.
  Misuse leak = kernel("never_waits", [](KernelBuilder& b, auto src, auto slot, auto size, auto tile, Misuse& m) {
    CpAsync(tile.At(slot), src.At(slot), 16, {.src_size = size}); m.copy_line = __LINE__;
    b.CpAsyncCommitGroup();
  });
  loaded = LoadOrDie(*emu, leak.kernel);
  CHECK(Msg(emu->Launch(*loaded, {}, {*src, 0u, 8u})) ==
        StrCat("kernel never_waits: the thread ends with 1 cp.async copy in flight (the first: ", issued,
               leak.copy_line, ")); wait for them (cp.async.wait_all) before the thread ends; block (0,0,0) thread "
               "(0,0,0) at `ret;` (emulator_async_test.cc:", leak.ret_line, ")"));
}

TEST_CASE("the race checker sees a cp.async's write where it lands") {
  // Thread 0 copies and waits; thread 1 reads the bytes with no barrier after
  // the wait: a race (on hardware it may see the bytes before they land).
  auto build = [](bool barrier, int* copy_line, int* read_line) {
    KernelBuilder b(barrier ? "ordered" : "unordered", ir::Target::kSm80);
    Ptr<F32, Global> src = GlobalParam<F32>(b, "src");
    Ptr<F32, Global> out = GlobalParam<F32>(b, "out");
    Ptr<F32, Shared> tile = SharedArray<F32>(b, "tile", 4, 16);
    Value<U32> tid = b.TidX();
    b.If(b.Eq(tid, 0u), [&] {
      CpAsync(tile, src, 16); *copy_line = __LINE__;
      b.CpAsyncWaitAll();
    });
    if (barrier) b.BarSync();
    b.If(b.Eq(tid, 1u), [&] { out.Store(tile.Load(2u)); *read_line = __LINE__; });
    b.Ret();
    return FinishOrDie(b);
  };
  auto emu = MakeEmulator({.race_check = true});
  auto src = Buffer<float>::FromHost(*emu, std::vector<float>{1, 2, 3, 4});
  auto out = Buffer<float>::Allocate(*emu, 1);
  int copy_line = 0, read_line = 0;
  auto loaded = LoadOrDie(*emu, build(false, &copy_line, &read_line));
  CHECK(Msg(emu->Launch(*loaded, {.block = {2}}, {*src, *out})) ==
        StrCat("kernel unordered: shared-memory data race in block (0,0,0) on shared address 8 (two threads, at least "
               "one writing, no barrier between): thread (0,0,0) copies asynchronously (the write lands at its wait) "
               "at `cp.async.ca.shared.global [%r0], [%rd1], 16;` (emulator_async_test.cc:", copy_line, "); thread "
               "(1,0,0) loads at `ld.shared.f32 %f0, [%r0+8];` (emulator_async_test.cc:", read_line, ")"));
  loaded = LoadOrDie(*emu, build(true, &copy_line, &read_line));
  REQUIRE(Msg(emu->Launch(*loaded, {.block = {2}}, {*src, *out})) == "");
  CHECK((*out->ToHost())[0] == 3.0f);
}

TEST_CASE("bar.arrive: producers arrive without waiting, consumers bar.sync on the named barrier") {
  // Warp 0 consumes, warp 1 produces: the consumers reach bar.sync 1, 64
  // first and must wait for the producers' arrival.
  KernelBuilder b("producer_consumer", ir::Target::kSm80);
  Ptr<U32, Global> out = GlobalParam<U32>(b, "out");
  Ptr<U32, Shared> buf = SharedArray<U32>(b, "buf", 32);
  Value<U32> tid = b.TidX();
  Value<U32> lane = b.LaneId();
  b.IfElse(
      b.Lt(tid, 32u),
      [&] {
        b.BarSync(1, 64);
        out.Store(lane, buf.Load(lane));
      },
      [&] {
        buf.Store(lane, b.Mul(lane, 3u));
        b.Fence(KernelBuilder::FenceSem::kAcqRel, ir::Scope::kCta);
        b.BarArrive(1, 64);
      });
  b.Ret();
  ir::Kernel kernel = FinishOrDie(b);
  for (bool race_check : {false, true}) {
    auto emu = MakeEmulator({.race_check = race_check});
    auto result = Buffer<uint32_t>::Allocate(*emu, 32);
    auto loaded = LoadOrDie(*emu, kernel);
    REQUIRE(Msg(emu->Launch(*loaded, {.block = {64}}, {*result})) == "");
    std::vector<uint32_t> want(32);
    for (uint32_t i = 0; i < 32; ++i) want[i] = 3 * i;
    CHECK(*result->ToHost() == want);
    CHECK(emu->last_counters().barriers == 64);  // 32 arrivals and 32 waits
  }
  // Commits and waits with no copy are fine (and keep nothing in flight).
  KernelBuilder w("empty_groups", ir::Target::kSm80);
  w.CpAsyncCommitGroup();
  w.CpAsyncWaitGroup(3);
  w.CpAsyncWaitAll();
  w.Ret();
  {
    auto emu = MakeEmulator();
    auto loaded = LoadOrDie(*emu, FinishOrDie(w));
    CHECK(Msg(emu->Launch(*loaded, {.block = {64}}, {})) == "");
  }
  // Without the producers' arrival the consumers wait forever.
  KernelBuilder d("no_producer", ir::Target::kSm80);
  d.If(d.Lt(d.TidX(), 32u), [&] { d.BarSync(1, 64); });
  d.Ret();
  auto emu = MakeEmulator();
  auto loaded = LoadOrDie(*emu, FinishOrDie(d));
  CHECK(Msg(emu->Launch(*loaded, {.block = {64}}, {})).starts_with("kernel no_producer: deadlock in block (0,0,0): "));
}

}  // namespace
}  // namespace ptxforge
