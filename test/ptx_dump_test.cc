// The ptx-dump contract: options, output, exit codes and one-line errors (in-process and the real binary).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "emit/ir_printer.h"
#include "emit/ptx_printer.h"
#include "runtime/ptxas.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge {
namespace {

using testing::Msg;

struct Result {
  int code = 0;
  std::string out;
  std::string err;
};

Result Dump(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = tools::RunPtxDump(args, out, err);
  return {code, out.str(), err.str()};
}

// A failed run: the exit code, nothing on stdout, exactly this one line on stderr.
void RequireError(const std::vector<std::string>& args, int code, const std::string& message) {
  INFO("ptx-dump " << StrJoin(args, " "));
  Result r = Dump(args);
  REQUIRE(r.code == code);
  REQUIRE(r.out.empty());
  REQUIRE(r.err == "ptx-dump: " + message + "\n");
}

std::string Golden(const std::string& name) {
  std::optional<std::string> text = testing::ReadFile(StrCat(PTXFORGE_SOURCE_DIR, "/test/golden/", name));
  REQUIRE(text.has_value());
  return *text;
}

// What the library itself prints for a family with `overrides` on `target`.
std::string LibraryPtx(std::string_view family_name, ir::Target target,
                       const std::vector<std::pair<std::string, std::string>>& overrides = {}) {
  const kernels::KernelFamily* family = kernels::FindFamily(family_name);
  REQUIRE(family != nullptr);
  absl::StatusOr<kernels::Config> config = family->MakeConfig(overrides);
  REQUIRE(Msg(config) == "OK");
  absl::StatusOr<ir::Kernel> k = family->Build(*config, target);
  REQUIRE(Msg(k) == "OK");
  REQUIRE(Msg(passes::Pipeline::Standard().Run(*k)) == "OK");
  return *emit::PrintPtx(*k);
}

TEST_CASE("ptx-dump --list prints name TAB description, one kernel per line", "[ptx_dump]") {
  Result r = Dump({"--list"});
  REQUIRE(r.code == 0);
  REQUIRE(r.err.empty());
  std::string expected;
  for (const kernels::KernelFamily* f : kernels::AllFamilies()) StrAppend(&expected, f->name(), "\t", f->description(), "\n");
  REQUIRE(r.out == expected);
  // One literal line (the list is sorted by name, so its position depends on the other families).
  REQUIRE(r.out.find("\nreduce_sum\tper-block partial sums: strided loop, shared-memory tree, bar.sync\n") !=
          std::string::npos);
  RequireError({"--list", "vector_add"}, 2, "--list takes no kernel name");
}

TEST_CASE("ptx-dump's default target is sm_80 and the output is the golden PTX", "[ptx_dump]") {
  for (const kernels::KernelFamily* f : kernels::AllFamilies()) {
    Result r = Dump({std::string(f->name())});
    REQUIRE(r.code == 0);
    REQUIRE(r.err.empty());
    REQUIRE(r.out == Golden(StrCat(f->name(), ".sm_80.ptx")));
    Result ir = Dump({std::string(f->name()), "--emit=ir"});
    REQUIRE(ir.code == 0);
    REQUIRE(ir.out == Golden(StrCat(f->name(), ".ir")));
  }
}

TEST_CASE("ptx-dump --target and --set change what is built", "[ptx_dump]") {
  Result r = Dump({"vector_add", "--target=sm_90a"});
  REQUIRE(r.code == 0);
  REQUIRE(r.out == LibraryPtx("vector_add", ir::Target::kSm90a));
  REQUIRE(r.out.find("\n.target sm_90a\n") != std::string::npos);
  Result spaced = Dump({"vector_add", "--target", "sm_120"});
  REQUIRE(spaced.out == LibraryPtx("vector_add", ir::Target::kSm120));

  Result set = Dump({"vector_add", "--set", "block=128", "--set=type=f64"});
  REQUIRE(set.code == 0);
  REQUIRE(set.err.empty());
  REQUIRE(set.out == LibraryPtx("vector_add", ir::Target::kSm80, {{"block", "128"}, {"type", "f64"}}));
  REQUIRE(set.out.find(".visible .entry vector_add_f64(") != std::string::npos);
  REQUIRE(set.out.find("\n.maxntid 128, 1, 1\n") != std::string::npos);
}

// Issue 11 item 18: a bad --set, key or value, is a usage error (exit 2).
TEST_CASE("ptx-dump --set errors: unknown keys and bad values are usage errors", "[ptx_dump]") {
  for (const kernels::KernelFamily* f : kernels::AllFamilies()) {
    std::vector<std::string_view> keys;
    for (const kernels::ConfigField& field : f->fields()) keys.push_back(field.name);
    RequireError({std::string(f->name()), "--set", "bogus=1"}, 2,
                 StrCat("unknown setting 'bogus' for ", f->name(), "; valid keys: ", StrJoin(keys, ", ")));
  }
  RequireError({"vector_add", "--set", "block=abc"}, 2, "vector_add: block=abc is not an unsigned 32-bit integer");
  RequireError({"vector_add", "--set", "type=bf16"}, 2,
               "vector_add: type=bf16 is not supported; choose one of f16, f32, f64, s32, u32, s64, u64");
  RequireError({"vector_add", "--set", "type=garbage"}, 2,
               "vector_add: type=garbage is not supported; choose one of f16, f32, f64, s32, u32, s64, u64");
  RequireError({"vector_add", "--set", "block=0"}, 2, "vector_add: block=0 must be in 1..1024");
  RequireError({"reduce_sum", "--set", "block=100"}, 2, "reduce_sum: block=100 must be a power of two in 32..1024");
  // Item 15: test-shape values are checked even when not running (their
  // kind is their default's: an unsigned 32-bit integer).
  RequireError({"vector_add", "--set", "n=-1"}, 2, "vector_add: n=-1 is not an unsigned 32-bit integer");
  RequireError({"vector_add", "--set", "n=99999999999999999999"}, 2,
               "vector_add: n=99999999999999999999 is not an unsigned 32-bit integer");
  RequireError({"vector_add", "--set", "n=abc"}, 2, "vector_add: n=abc is not an unsigned 32-bit integer");
  RequireError({"vector_add", "--set", "n="}, 2, "vector_add: n= is not an unsigned 32-bit integer");
  RequireError({"reduce_sum", "--set", "grid=-5"}, 2, "reduce_sum: grid=-5 is not an unsigned 32-bit integer");
  RequireError({"vector_add", "--set", "block"}, 2, "--set expects KEY=VALUE, got 'block'");
  RequireError({"vector_add", "--set"}, 2, "--set needs a value");
}

TEST_CASE("ptx-dump --emit=stats", "[ptx_dump]") {
  Result r = Dump({"vector_add", "--emit=stats"});
  REQUIRE(r.code == 0);
  REQUIRE(r.out ==
          "kernel: vector_add_f32\n"
          "target: sm_80\n"
          "ptx_version: 7.0\n"
          "instructions: 22\n"
          "registers: pred=1 b16=0 b32=5 b64=10 f32=3 f64=0\n"
          "max_live_32bit: 9\n"
          "max_live_per_class: pred=1 b16=0 b32=3 b64=4 f32=2 f64=0\n");
  RequireError({"vector_add", "--emit=asm"}, 2, "--emit must be ptx, ir or stats, not 'asm'");
}

TEST_CASE("ptx-dump --dump-after prints the IR after a pass on stderr", "[ptx_dump]") {
  Result r = Dump({"vector_add", "--dump-after=dce"});
  REQUIRE(r.code == 0);
  REQUIRE(r.out == Golden("vector_add.sm_80.ptx"));
  REQUIRE(r.err == "// IR after dce\n" + Golden("vector_add.ir"));
  Result all = Dump({"reduce_sum", "--dump-after", "all", "--emit=stats"});
  REQUIRE(all.code == 0);
  REQUIRE(all.err.find("// IR after verify\n") == 0);
  REQUIRE(all.err.find("// IR after dce\n") != std::string::npos);
  REQUIRE(all.err.substr(all.err.find("// IR after regcount\n")) == "// IR after regcount\n" + Golden("reduce_sum.ir"));
  RequireError({"vector_add", "--dump-after=fold"}, 2,
               "--dump-after: unknown pass 'fold'; passes: verify, constfold, pow2div, identities, reassoc, copyprop, cse, branches, licm, strength, rotate, dce, "
               "regcount, all");
}

// The passes a run went through, from --dump-after=all's headers.
std::string PassesRun(const std::string& err) {
  std::string names;
  for (size_t at = err.find("// IR after "); at != std::string::npos; at = err.find("// IR after ", at + 1)) {
    size_t start = at + 12, end = err.find('\n', start);
    StrAppend(&names, names.empty() ? "" : ",", err.substr(start, end - start));
  }
  return names;
}

TEST_CASE("ptx-dump --passes chooses the optimisations", "[ptx_dump]") {
  Result all = Dump({"vector_add", "--dump-after=all", "--emit=stats"});
  REQUIRE(all.code == 0);
  REQUIRE(PassesRun(all.err) == "verify,constfold,pow2div,identities,reassoc,copyprop,cse,branches,licm,strength,rotate,dce,regcount");
  Result none = Dump({"vector_add", "--passes=none", "--dump-after=all", "--emit=stats"});
  REQUIRE(none.code == 0);
  REQUIRE(PassesRun(none.err) == "verify,dce,regcount");
  REQUIRE(PassesRun(Dump({"vector_add", "--passes=-cse,-constfold", "--dump-after=all"}).err) ==
          "verify,pow2div,identities,reassoc,copyprop,branches,licm,strength,rotate,dce,regcount");
  REQUIRE(PassesRun(Dump({"vector_add", "--passes", "cse", "--dump-after=all"}).err) == "verify,cse,dce,regcount");
  REQUIRE(PassesRun(Dump({"vector_add", "--passes=-pow2div", "--dump-after=all"}).err) ==
          "verify,constfold,identities,reassoc,copyprop,cse,branches,licm,strength,rotate,dce,regcount");
  REQUIRE(PassesRun(Dump({"vector_add", "--passes=-licm,-strength", "--dump-after=all"}).err) ==
          "verify,constfold,pow2div,identities,reassoc,copyprop,cse,branches,rotate,dce,regcount");
  // vector_add computes its element offset once per array; CSE shares it.
  REQUIRE(all.out != none.out);
  REQUIRE(Dump({"vector_add", "--passes=all"}).out == Dump({"vector_add"}).out);
}

TEST_CASE("ptx-dump -o and --output write the file instead of stdout", "[ptx_dump]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / StrCat("ptx_dump_test_", getpid());
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "out.ptx").string();
  Result r = Dump({"vector_add", "-o", file});
  REQUIRE(r.code == 0);
  REQUIRE(r.out.empty());
  REQUIRE(r.err.empty());
  REQUIRE(testing::ReadFile(file) == Golden("vector_add.sm_80.ptx"));
  Result ir = Dump({"reduce_sum", "--emit=ir", StrCat("--output=", file)});
  REQUIRE(ir.code == 0);
  REQUIRE(testing::ReadFile(file) == Golden("reduce_sum.ir"));
  std::filesystem::remove_all(dir);
  const std::string missing = (dir / "no" / "such" / "dir.ptx").string();
  RequireError({"vector_add", "-o", missing}, 1, StrCat("cannot write ", missing));
  RequireError({"vector_add", "-o"}, 2, "-o needs a value");
}

