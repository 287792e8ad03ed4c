// ptx-dump --run: running a registry kernel's test problem on the emulator
// (and the error when there is no CUDA driver).
#include <cstdlib>
#include <sstream>

#include <catch2/catch.hpp>

#include "kernels/problem.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge {
namespace {

using testing::Msg;

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result Dump(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = tools::RunPtxDump(args, out, err);
  return {code, out.str(), err.str()};
}

TEST_CASE("ptx-dump --run=emulator prints the errors and counters") {
  Result r = Dump({"vector_add", "--run=emulator"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out ==
        "vector_add_f32 on ptxforge CPU emulator: n=1000, grid 4x1x1, block 256x1x1\n"
        "c: 1000 elements, max abs error 0, max rel error 0 (tolerance 1e-05): ok\n"
        "counters: instructions=22336 (move=3072 arith=6024 compare=1024 convert=3072 load=6096 store=1000 "
        "control=2048) global_load_bytes=8000 global_store_bytes=4000 shared_loads=0 shared_stores=0 atomics=0 "
        "barriers=0\n");
}

TEST_CASE("ptx-dump --run takes the test shape from --set") {
  Result r = Dump({"reduce_sum", "--run=emulator", "--set", "n=100", "--set", "grid=3", "--set", "type=s32"});
  CHECK(r.code == 0);
  CHECK(r.out.substr(0, r.out.find("counters:")) ==
        "reduce_sum_s32_b256 on ptxforge CPU emulator: n=100 grid=3, grid 3x1x1, block 256x1x1\n"
        "partial: 3 elements, max abs error 0, max rel error 0 (tolerance 0): ok\n");
}

TEST_CASE("ptx-dump --run errors") {
  Result bad = Dump({"reduce_sum", "--run=gpu"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "ptx-dump: --run must be emulator or cuda, not 'gpu'\n");
  Result shape = Dump({"reduce_sum", "--run=emulator", "--set", "grid=0"});
  CHECK(shape.code == 2);
  CHECK(shape.err == "ptx-dump: reduce_sum: grid must be positive\n");
  // Issue 11 item 14: huge shapes are refused before anything is allocated.
  for (std::string n : {"4000000000", "4294967295", "300000000"}) {
    Result huge = Dump({"vector_add", "--run=emulator", "--set", "n=" + n});
    CHECK(huge.code == 2);
    CHECK(huge.out.empty());
    CHECK(huge.err == "ptx-dump: vector_add: n=" + n + " needs more than the 1073741824 bytes of test data a problem "
                      "may use\n");
  }
  Result grid = Dump({"reduce_sum", "--run=emulator", "--set", "grid=4294967295"});
  CHECK(grid.code == 2);
  CHECK(grid.err == "ptx-dump: reduce_sum: grid must be at most 2147483647 (CUDA's limit)\n");
  Result big_grid = Dump({"reduce_sum", "--run=emulator", "--set", "grid=2000000000"});
  CHECK(big_grid.code == 2);
  CHECK(big_grid.err == "ptx-dump: reduce_sum: n=5000 grid=2000000000 needs more than the 1073741824 bytes of test "
                        "data a problem may use\n");
  CHECK(Msg(kernels::GridFor("vector_add", 4294967295u, 1).status()) ==
        "vector_add: 4294967295 elements in blocks of 1 need 4294967295 blocks, more than CUDA's 2147483647");
  CHECK(*kernels::GridFor("vector_add", 4294967295u, 256) == 16777216u);  // no 32-bit wrap to 0
  Result seed = Dump({"reduce_sum", "--run=emulator", "--seed=x"});
  CHECK(seed.code == 2);
  CHECK(seed.err == "ptx-dump: --seed must be an unsigned integer, not 'x'\n");
  setenv("PTXFORGE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  Result cuda = Dump({"vector_add", "--run=cuda"});
  unsetenv("PTXFORGE_LIBCUDA");
  CHECK(cuda.code == 1);
  CHECK(cuda.out.empty());
  CHECK(cuda.err ==
        "ptx-dump: --run=cuda: CUDA driver not found (/nonexistent/libcuda.so.1): /nonexistent/libcuda.so.1: cannot "
        "open shared object file: No such file or directory\n");
}

TEST_CASE("ptx-dump --run=emulator --profile prints the profile and its top instructions") {
  Result r = Dump({"reduce_sum", "--run=emulator", "--profile", "--race-check"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  // reduce_sum reads coalesced and reduces with sequential addressing: no
  // excess sectors, no bank conflicts; the grid-stride tail splits warps.
  CHECK(r.out.substr(r.out.find("profile:")) ==
        "profile: global: 165 requests, 3.84 sectors/request, 0 excess sectors (633 ideal), 165 lines; shared: 360 "
        "requests, 0 bank conflicts (360 wavefronts); branches: 797 warp executions, 49 splits; 30.85 active "
        "lanes/instruction\n"
        "top instructions by excess sectors: none\n"
        "top instructions by bank conflicts: none\n");
}

TEST_CASE("ptx-dump --profile and --race-check need the emulator") {
  Result profile = Dump({"reduce_sum", "--profile"});
  CHECK(profile.code == 2);
  CHECK(profile.err == "ptx-dump: --profile needs --run=emulator\n");
  Result race = Dump({"reduce_sum", "--run=cuda", "--race-check"});
  CHECK(race.code == 2);
  CHECK(race.err == "ptx-dump: --race-check needs --run=emulator\n");
}

TEST_CASE("ptx-dump --run --time=N times N more launches after the checked one") {
  Result r = Dump({"vector_add", "--run=emulator", "--time=3"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  const std::string head =
      "vector_add_f32 on ptxforge CPU emulator: n=1000, grid 4x1x1, block 256x1x1\n"
      "c: 1000 elements, max abs error 0, max rel error 0 (tolerance 1e-05): ok\ntime: median ";
  REQUIRE(r.out.substr(0, head.size()) == head);
  const size_t time_end = r.out.find('\n', head.size());
  const std::string time_line = r.out.substr(head.size(), time_end - head.size());
  CHECK(time_line.ends_with(" us over 3 launches (host clock)"));
  CHECK(time_line.find(" us, min ") != std::string::npos);
  // The counters are those of the last launch: the same kernel on the same data.
  CHECK(r.out.substr(time_end + 1, 25) == "counters: instructions=22");
  for (std::string bad : {"0", "-1", "100001", "x", ""}) {
    Result e = Dump({"vector_add", "--run=emulator", "--time=" + bad});
    CHECK(e.code == 2);
    CHECK(e.err == "ptx-dump: --time must be a number of launches in 1..100000, not '" + bad + "'\n");
  }
  Result no_run = Dump({"vector_add", "--time=5"});
  CHECK(no_run.code == 2);
  CHECK(no_run.err == "ptx-dump: --time needs --run=emulator or --run=cuda\n");
}

TEST_CASE("two seeds give different inputs, one seed the same output") {
  Result a = Dump({"reduce_sum", "--run=emulator", "--seed=5"});
  Result b = Dump({"reduce_sum", "--run=emulator", "--seed=5"});
  CHECK(a.code == 0);
  CHECK(a.out == b.out);
}

}  // namespace
}  // namespace ptxforge
