// The README's example kernel, built against the installed ptxforge; prints its PTX.
#include <cstdio>
#include <string>

#include "builder/kernel_builder.h"
#include "emit/ptx_printer.h"
using namespace ptxforge;

int main() {
  // y[i] = a * x[i] + y[i]
  KernelBuilder b("saxpy", ir::Target::kSm80);
  Value<U64> x = b.CvtaToGlobal(b.Param<U64>("x"));
  Value<U64> y = b.CvtaToGlobal(b.Param<U64>("y"));
  Value<F32> a = b.Param<F32>("a");
  Value<U32> n = b.Param<U32>("n");
  Value<U32> i = b.GlobalThreadIdX();
  b.If(b.Lt(i, n), [&] {
    Value<U64> yi = b.ElementAddr<F32>(y, i);
    Value<F32> xv = b.Load<F32>(ir::StateSpace::kGlobal, b.ElementAddr<F32>(x, i));
    b.Store(ir::StateSpace::kGlobal, yi, b.Fma(a, xv, b.Load<F32>(ir::StateSpace::kGlobal, yi)));
  });
  absl::StatusOr<ir::Kernel> kernel = b.Finish();  // verified IR, or the first error
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s\n", std::string(kernel.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<std::string> ptx = emit::PrintPtx(*kernel);
  if (!ptx.ok()) {
    std::fprintf(stderr, "%s\n", std::string(ptx.status().message()).c_str());
    return 1;
  }
  std::fputs(ptx->c_str(), stdout);
  return 0;
}