TEST_CASE("ptx-dump --validate assembles with ptxas", "[ptx_dump]") {
  std::optional<std::string> ptxas = testing::PtxasOrSkip();
  if (!ptxas) return;
  Result r = Dump({"reduce_sum", "--validate", "--target=sm_86"});
  REQUIRE(r.code == 0);
  REQUIRE(r.out == LibraryPtx("reduce_sum", ir::Target::kSm86));
  REQUIRE(r.err == "ptx-dump: ptxas -arch=sm_86 accepted reduce_sum_f32_b256\n");
}

// Runs `body` with $PTXFORGE_PTXAS set to `value`, restoring it afterwards.
template <typename F>
void WithPtxasEnv(const char* value, F&& body) {
  const char* old = std::getenv("PTXFORGE_PTXAS");
  std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv("PTXFORGE_PTXAS", value, 1);
  body();
  if (saved) {
    setenv("PTXFORGE_PTXAS", saved->c_str(), 1);
  } else {
    unsetenv("PTXFORGE_PTXAS");
  }
}

TEST_CASE("ptx-dump --validate without ptxas fails with one line", "[ptx_dump]") {
  WithPtxasEnv("/nonexistent/ptxas", [] {
    REQUIRE_FALSE(runtime::FindPtxas().has_value());
    // The PTX is still printed; the verdict is the exit code and one line on stderr.
    Result r = Dump({"vector_add", "--validate"});
    REQUIRE(r.code == 1);
    REQUIRE(r.out == Golden("vector_add.sm_80.ptx"));
    REQUIRE(r.err ==
            "ptx-dump: vector_add_f32: ptxas not found (looked at $PTXFORGE_PTXAS, PATH and /usr/local/cuda/bin/ptxas)\n");
  });
}

