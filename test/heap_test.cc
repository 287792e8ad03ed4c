// What a small kernel's codegen asks of the heap. A fresh process pays a
// page fault for each heap page its first codegen is the first to touch,
// and the heap's top moves by what is allocated and not reused, so these
// tests pin the blocks vector_add's codegen asks for: a change that adds
// one shows here, with its size, and the README's cold-path figures say
// what a page costs. This executable replaces the global operator new and
// delete to record requests between Record's start and stop.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "emit/ir_printer.h"
#include "emit/ptx_printer.h"
#include "ir/canonical_order.h"
#include "kernels/registry.h"
#include "kernels/vector_add.h"
#include "passes/pass.h"
#include "test/test_util.h"

namespace {

// The sizes asked for while recording, in a fixed array (recording must
// not allocate).
struct Requests {
  bool on = false;
  size_t count = 0;
  size_t sizes[256] = {};
};
Requests g_requests;

}  // namespace

// Every unaligned form, so that each block is freed by the allocator that
// made it (under ASan a form left out is the sanitizer's, whose blocks it
// does not let free() release).
void* operator new(size_t n) {
  if (g_requests.on && g_requests.count < std::size(g_requests.sizes)) g_requests.sizes[g_requests.count++] = n;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return operator new(n, std::nothrow); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace ptxforge {
namespace {

using testing::Msg;

// Records the sizes of the blocks asked for from construction to Stop().
class Record {
 public:
  Record() {
    g_requests.count = 0;
    g_requests.on = true;
  }
  ~Record() { g_requests.on = false; }
  std::vector<size_t> Stop() {
    g_requests.on = false;
    return std::vector<size_t>(g_requests.sizes, g_requests.sizes + g_requests.count);
  }
};

ir::Kernel VectorAdd() {
  absl::StatusOr<ir::Kernel> k = kernels::VectorAddSpec{}.Build(ir::Target::kSm80);
  REQUIRE(Msg(k) == "OK");
  return *std::move(k);
}

// The orderer's arrays and the renumbering's come from a buffer on the
// stack when they fit (ir/canonical_order.cc): vector_add's need 1,205 and
// 168 bytes, which took three heap blocks before.
TEST_CASE("a small kernel's canonical order asks nothing of the heap", "[heap]") {
  ir::Kernel k = VectorAdd();
  const std::string before = emit::PrintIr(k);
  Record record;
  ir::CanonicalizeOrder(k);
  CHECK(record.Stop() == std::vector<size_t>{});
  CHECK(emit::PrintIr(k) == before);  // Finish() put it in canonical order already
}

// A small module's text is printed through a buffer on the stack and
// appended to the result once (emit/ptx_printer.cc): one block of exactly
// its size besides the register numbering (4 bytes a register and one
// more). The kernel is handed to the module printer as a list on the stack.
TEST_CASE("a small module's PTX asks the heap for its text's exact size", "[heap]") {
  ir::Kernel k = VectorAdd();
  REQUIRE(Msg(passes::Pipeline::Standard().Run(k)) == "OK");
  Record record;
  absl::StatusOr<std::string> ptx = emit::PrintPtx(k);
  const std::vector<size_t> sizes = record.Stop();
  REQUIRE(Msg(ptx) == "OK");
  CHECK(ptx->size() == 883);
  CHECK(sizes == std::vector<size_t>{4 * (k.regs.size() + 1), 884});
}

// A text longer than the buffer reserves the printer's estimate when the
// buffer first fills, and fits in it: one block for the text, however many
// times the buffer is flushed into it.
TEST_CASE("a larger module's PTX asks the heap for one block of text", "[heap]") {
  const kernels::KernelFamily* softmax = kernels::FindFamily("softmax");
  REQUIRE(softmax != nullptr);
  absl::StatusOr<ir::Kernel> k = testing::BuildRegistryKernel(*softmax, ir::Target::kSm80);
  REQUIRE(Msg(k) == "OK");
  Record record;
  absl::StatusOr<std::string> ptx = emit::PrintPtx(*k);
  const std::vector<size_t> sizes = record.Stop();
  REQUIRE(Msg(ptx) == "OK");
  CHECK(ptx->size() > 2 * 2048);  // the buffer filled twice
  std::vector<size_t> large;
  for (size_t s : sizes) {
    if (s > 1024) large.push_back(s);
  }
  REQUIRE(large.size() == 1);
  CHECK(large[0] > ptx->size());
  CHECK(large[0] == ptx->capacity() + 1);
}

// The whole codegen, block by block: the body's first chunk (32
// instructions of 120 bytes), the register table (32 of 8), the params (8
// of 40), the name table's offsets (16 of 8; the six names fit in the
// string's own 15 bytes), the label table (one label of 4), the passes'
// analyses (the control-flow graph's blocks and edges, the value table,
// the dominators, dead-register removal's sets: 238 bytes in eight blocks,
// most of them freed and reused), the register numbering of the printer,
// and the PTX. 5,758 bytes; the blocks a fresh process once asked for
// besides these (the orderer's 449, 24 and 756, the renumbering's 168,
// names' 512 instead of 128, the PTX's 1,453 instead of 884, the printer's
// kernel list of 8) moved its heap's top 2.3 KB further.
TEST_CASE("vector_add's codegen asks the heap for these blocks", "[heap]") {
  std::vector<size_t> sizes;
  absl::StatusOr<std::string> ptx;
  std::thread([&] {  // a thread's first kernel: no kept chunk yet
    Record record;
    ir::Kernel k = VectorAdd();
    absl::Status passes = passes::Pipeline::Standard().Run(k);
    ptx = passes.ok() ? emit::PrintPtx(k) : passes;
    sizes = record.Stop();
  }).join();
  REQUIRE(Msg(ptx) == "OK");
  CHECK(sizes == std::vector<size_t>{3840, 256, 320, 128, 4, 4, 72, 24, 84, 12, 12, 8, 22, 88, 884});
  size_t total = 0;
  for (size_t s : sizes) total += s;
  CHECK(total == 5758);
}

}  // namespace
}  // namespace ptxforge
