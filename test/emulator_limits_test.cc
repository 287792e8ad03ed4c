// Issue 11: device lifetimes, memory and launch limits, unsupported
// instructions and concurrent launches, on the emulator.
#include <atomic>
#include <regex>
#include <thread>

#include "ir/strings.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using ir::StateSpace;
using runtime::Buffer;
using runtime::MakeEmulator;
using testing::FinishOrDie;
using testing::LoadOrDie;
using testing::Msg;

// out[i] = in[i] + 1 for i < n.
ir::Kernel AddOne() {
  KernelBuilder b("add_one");
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> i = b.GlobalThreadIdX();
  b.If(b.Lt(i, n), [&] {
    Value<U32> v = b.Load<U32>(StateSpace::kGlobal, b.ElementAddr<U32>(in, i));
    b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(out, i), b.Add(v, 1u));
  });
  return FinishOrDie(b);
}

// Item 8: a Buffer or kernel that outlives its device.
TEST_CASE("buffers and kernels that outlive their device say so") {
  auto emu = MakeEmulator();
  auto buf = Buffer<uint32_t>::FromHost(*emu, std::vector<uint32_t>{1, 2, 3});
  REQUIRE(buf.ok());
  runtime::BufferView<uint32_t> view = *buf;
  auto kernel = LoadOrDie(*emu, AddOne());
  emu.reset();
  CHECK(Msg(buf->ToHost().status()) == "copy out of a buffer: its device was destroyed (a device must outlive its buffers)");
  std::vector<uint32_t> host = {4, 5, 6};
  CHECK(Msg(buf->CopyFrom(host)) == "copy into a buffer: its device was destroyed (a device must outlive its buffers)");
  CHECK(Msg(view.ToHost().status()) == "copy out of a buffer: its device was destroyed (a device must outlive its buffers)");
  auto fresh = MakeEmulator();
  auto a = Buffer<uint32_t>::Allocate(*fresh, 3);
  REQUIRE(a.ok());
  CHECK(Msg(fresh->Launch(*kernel, {.grid = {1}, .block = {32}}, {*a, *a, 3u})) ==
        "Launch: kernel add_one was loaded on a device that was destroyed (load it with this device's Load)");
  CHECK(Msg(fresh->LaunchCounted(*kernel, {.grid = {1}, .block = {32}}, {*a, *a, 3u}).status()) ==
        "LaunchCounted: kernel add_one was loaded on a device that was destroyed (load it with this device's Load)");
  // *buf's destructor frees nothing (the device and its memory are gone).
}

// Item 9: block x local memory beyond what the emulator may allocate is an
// error from Launch, not std::bad_alloc in a worker thread.
TEST_CASE("a launch needing too much emulator memory is refused before it runs") {
  KernelBuilder b("big_local");
  Symbol<U32> scratch = b.Local<U32>("scratch", 64u << 20);
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  b.Store(StateSpace::kLocal, Address(scratch, 8), b.Const<U32>(7));
  b.Store(StateSpace::kGlobal, out, b.Load<U32>(StateSpace::kLocal, Address(scratch, 8)));
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator();
  auto loaded = LoadOrDie(*emu, k);
  auto out_buf = Buffer<uint32_t>::Allocate(*emu, 1);
  REQUIRE(out_buf.ok());
  CHECK(Msg(emu->Launch(*loaded, {.grid = {1}, .block = {1024}}, {*out_buf})) ==
        "kernel big_local: a block of 1024 threads with 268435456 bytes of local memory each needs more than "
        "EmulatorOptions::max_block_memory_bytes (4294967296 bytes) of emulator memory");
  // One thread fits.
  REQUIRE(Msg(emu->Launch(*loaded, {.grid = {1}, .block = {1}}, {*out_buf})) == "");
  CHECK((*out_buf->ToHost())[0] == 7);
}