TEST_CASE("ptx-dump --validate reports a rejection in one line", "[ptx_dump]") {
  // A stand-in ptxas that rejects everything with several lines of output.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / StrCat("ptx_dump_fake_", getpid());
  std::filesystem::create_directories(dir);
  const std::string fake = (dir / "ptxas").string();
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\n"
              "echo \"ptxas info    : compiling\"\n"
              "echo \"ptxas x.ptx, line 12; error   : Unknown symbol 'boom'\"\n"
              "echo \"ptxas fatal   : Ptx assembly aborted due to errors\"\n"
              "exit 255\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  WithPtxasEnv(fake.c_str(), [] {
    Result r = Dump({"vector_add", "--validate"});
    REQUIRE(r.code == 1);
    REQUIRE(r.out == Golden("vector_add.sm_80.ptx"));
    REQUIRE(r.err == "ptx-dump: vector_add_f32: ptxas x.ptx, line 12; error   : Unknown symbol 'boom'\n");
  });
  std::filesystem::remove_all(dir);
}

// A stand-in ptxas running `body` (shell); removed afterwards.
template <typename F>
void WithFakePtxas(const std::string& body, F&& test) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / StrCat("ptx_dump_fake2_", getpid());
  std::filesystem::create_directories(dir);
  const std::string fake = (dir / "ptxas").string();
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\n" << body << "\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  WithPtxasEnv(fake.c_str(), test);
  std::filesystem::remove_all(dir);
}

