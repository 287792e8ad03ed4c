// ptx-dump: command-line parsing and the build -> passes -> print pipeline.
#include "tools/ptx_dump.h"

#include <cmath>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "ir/strings.h"
#include "absl/strings/str_split.h"
#include "absl/strings/numbers.h"
#include "emit/ir_printer.h"
#include "emit/ptx_printer.h"
#include "kernels/registry.h"
#include "passes/pass.h"
#include "runtime/cuda_device.h"
#include "runtime/emulator.h"
#include "kernels/problem_runner.h"
#include "runtime/ptxas.h"

namespace ptxforge::tools {
namespace {

constexpr int kOk = 0;
constexpr int kFailure = 1;
constexpr int kUsage = 2;

constexpr std::string_view kHelp = R"(usage: ptx-dump --list
       ptx-dump NAME [options]

Builds the library kernel NAME with ptxforge and prints its PTX.

  --list               print the kernel names, one per line (name TAB description)
  --target=sm_XX       target GPU (default sm_80); one of: TARGETS
  --set KEY=VALUE      change a configuration field (repeatable); an unknown
                       key is an error listing the valid keys
  --emit=ptx|ir|stats  what to print: PTX (default), the IR after the passes,
                       or statistics (instructions, registers per class,
                       maximum live registers, PTX version)
  --passes=LIST        which optimisations run (default all): all, none, or a
                       comma-separated list of names to run (constfold,cse)
                       or, starting with -NAME, to leave out of all of them
                       (-cse,-constfold); +NAME turns one back on. Names:
                       constfold (constant folding and propagation),
                       pow2div (unsigned x/2^k, x%2^k as shr, and),
                       identities (x+0, x*1, x&-1 ...), reassoc (add/sub
                       chains that cancel: (a+b)-(a-2)-2 is b), copyprop
                       (copies),
                       cse (common subexpressions), branches (constant
                       branches, unreachable blocks), licm (loop-invariant
                       code motion), strength (address arithmetic in loops
                       stepped instead of recomputed), rotate (innermost
                       loops test at their end)
  --dump-after=PASS    also print the IR to stderr after PASS (verify, an
                       optimisation's name, dce, regcount, or all)
  -o FILE, --output=FILE
                       write to FILE instead of stdout
  --validate           assemble the PTX with `ptxas -arch=<target>` and report
                       the result on stderr (fails when ptxas is missing)
  --ptxas-timeout=SECONDS
                       stop ptxas after this long (default 60) and fail
  --run=emulator|cuda  run the kernel on generated inputs of the family's
                       test shape (change it with --set, e.g. --set n=4096),
                       compare with the family's C++ reference, and print
                       the maximum errors (and the emulator's counters)
                       instead of the PTX; exit 1 when the results differ
  --profile            with --run=emulator: also print the memory-efficiency
                       profile (global sectors per request, bank conflicts,
                       divergence) and the top instructions by excess
                       sectors and by bank conflicts
  --race-check         with --run=emulator: fail on a shared-memory data race
                       in a block or a global one between blocks, naming both
                       accesses
  --time=N             with --run: after the checked launch, launch the
                       kernel N more times (1..100000) and print the median
                       and minimum time (CUDA events on a GPU, the host
                       clock on the emulator)
  --seed=N             seed for the generated inputs (default 1)
  --help               this text

Exit status: 0 success; 1 the kernel did not build, verify, assemble or
match its reference, ptxas failed or timed out, or the output could not be
written; 2 a usage error (an unknown or empty option, kernel, target, pass,
optimisation, --set key, or a --set value the kernel does not accept,
including test shapes too large to run).
)";

struct Options {
  std::string kernel;
  ir::Target target = ir::Target::kSm80;
  std::vector<std::pair<std::string, std::string>> sets;
  std::string emit = "ptx";
  std::string dump_after;
  passes::PipelineOptions passes;
  std::string output;
  bool validate = false;
  std::string run;
  bool profile = false;
  bool race_check = false;
  uint64_t seed = 1;
  int time_launches = 0;
  std::chrono::milliseconds ptxas_timeout = runtime::kDefaultPtxasTimeout;
  bool list = false;
  bool help = false;
};

// Splits "--opt=value" / "--opt value"; returns nullopt (and sets error) when
// the value is missing.
std::optional<std::string> TakeValue(std::span<const std::string> args, size_t& i, std::string_view opt,
                                     std::string& error) {
  const std::string& a = args[i];
  if (a.size() > opt.size() && a[opt.size()] == '=') return a.substr(opt.size() + 1);
  if (i + 1 < args.size()) return args[++i];
  error = StrCat(opt, " needs a value");
  return std::nullopt;
}

// Writes `text` to `out`, flushed; false (and a line on `err`) when it fails
// (a full disk, a closed stdout).
bool Write(std::ostream& out, std::string_view text, std::string_view where, std::ostream& err) {
  out << text;
  out.flush();
  if (out) return true;
  err << "ptx-dump: cannot write to " << where << "\n";
  return false;
}

std::string ParseArgs(std::span<const std::string> args, Options& o) {
  std::string error;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto is = [&](std::string_view opt) { return a == opt || a.starts_with(StrCat(opt, "=")); };
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--validate") {
      o.validate = true;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--race-check") {
      o.race_check = true;
    } else if (is("--target")) {
      std::optional<std::string> v = TakeValue(args, i, "--target", error);
      if (!v) return error;
      absl::StatusOr<ir::Target> t = ir::ParseTarget(*v);
      if (!t.ok()) return std::string(t.status().message());
      o.target = *t;
    } else if (is("--set")) {
      std::optional<std::string> v = TakeValue(args, i, "--set", error);
      if (!v) return error;
      size_t eq = v->find('=');
      if (eq == std::string::npos || eq == 0) return StrCat("--set expects KEY=VALUE, got '", ForMessage(*v), "'");
      o.sets.emplace_back(v->substr(0, eq), v->substr(eq + 1));
    } else if (is("--emit")) {
      std::optional<std::string> v = TakeValue(args, i, "--emit", error);
      if (!v) return error;
      if (*v != "ptx" && *v != "ir" && *v != "stats") {
        return StrCat("--emit must be ptx, ir or stats, not '", ForMessage(*v), "'");
      }
      o.emit = *v;
    } else if (is("--run")) {
      std::optional<std::string> v = TakeValue(args, i, "--run", error);
      if (!v) return error;
      if (*v != "emulator" && *v != "cuda") return StrCat("--run must be emulator or cuda, not '", ForMessage(*v), "'");
      o.run = *v;
    } else if (is("--seed")) {
      std::optional<std::string> v = TakeValue(args, i, "--seed", error);
      if (!v) return error;
      if (!absl::SimpleAtoi(ToAbsl(*v), &o.seed)) {
        return StrCat("--seed must be an unsigned integer, not '", ForMessage(*v), "'");
      }
    } else if (is("--time")) {
      std::optional<std::string> v = TakeValue(args, i, "--time", error);
      if (!v) return error;
      if (!absl::SimpleAtoi(ToAbsl(*v), &o.time_launches) || o.time_launches < 1 || o.time_launches > 100000) {
        return StrCat("--time must be a number of launches in 1..100000, not '", ForMessage(*v), "'");
      }
    } else if (is("--ptxas-timeout")) {
      std::optional<std::string> v = TakeValue(args, i, "--ptxas-timeout", error);
      if (!v) return error;
      double seconds = 0;
      if (!absl::SimpleAtod(ToAbsl(*v), &seconds) || !std::isfinite(seconds) || seconds <= 0 || seconds > 86400) {
        return StrCat("--ptxas-timeout must be a number of seconds in (0, 86400], not '", ForMessage(*v), "'");
      }
      o.ptxas_timeout = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000)));
    } else if (is("--passes")) {
      std::optional<std::string> v = TakeValue(args, i, "--passes", error);
      if (!v) return error;
      absl::StatusOr<passes::PipelineOptions> p = passes::PipelineOptions::Parse(*v);
      if (!p.ok()) return StrCat("--passes: ", p.status().message());
      o.passes = *p;
    } else if (is("--dump-after")) {
      std::optional<std::string> v = TakeValue(args, i, "--dump-after", error);
      if (!v) return error;
      if (v->empty()) {
        return "--dump-after needs a pass name (verify, constfold, pow2div, identities, reassoc, copyprop, cse, branches, licm, "
               "strength, rotate, dce, regcount or all)";
      }
      o.dump_after = *v;
    } else if (a == "-o" || is("--output")) {
      std::optional<std::string> v = TakeValue(args, i, a == "-o" ? "-o" : "--output", error);
      if (!v) return error;
      if (v->empty()) return "-o needs a file name";
      o.output = *v;
    } else if (a.starts_with("-")) {
      return StrCat("unknown option '", ForMessage(a), "' (see --help)");
    } else if (o.kernel.empty()) {
      o.kernel = a;
    } else {
      return StrCat("more than one kernel name given ('", ForMessage(o.kernel), "' and '", ForMessage(a), "')");
    }
  }
  if (o.time_launches > 0 && o.run.empty()) return "--time needs --run=emulator or --run=cuda";
  if ((o.profile || o.race_check) && o.run != "emulator") {
    return StrCat(o.profile ? "--profile" : "--race-check", " needs --run=emulator");
  }
  return "";
}