// Item 10: shared and local layouts are 64-bit; what does not fit the
// emulator's 4 GiB windows is refused (it used to wrap to 64 bytes).
TEST_CASE("huge shared and local arrays are not truncated to 32 bits") {
  for (bool shared : {true, false}) {
    KernelBuilder b("huge");
    Symbol<F64> big = shared ? b.Shared<F64>("big", (1u << 29) + 8) : b.Local<F64>("big", (1u << 29) + 8);
    Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
    StateSpace space = shared ? StateSpace::kShared : StateSpace::kLocal;
    b.Store(space, Address(big, 8), b.Const<F64>(1.5));
    b.Store(StateSpace::kGlobal, out, b.Load<F64>(space, Address(big, 8)));
    absl::StatusOr<ir::Kernel> k = b.Finish();
    if (shared) {
      REQUIRE(Msg(k.status()) == "kernel huge: static shared memory is 4294967360 bytes, over the 49152 bytes sm_80 "
                                 "allows; use dynamic shared memory (DynamicShared) for more");
      k = b.kernel();  // unverified
    }
    auto emu = MakeEmulator({.verify = false});
    CHECK(Msg(emu->Load(*k).status()) ==
          StrCat("kernel huge: its ", shared ? "shared" : "local", " variables take 4294967360 bytes, more than the "
                 "emulator's 4294967296-byte ", shared ? "shared" : "local", " window"));
  }
}

// Item 11: Buffer<T>::Allocate checks count * sizeof(T).
TEST_CASE("buffer sizes that overflow are refused") {
  auto emu = MakeEmulator();
  auto b = Buffer<uint32_t>::Allocate(*emu, (uint64_t{1} << 62) + 1);
  CHECK(Msg(b.status()) == "cannot allocate 4611686018427387905 elements of 4 bytes: the size overflows 64 bits");
  auto c = Buffer<uint64_t>::Allocate(*emu, uint64_t{1} << 61);
  CHECK(Msg(c.status()) == "cannot allocate 2305843009213693952 elements of 8 bytes: the size overflows 64 bits");
  auto d = Buffer<uint32_t>::Allocate(*emu, (uint64_t{1} << 62) - 1);
  CHECK(Msg(d.status()) == "emulator: cannot allocate 18446744073709551612 bytes (the limit is 64 GiB)");
}

ir::Kernel Ret() {
  KernelBuilder b("nothing");
  b.Ret();
  return FinishOrDie(b);
}

// Item 12: CUDA's grid limits, and bounds on a whole emulator launch.
TEST_CASE("grid limits and launch budgets") {
  auto emu = MakeEmulator({.worker_threads = 1, .max_launch_instructions = 1000});
  auto k = LoadOrDie(*emu, Ret());
  CHECK(Msg(emu->Launch(*k, {.grid = {0xFFFFFFFFu}, .block = {1}}, {})) ==
        "kernel nothing: grid 4294967295x1x1 exceeds the limits (x <= 2147483647, y, z <= 65535)");
  CHECK(Msg(emu->Launch(*k, {.grid = {0x80000000u}, .block = {1}}, {})) ==
        "kernel nothing: grid 2147483648x1x1 exceeds the limits (x <= 2147483647, y, z <= 65535)");
  CHECK(Msg(emu->Launch(*k, {.grid = {1, 65536}, .block = {1}}, {})) ==
        "kernel nothing: grid 1x65536x1 exceeds the limits (x <= 2147483647, y, z <= 65535)");
  // The largest grid is accepted, and the instruction budget stops it: each
  // block runs one instruction, counted when the block ends.
  CHECK(Msg(emu->Launch(*k, {.grid = {0x7FFFFFFFu}, .block = {1}}, {})) ==
        "kernel nothing: the launch executed more than 1000 thread-instructions "
        "(EmulatorOptions::max_launch_instructions); stopped before block (1001,0,0)");
  CHECK(Msg(emu->Launch(*k, {.grid = {1000}, .block = {1}}, {})) == "");

  // Inside a block, the budget is checked every 65536 instructions of a thread.
  KernelBuilder f("forever");
  ir::Label top = f.NewLabel("top");
  f.Bind(top);
  f.Bra(top); const int loop_line = __LINE__;
  ir::Kernel fk = FinishOrDie(f);
  auto emu2 = MakeEmulator({.max_launch_instructions = 100000});
  auto fl = LoadOrDie(*emu2, fk);
  CHECK(Msg(emu2->Launch(*fl, {}, {})) ==
        StrCat("kernel forever: the launch executed more than 100000 thread-instructions "
               "(EmulatorOptions::max_launch_instructions); block (0,0,0) thread (0,0,0) at `bra $L0_top;` "
               "(emulator_limits_test.cc:", loop_line, ")"));

  // A deadline stops a launch of 2^31-1 blocks within moments.
  auto timed = MakeEmulator({.launch_timeout = std::chrono::milliseconds(50)});
  auto tk = LoadOrDie(*timed, Ret());
  auto start = std::chrono::steady_clock::now();
  std::string message = Msg(timed->Launch(*tk, {.grid = {0x7FFFFFFFu}, .block = {32}}, {}));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  INFO(message);
  CHECK(std::regex_match(message, std::regex(R"(kernel nothing: the launch ran longer than 50 ms )"
                                             R"(\(EmulatorOptions::launch_timeout\); stopped before block \([0-9]+,0,0\))")));
  // The same deadline inside a block: a thread that spins.
  auto fl2 = LoadOrDie(*timed, fk);
  CHECK(Msg(timed->Launch(*fl2, {}, {})) ==
        StrCat("kernel forever: the launch ran longer than 50 ms (EmulatorOptions::launch_timeout); block (0,0,0) "
               "thread (0,0,0) at `bra $L0_top;` (emulator_limits_test.cc:", loop_line, ")"));
}