// Item 16: a ptxas that fails without a word still gives a useful line.
TEST_CASE("ptx-dump --validate with a ptxas that fails silently", "[ptx_dump]") {
  WithFakePtxas("exit 1", [] {
    Result r = Dump({"vector_add", "--validate"});
    REQUIRE(r.code == 1);
    REQUIRE(r.err == "ptx-dump: vector_add_f32: ptxas -arch=sm_80 rejected the PTX (exit 1) without printing why\n");
  });
}

// Item 17: a ptxas that hangs is stopped after --ptxas-timeout.
TEST_CASE("ptx-dump --validate stops a ptxas that hangs", "[ptx_dump]") {
  WithFakePtxas("exec sleep 60", [] {
    auto start = std::chrono::steady_clock::now();
    Result r = Dump({"vector_add", "--validate", "--ptxas-timeout=0.2"});
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
    REQUIRE(r.code == 1);
    REQUIRE(r.out == Golden("vector_add.sm_80.ptx"));
    REQUIRE(r.err == "ptx-dump: vector_add_f32: ptxas did not finish within 0.2 s; it was stopped (raise the limit "
                     "with --ptxas-timeout=SECONDS)\n");
    // The library call says the same.
    absl::Status s = runtime::ValidateWithPtxas(r.out, ir::Target::kSm80, std::chrono::milliseconds(100));
    REQUIRE(s.code() == absl::StatusCode::kDeadlineExceeded);
    REQUIRE(Msg(s) == "ptxas did not finish within 0.1 s; it was stopped");
  });
}