std::string Stats(const ir::Kernel& k) {
  std::string out = StrCat("kernel: ", k.name, "\ntarget: ", ir::TargetName(k.target), "\nptx_version: ",
                                 ir::RequiredPtxVersion(k.target, {&k}).ToString(), "\n");
  if (!k.stats) return out;
  const ir::KernelStats& s = *k.stats;
  StrAppend(&out, "instructions: ", s.instructions, "\nregisters:");
  for (int c = 0; c < ir::kNumRegClasses; ++c) {
    StrAppend(&out, " ", ir::RegClassName(static_cast<ir::RegClass>(c)), "=", s.regs_per_class[c]);
  }
  StrAppend(&out, "\nmax_live_32bit: ", s.max_live, "\nmax_live_per_class:");
  for (int c = 0; c < ir::kNumRegClasses; ++c) {
    StrAppend(&out, " ", ir::RegClassName(static_cast<ir::RegClass>(c)), "=", s.max_live_per_class[c]);
  }
  out.push_back('\n');
  return out;
}

std::string FirstLine(std::string_view s) {
  for (size_t start = 0; start < s.size();) {
    size_t nl = s.find('\n', start);
    std::string_view line = s.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (line.find("error") != std::string_view::npos) return std::string(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  size_t nl = s.find('\n');
  return std::string(s.substr(0, nl));
}

absl::StatusOr<std::unique_ptr<runtime::Device>> OpenDevice(const Options& o) {
  if (o.run == "emulator") {
    return std::unique_ptr<runtime::Device>(runtime::MakeEmulator({.profile = o.profile, .race_check = o.race_check}));
  }
  absl::StatusOr<std::unique_ptr<runtime::CudaDevice>> cuda = runtime::OpenCudaDevice();
  if (!cuda.ok()) return cuda.status();
  return std::unique_ptr<runtime::Device>(std::move(*cuda));
}

// --run: the family's test problem on a device, compared with its reference.
int Run(const Options& o, const kernels::KernelFamily& family, const kernels::Config& config, const ir::Kernel& kernel,
        std::ostream& out, std::ostream& err) {
  // Families refuse test shapes over kernels::kMaxProblemBytes before they
  // allocate; this catches one that does not.
  absl::StatusOr<kernels::TestProblem> problem = [&]() -> absl::StatusOr<kernels::TestProblem> {
    try {
      return family.MakeProblem(config, o.seed);
    } catch (const std::bad_alloc&) {
      return absl::ResourceExhaustedError(
          StrCat(family.name(), ": the test shape needs more host memory than there is (make it smaller with --set)"));
    }
  }();
  if (!problem.ok()) {  // a test shape the family does not accept: a bad --set
    err << "ptx-dump: " << problem.status().message() << "\n";
    return kUsage;
  }
  absl::StatusOr<std::unique_ptr<runtime::Device>> device = OpenDevice(o);
  if (!device.ok()) {
    err << "ptx-dump: --run=" << o.run << ": " << device.status().message() << "\n";
    return kFailure;
  }
  absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(**device, kernel, *problem, {.timed_launches = o.time_launches});
  if (!result.ok()) {
    err << "ptx-dump: " << result.status().message() << "\n";
    return kFailure;
  }
  const auto& p = *problem;
  std::string report = StrCat(kernel.name, " on ", (*device)->name(), ": ", p.shape, ", grid ", p.grid[0], "x",
                              p.grid[1], "x", p.grid[2], ", block ", p.block[0], "x", p.block[1], "x", p.block[2],
                              "\n", result->Report());
  if (auto* emulator = dynamic_cast<runtime::Emulator*>(device->get())) {
    StrAppend(&report, "counters: ", emulator->last_counters().ToString(), "\n");
    if (o.profile) StrAppend(&report, emulator->last_profile().Table());
  }
  if (!Write(out, report, "stdout", err)) return kFailure;
  if (!result->ok()) {
    err << "ptx-dump: " << kernel.name << " does not match its reference\n";
    return kFailure;
  }
  return kOk;
}

}  // namespace

int RunPtxDump(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  Options o;
  if (std::string e = ParseArgs(args, o); !e.empty()) {
    err << "ptx-dump: " << e << "\n";
    return kUsage;
  }
  if (o.help) {
    std::string help(kHelp);
    help.replace(help.find("TARGETS"), 7, ir::SupportedTargetList());
    return Write(out, help, "stdout", err) ? kOk : kFailure;
  }
  if (o.list) {
    if (!o.kernel.empty()) {
      err << "ptx-dump: --list takes no kernel name\n";
      return kUsage;
    }
    std::string list;
    for (const kernels::KernelFamily* f : kernels::AllFamilies()) StrAppend(&list, f->name(), "\t", f->description(), "\n");
    return Write(out, list, "stdout", err) ? kOk : kFailure;
  }
  if (o.kernel.empty()) {
    err << "ptx-dump: no kernel name given (ptx-dump --list shows them; --help for usage)\n";
    return kUsage;
  }
  const kernels::KernelFamily* family = kernels::FindFamily(o.kernel);
  if (family == nullptr) {
    std::vector<std::string_view> close = kernels::CloseFamilyNames(o.kernel);
    err << "ptx-dump: unknown kernel '" << ForMessage(o.kernel) << "'";
    if (!close.empty()) err << "; did you mean " << StrJoin(close, " or ") << "?";
    err << " (ptx-dump --list shows all)\n";
    return kUsage;
  }
  absl::StatusOr<kernels::Config> config = family->MakeConfig(o.sets);
  if (!config.ok()) {
    err << "ptx-dump: " << config.status().message() << "\n";
    return kUsage;
  }
  if (absl::Status s = family->ValidateConfig(*config); !s.ok()) {  // a bad --set value
    err << "ptx-dump: " << s.message() << "\n";
    return kUsage;
  }
  // Register counting runs where its numbers are printed, and under
  // --dump-after, so that every pass can be dumped after.
  passes::PipelineOptions options = o.passes;
  options.count_registers = o.emit == "stats" || !o.dump_after.empty();
  passes::Pipeline pipeline = passes::Pipeline::Standard(options);
  if (!o.dump_after.empty()) {
    absl::Status s = pipeline.DumpAfter(o.dump_after, [&err](std::string_view pass, const ir::Kernel& k) {
      err << "// IR after " << pass << "\n" << emit::PrintIr(k);
    });
    if (!s.ok()) {
      err << "ptx-dump: --dump-after: " << s.message() << "\n";
      return kUsage;
    }
  }
  absl::StatusOr<ir::Kernel> kernel = family->Build(*config, o.target);
  if (!kernel.ok()) {
    err << "ptx-dump: " << kernel.status().message() << "\n";
    return kFailure;
  }
  if (absl::Status s = pipeline.Run(*kernel); !s.ok()) {
    err << "ptx-dump: " << s.message() << "\n";
    return kFailure;
  }
  absl::StatusOr<std::string> ptx = emit::PrintPtx(*kernel);
  if (!ptx.ok()) {
    err << "ptx-dump: " << ptx.status().message() << "\n";
    return kFailure;
  }
  if (!o.run.empty()) return Run(o, *family, *config, *kernel, out, err);
  std::string text = o.emit == "ptx" ? *ptx : o.emit == "ir" ? emit::PrintIr(*kernel) : Stats(*kernel);
  if (o.output.empty()) {
    if (!Write(out, text, "stdout", err)) return kFailure;
  } else {
    std::ofstream f(o.output, std::ios::binary);
    f << text;
    f.close();
    if (!f) {
      err << "ptx-dump: cannot write " << ForMessage(o.output) << "\n";
      return kFailure;
    }
  }
  if (o.validate) {
    absl::Status v = runtime::ValidateWithPtxas(*ptx, o.target, o.ptxas_timeout);
    if (!v.ok()) {
      err << "ptx-dump: " << kernel->name << ": " << FirstLine(ToStd(v.message()))
          << (v.code() == absl::StatusCode::kDeadlineExceeded ? " (raise the limit with --ptxas-timeout=SECONDS)" : "")
          << "\n";
      return kFailure;
    }
    err << "ptx-dump: ptxas -arch=" << ir::TargetName(o.target) << " accepted " << kernel->name << "\n";
  }
  return kOk;
}

}  // namespace ptxforge::tools