// Item 13: launches from several threads on one emulator, each getting its
// own counters (TSan: no data race).
TEST_CASE("concurrent launches on one emulator each get their own counters") {
  auto emu = MakeEmulator();
  auto k = LoadOrDie(*emu, AddOne());
  constexpr int kThreads = 4;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      const uint32_t n = 64 * (w + 1);
      std::vector<uint32_t> host(n);
      for (uint32_t i = 0; i < n; ++i) host[i] = i * 3 + w;
      auto in = Buffer<uint32_t>::FromHost(*emu, host);
      auto out = Buffer<uint32_t>::Allocate(*emu, n);
      if (!in.ok() || !out.ok()) {
        failures[w] = "allocation failed";
        return;
      }
      for (int rep = 0; rep < 20; ++rep) {
        auto counters = emu->LaunchCounted(*k, {.grid = {n / 32}, .block = {32}}, {*in, *out, n});
        if (!counters.ok()) {
          failures[w] = std::string(counters.status().message());
          return;
        }
        if (counters->global_load_bytes != 4 * n || counters->global_store_bytes != 4 * n) {
          failures[w] = StrCat("counters of another launch: ", counters->ToString());
          return;
        }
        std::vector<uint32_t> result = *out->ToHost();
        for (uint32_t i = 0; i < n; ++i) {
          if (result[i] != host[i] + 1) {
            failures[w] = StrCat("out[", i, "] = ", result[i]);
            return;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int w = 0; w < kThreads; ++w) CHECK(failures[w] == "");
  // last_counters() is one of the launches'.
  uint64_t last = emu->last_counters().global_load_bytes;
  CHECK((last == 256 || last == 512 || last == 768 || last == 1024));
}

// Item 7: what the verifier accepts but the emulator does not model is
// refused by Load, naming the instruction and why.
TEST_CASE("the emulator names the instruction it cannot run and why") {
  KernelBuilder b("consts");
  Value<U64> p = b.Param<U64>("p");
  const int line = __LINE__; b.Emit(ir::Opcode::kLd, ir::Modifiers{.type = ir::ScalarType::kU32, .space = StateSpace::kConst},
                                   ir::ScalarType::kU32, {ir::Operand::AddrReg(p.reg, 0)});
  ir::Kernel k = FinishOrDie(b);
  CHECK(Msg(MakeEmulator()->Load(k).status()) ==
        StrCat("kernel consts: emulator_limits_test.cc:", line, ": the emulator cannot run `ld.const.u32 %1, [%0];`: "
               "it does not model const memory (a kernel cannot declare const data to read)"));

  KernelBuilder c("param_address");
  Value<U64> q = c.Param<U64>("q");
  const int line2 = __LINE__; c.Emit(ir::Opcode::kCvta, ir::Modifiers{.type = ir::ScalarType::kU64, .space = StateSpace::kParam},
                                    ir::ScalarType::kU64, {q.reg});
  ir::Kernel ck = FinishOrDie(c);
  CHECK(Msg(MakeEmulator()->Load(ck).status()) ==
        StrCat("kernel param_address: emulator_limits_test.cc:", line2, ": the emulator cannot run "
               "`cvta.param.u64 %1, %0;`: it does not model generic addresses of params (read params with ld.param)"));
}

}  // namespace
}  // namespace ptxforge