TEST_CASE("ptx-dump --help documents every option", "[ptx_dump]") {
  Result r = Dump({"--help"});
  REQUIRE(r.code == 0);
  REQUIRE(r.err.empty());
  REQUIRE(r.out.find("usage: ptx-dump --list\n       ptx-dump NAME [options]\n") == 0);
  for (std::string option : {"\n  --list ", "\n  --target=sm_XX ", "\n  --set KEY=VALUE ", "\n  --emit=ptx|ir|stats ",
                             "\n  --dump-after=PASS ", "\n  --passes=LIST ", "\n  -o FILE, --output=FILE\n", "\n  --validate ",
                             "\n  --help "}) {
    INFO("option " << option);
    REQUIRE(r.out.find(option) != std::string::npos);
  }
  REQUIRE(r.out.find(StrCat("one of: ", ir::SupportedTargetList(), "\n")) != std::string::npos);
  REQUIRE(r.out.find("\nExit status: 0 success; 1 the kernel did not build, verify, assemble or\nmatch its reference, "
                     "ptxas failed or timed out, or the output could not be\nwritten; 2 a usage error (an unknown or "
                     "empty option, kernel, target, pass,\noptimisation, --set key, or a --set value the kernel does not "
                     "accept,\nincluding test shapes too large to run).\n") != std::string::npos);
  REQUIRE(r.out.find("\n  --ptxas-timeout=SECONDS\n                       stop ptxas after this long (default 60) and "
                     "fail\n") != std::string::npos);
  REQUIRE(Dump({"-h"}).out == r.out);
}

TEST_CASE("ptx-dump usage errors exit 2 with one line", "[ptx_dump]") {
  RequireError({}, 2, "no kernel name given (ptx-dump --list shows them; --help for usage)");
  RequireError({"vector_ad"}, 2, "unknown kernel 'vector_ad'; did you mean vector_add? (ptx-dump --list shows all)");
  RequireError({"reduc"}, 2, "unknown kernel 'reduc'; did you mean reduce or reduce_sum? (ptx-dump --list shows all)");
  RequireError({"zzzzzzzzzzzzzzzz"}, 2, "unknown kernel 'zzzzzzzzzzzzzzzz' (ptx-dump --list shows all)");
  RequireError({"vector_add", "--frob"}, 2, "unknown option '--frob' (see --help)");
  RequireError({"vector_add", "reduce_sum"}, 2, "more than one kernel name given ('vector_add' and 'reduce_sum')");
  RequireError({"vector_add", "--target=sm_81"}, 2,
               StrCat("unknown target 'sm_81'; supported targets: ", ir::SupportedTargetList()));
  RequireError({"vector_add", "--target"}, 2, "--target needs a value");
  // Item 15: an empty --dump-after is an error, not "no dump".
  RequireError({"vector_add", "--dump-after="}, 2,
               "--dump-after needs a pass name (verify, constfold, pow2div, identities, reassoc, copyprop, cse, branches, licm, strength, "
               "rotate, dce, regcount or all)");
  // --passes: the whole message of a bad value.
  const std::string names = "(constfold, pow2div, identities, reassoc, copyprop, cse, branches, licm, strength, rotate; or all, none)";
  RequireError({"vector_add", "--passes=fold"}, 2, "--passes: unknown optimisation 'fold' " + names);
  RequireError({"vector_add", "--passes=-cse,-dce"}, 2, "--passes: unknown optimisation 'dce' " + names);
  RequireError({"vector_add", "--passes=cse,,constfold"}, 2,
               "--passes: empty optimisation name in 'cse,,constfold' " + names);
  RequireError({"vector_add", "--passes="}, 2, "--passes: empty list of optimisations " + names);
  RequireError({"vector_add", "--passes"}, 2, "--passes needs a value");
  // A pass the chosen optimisations leave out cannot be dumped after.
  RequireError({"vector_add", "--passes=none", "--dump-after=cse"}, 2,
               "--dump-after: unknown pass 'cse'; passes: verify, dce, regcount, all");
  RequireError({"vector_add", "--ptxas-timeout=0"}, 2,
               "--ptxas-timeout must be a number of seconds in (0, 86400], not '0'");
  RequireError({"vector_add", "--ptxas-timeout=abc"}, 2,
               "--ptxas-timeout must be a number of seconds in (0, 86400], not 'abc'");
}

