// Thread, lane and warp indices computed from %tid.
#include "builder/collectives.h"

namespace ptxforge {

Value<U32> LinearThreadIndex(KernelBuilder& b, Loc loc) {
  Value<U32> z = b.TidZ(loc);
  Value<U32> ny = b.NtidY(loc);
  Value<U32> y = b.TidY(loc);
  Value<U32> yz = b.Mad(z, ny, y, loc);
  Value<U32> nx = b.NtidX(loc);
  Value<U32> x = b.TidX(loc);
  return b.Mad(yz, nx, x, loc);
}

Value<U32> LaneIndex(KernelBuilder& b, Value<U32> tid, Loc loc) { return b.And(tid, 31u, loc); }
Value<U32> LaneIndex(KernelBuilder& b, Loc loc) { return LaneIndex(b, b.TidX(loc), loc); }
Value<U32> WarpIndex(KernelBuilder& b, Value<U32> tid, Loc loc) { return b.Shr(tid, 5u, loc); }
Value<U32> WarpIndex(KernelBuilder& b, Loc loc) { return WarpIndex(b, b.TidX(loc), loc); }

}  // namespace ptxforge