// Item 16: what the user typed is echoed on one line, and cut when long.
TEST_CASE("ptx-dump errors stay one line: newlines escaped, long input cut", "[ptx_dump]") {
  RequireError({"vector\nadd"}, 2, "unknown kernel 'vector\\nadd'; did you mean vector_add? (ptx-dump --list shows all)");
  const std::string x(100000, 'x');
  const std::string x64(64, 'x');
  RequireError({x}, 2, StrCat("unknown kernel '", x64, "... (100000 characters)' (ptx-dump --list shows all)"));
  RequireError({"vector_add", "--set", StrCat(x, "=1")}, 2,
               StrCat("unknown setting '", x64, "... (100000 characters)' for vector_add; valid keys: type, block, n"));
  RequireError({"vector_add", "--set", StrCat("block=", std::string(100000, '9'))}, 2,
               StrCat("vector_add: block=", std::string(64, '9'), "... (100000 characters) is not an unsigned 32-bit "
                      "integer"));
  RequireError({"vector_add", "--set", StrCat("type=", x)}, 2,
               StrCat("vector_add: type=", x64, "... (100000 characters) is not supported; choose one of f16, f32, "
                      "f64, s32, u32, s64, u64"));
  RequireError({"vector_add", StrCat("--", x)}, 2, StrCat("unknown option '--", std::string(62, 'x'),
                                                          "... (100002 characters)' (see --help)"));
  RequireError({"vector_add", StrCat("--target=", x)}, 2,
               StrCat("unknown target '", x64, "... (100000 characters)'; supported targets: ",
                      ir::SupportedTargetList()));
  RequireError({"vector_add", StrCat("--dump-after=", x)}, 2,
               StrCat("--dump-after: unknown pass '", x64, "... (100000 characters)'; passes: verify, constfold, "
                      "pow2div, identities, reassoc, copyprop, cse, branches, licm, strength, rotate, dce, regcount, all"));
}

// Item 15: an output that cannot be written fails the run.
TEST_CASE("ptx-dump fails when its output cannot be written", "[ptx_dump]") {
  for (std::vector<std::string> args : {std::vector<std::string>{"vector_add"}, {"--list"}, {"--help"}}) {
    std::ostringstream out, err;
    out.setstate(std::ios::badbit);  // as std::cout on a full disk or a closed stdout
    INFO(StrJoin(args, " "));
    CHECK(tools::RunPtxDump(args, out, err) == 1);
    CHECK(err.str() == "ptx-dump: cannot write to stdout\n");
  }
  RequireError({"vector_add", "-o", "/nonexistent/dir/out.ptx"}, 1, "cannot write /nonexistent/dir/out.ptx");
}

// Runs the installed-style binary through the shell; returns its exit code and stdout.
Result RunBinary(const std::string& args) {
  const std::string command = StrCat(PTXFORGE_BINARY_DIR, "/tools/ptx-dump ", args, " 2>/dev/null");
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) r.out.append(buf, n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST_CASE("the ptx-dump binary: identical PTX on two runs, exit codes", "[ptx_dump]") {
  Result first = RunBinary("reduce_sum");
  Result second = RunBinary("reduce_sum");
  REQUIRE(first.code == 0);
  REQUIRE(first.out == Golden("reduce_sum.sm_80.ptx"));
  REQUIRE(second.out == first.out);
  REQUIRE(RunBinary("vector_add --set block=abc").code == 2);
  REQUIRE(RunBinary("no_such_kernel").code == 2);
  // Item 15: a failed write to stdout (a full device, a closed stdout) or -o is exit 1.
  REQUIRE(RunBinary("vector_add >/dev/full").code == 1);
  REQUIRE(RunBinary("--list >/dev/full").code == 1);
  REQUIRE(RunBinary("--list >&-").code == 1);
  REQUIRE(RunBinary("vector_add -o /dev/full").code == 1);
}

}  // namespace
}  // namespace ptxforge
