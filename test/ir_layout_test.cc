// Tests of the IR's compact storage: the chunked body (ir::InstructionList),
// an instruction's destinations (ir::RegList), its location (ir::CompactLoc)
// and the kernel's interned hints.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "builder/kernel_builder.h"
#include "emit/ir_printer.h"
#include "ir/format.h"
#include "ir/instruction_list.h"
#include "ir/kernel.h"
#include "ir/verify.h"

namespace ptxforge {
namespace {

using ir::InstructionList;

// An instruction that says which one it is: its first destination is `i`.
ir::Instruction Numbered(uint32_t i) {
  ir::Instruction inst;
  inst.op = ir::Opcode::kMov;
  inst.dsts.push_back(ir::Reg{i});
  inst.srcs.push_back(ir::Operand::Imm(ir::ScalarType::kU32, i));
  return inst;
}

std::vector<uint32_t> Ids(const InstructionList& list) {
  std::vector<uint32_t> ids;
  for (const ir::Instruction& inst : list) ids.push_back(inst.dsts[0].id);
  return ids;
}

std::vector<uint32_t> Iota(uint32_t from, uint32_t to) {
  std::vector<uint32_t> v;
  for (uint32_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

TEST_CASE("InstructionList keeps order and contents across chunks", "[layout]") {
  const uint32_t n = 3 * InstructionList::kChunkSize + 17;
  InstructionList list;
  for (uint32_t i = 0; i < n; ++i) list.push_back(Numbered(i));
  REQUIRE(list.size() == n);
  CHECK(Ids(list) == Iota(0, n));
  CHECK(list[InstructionList::kChunkSize].dsts[0].id == InstructionList::kChunkSize);
  CHECK(list.back().srcs[0].bits() == n - 1);
  CHECK(list.end() - list.begin() == static_cast<std::ptrdiff_t>(n));
  // Capacity: the body plus less than one chunk.
  CHECK(list.capacity() == 4 * InstructionList::kChunkSize);

  // References stay valid while the list grows.
  ir::Instruction& first = list[0];
  for (uint32_t i = n; i < n + InstructionList::kChunkSize; ++i) list.push_back(Numbered(i));
  CHECK(&first == &list[0]);

  // Shrinking frees the chunks past the end; growing again works.
  list.resize(5);
  CHECK(Ids(list) == Iota(0, 5));
  CHECK(list.capacity() == InstructionList::kChunkSize);
  list.resize(7);
  CHECK(list.size() == 7);
  CHECK(list[6].op == ir::Opcode::kRet);  // default-constructed
  list.pop_back();
  list.pop_back();
  CHECK(Ids(list) == Iota(0, 5));
}

// Touch reads the cache lines a range of instructions spans and nothing
// else: ranges past the end, empty ones, and ones crossing chunks or ending
// in a last chunk cut to fit (shrink_to_fit) leave the list as it was. In
// the ASan build (.ci/run) a read outside the chunks fails this test.
TEST_CASE("InstructionList::Touch reads only the instructions it is given", "[layout]") {
  const uint32_t n = 2 * InstructionList::kChunkSize + 3;
  InstructionList list;
  for (uint32_t i = 0; i < n; ++i) list.push_back(Numbered(i));
  list.shrink_to_fit();
  for (auto [first, last] : std::vector<std::pair<size_t, size_t>>{
           {0, n}, {0, n + 1000}, {n, n}, {n, n + 5}, {n - 1, n}, {7, 3}, {InstructionList::kChunkSize - 1, InstructionList::kChunkSize + 1},
           {2 * InstructionList::kChunkSize, n}}) {
    list.Touch(first, last);
  }
  CHECK(Ids(list) == Iota(0, n));
  InstructionList empty;
  empty.Touch(0, 10);
  CHECK(empty.size() == 0);
}

// As with a vector, appending one of the list's own instructions is fine even
// when the first chunk grows (and moves them) to make room: the new one is
// built before the move. ASan reports a read of the freed chunk otherwise.
TEST_CASE("InstructionList appends its own elements while its first chunk grows", "[layout]") {
  InstructionList list;
  list.push_back(Numbered(7));
  for (uint32_t i = 1; i < 2 * InstructionList::kChunkSize + 3; ++i) {
    list.push_back(list.back());           // every size, 32, 64 ... kChunkSize among them
    list.emplace_back(list[0]);            // the first one, by emplace
    list.back().dsts[0] = ir::Reg{7 + i};  // tells them apart
  }
  CHECK(list.size() == 2 * (2 * InstructionList::kChunkSize + 3) - 1);
  CHECK(list[0].dsts[0].id == 7);
  CHECK(list[1].dsts[0].id == 7);  // a copy of back() when back() was the first
  CHECK(list[2].dsts[0].id == 8);
  CHECK(list[3].dsts[0].id == 8);  // push_back(back()) copied the renamed one
  CHECK(list.back().srcs[0].bits() == 7);
}

// A finished body holds no room it does not use: shrink_to_fit cuts the
// last chunk, and the list grows again from there like a vector.
TEST_CASE("InstructionList cuts its last chunk to fit and grows it again", "[layout]") {
  constexpr uint32_t kChunk = InstructionList::kChunkSize;
  InstructionList list;
  for (uint32_t i = 0; i < 2 * kChunk + 5; ++i) list.push_back(Numbered(i));
  CHECK(list.capacity() == 3 * kChunk);
  list.shrink_to_fit();
  CHECK(list.capacity() == 2 * kChunk + 5);
  CHECK(Ids(list) == Iota(0, 2 * kChunk + 5));

  // Appending one of its own instructions while the short last chunk grows
  // (and moves them) copies it first (ASan reports a read of the freed chunk
  // otherwise).
  list.push_back(list.back());
  CHECK(list.capacity() == 2 * kChunk + 10);  // 5 -> 10, as a vector doubles
  CHECK(list.back().dsts[0].id == 2 * kChunk + 4);
  list.pop_back();
  for (uint32_t i = 2 * kChunk + 5; i < 3 * kChunk + 1; ++i) list.push_back(Numbered(i));
  CHECK(list.capacity() == 4 * kChunk);  // the last chunk grew to full size, then a new one
  CHECK(Ids(list) == Iota(0, 3 * kChunk + 1));

  // After pop_back empties the last chunk, shrink_to_fit frees it; the list
  // then grows into a new one.
  list.pop_back();
  list.shrink_to_fit();
  CHECK(list.capacity() == 3 * kChunk);
  list.push_back(Numbered(3 * kChunk));
  list.push_back(Numbered(3 * kChunk + 1));
  CHECK(Ids(list) == Iota(0, 3 * kChunk + 2));

  // pop_back leaves a short last chunk empty past the end: growing by
  // reserve or resize then sizes that chunk without reading it.
  list.shrink_to_fit();  // 3 * kChunk + 2: a last chunk of 2
  for (int i = 0; i < 10; ++i) list.pop_back();
  list.reserve(3 * kChunk + 20);
  CHECK(list.capacity() == 3 * kChunk + 20);
  list.resize(3 * kChunk + 2);
  CHECK(list.size() == 3 * kChunk + 2);
  CHECK(list[3 * kChunk - 9].dsts[0].id == 3 * kChunk - 9);
  CHECK(list[3 * kChunk - 8].dsts.empty());  // default-constructed
  for (uint32_t i = 3 * kChunk - 8; i < 3 * kChunk + 2; ++i) list[i] = Numbered(i);
  CHECK(Ids(list) == Iota(0, 3 * kChunk + 2));

  // Growing by resize sizes the last chunk for what it needs.
  list.shrink_to_fit();
  list.resize(3 * kChunk + 40);
  CHECK(list.capacity() == 3 * kChunk + 40);
  CHECK(list.back().op == ir::Opcode::kRet);  // default-constructed

  // Room for fewer than kFirstCapacity is kept; a copy holds exactly its
  // instructions; an empty list holds nothing.
  list.push_back(Numbered(3 * kChunk + 40));
  CHECK(list.capacity() == 3 * kChunk + 80);
  list.shrink_to_fit();
  CHECK(list.capacity() == 3 * kChunk + 41);  // 39 spare: cut
  list.push_back(Numbered(3 * kChunk + 41));
  CHECK(list.capacity() == 3 * kChunk + 82);
  for (uint32_t i = 3 * kChunk + 42; i < 3 * kChunk + 52; ++i) list.push_back(Numbered(i));
  list.shrink_to_fit();
  CHECK(list.capacity() == 3 * kChunk + 82);  // 30 spare: kept
  // Growing a short last chunk by resize sizes it to what is asked.
  list.resize(3 * kChunk + 83);
  CHECK(list.capacity() == 3 * kChunk + 83);
  InstructionList copy = list;
  CHECK(copy.capacity() == copy.size());
  copy.clear();
  copy.shrink_to_fit();
  CHECK(copy.capacity() == 0);
  copy.push_back(Numbered(1));
  CHECK(copy.capacity() == InstructionList::kFirstCapacity);
}

// A record of what a list freed by a thread exit handler left behind: an
// object whose destructor runs after the kept chunk's owner (thread_local
// objects are destroyed in the reverse order of their construction, and
// this one is made before the thread keeps any chunk).
struct LateFree {
  InstructionList list;
  bool* kept_after = nullptr;
  ~LateFree() {
    list = InstructionList();  // frees its first chunk
    *kept_after = InstructionList::ThreadHoldsSpareChunk();
  }
};

// A thread keeps the first chunk of a freed body (kFirstCapacity
// instructions, what a builder reserves) for its next body, one at most,
// and frees it when it exits (ASan's leak check reports it otherwise, in
// the sanitizer build); a chunk freed after that is not kept.
TEST_CASE("a freed body's first chunk is kept for the thread's next body", "[layout]") {
  bool held_at_start = true, held_after_free = false, reused = false, held_after_reuse = true;
  bool other_size_kept = true, held_after_c_freed = false, kept_after_exit = true;
  std::thread([&] {
    thread_local LateFree late;
    late.kept_after = &kept_after_exit;
    late.list.push_back(Numbered(9));
    held_at_start = InstructionList::ThreadHoldsSpareChunk();
    const ir::Instruction* chunk = nullptr;
    {
      InstructionList a;
      a.push_back(Numbered(0));  // a first chunk of kFirstCapacity
      InstructionList b;
      b.push_back(Numbered(1));
      chunk = &b[0];
      // Destroyed b, then a: b's chunk is kept, a's freed.
    }
    held_after_free = InstructionList::ThreadHoldsSpareChunk();
    InstructionList c;
    c.reserve(InstructionList::kFirstCapacity);
    reused = &c.emplace_back(Numbered(2)) == chunk;
    held_after_reuse = InstructionList::ThreadHoldsSpareChunk();
    {
      InstructionList d;
      d.reserve(InstructionList::kFirstCapacity + 1);  // a chunk of another size
      d.push_back(Numbered(3));
    }
    other_size_kept = InstructionList::ThreadHoldsSpareChunk();
    c = InstructionList();
    held_after_c_freed = InstructionList::ThreadHoldsSpareChunk();
    InstructionList e;
    e.push_back(Numbered(4));  // takes it again
    e.push_back(Numbered(5));
    e = InstructionList();  // and the thread exits holding it
  }).join();
  CHECK(!held_at_start);
  CHECK(held_after_free);
  CHECK(reused);
  CHECK(!held_after_reuse);
  CHECK(!other_size_kept);
  CHECK(held_after_c_freed);
  CHECK(!kept_after_exit);
}

// The builder hands over a body with less than kFirstCapacity instructions
// of room left over in its last chunk, at every size (a small kernel keeps
// its first chunk: cutting it would cost a copy of the body).
TEST_CASE("a finished kernel's body holds little spare room", "[layout]") {
  for (uint32_t n : {1u, 30u, 255u, 256u, 700u}) {
    KernelBuilder b("k", ir::Target::kSm80);
    Value<U32> x = b.Param<U32>("x");
    for (uint32_t i = 0; i < n; ++i) x = b.Add(x, 1u);
    auto kernel = b.Finish();
    REQUIRE(kernel.ok());
    CHECK(kernel->body.size() == n + 2);  // ld.param, the adds and ret
    CHECK(kernel->body.capacity() - kernel->body.size() < InstructionList::kFirstCapacity);
  }
}

// A register or label table copied without its names is refused, not read
// past the end.
TEST_CASE("the verifier refuses hint ids past the kernel's names", "[layout]") {
  ir::Kernel k;
  k.name = "k";
  k.AddReg(ir::ScalarType::kU32, false, "x");
  k.regs.push_back(ir::RegInfo{ir::ScalarType::kU32, false, 5});
  CHECK(k.hint(ir::Reg{1}).empty());
  CHECK(ir::VerifyKernel(k).message() ==
        "kernel k: register %1: hint id 5 is not in the kernel's 1 names (copied without Kernel::names?)");
  k.regs.pop_back();
  k.labels.push_back(ir::LabelInfo{2});
  CHECK(ir::VerifyKernel(k).message() ==
        "kernel k: label 0: hint id 2 is not in the kernel's 1 names (copied without Kernel::names?)");
}

// Kernel::names keeps the names back to back in one string: each reads
// back as it was stored, in order, and Set changes one name's text (longer,
// shorter, empty neighbours' offsets moved) and no other's.
TEST_CASE("a kernel's name table reads back every name and Set changes one", "[layout]") {
  ir::NameTable t;
  CHECK(t.empty());
  const std::string long_name(40, 'x');
  for (std::string_view name : {"a", "gid", long_name.c_str(), "endif"}) t.push_back(name);
  REQUIRE(t.size() == 4);
  std::vector<std::string> read(t.begin(), t.end());
  CHECK(read == std::vector<std::string>{"a", "gid", long_name, "endif"});
  t.Set(1, "global_id");
  t.Set(2, "y");
  CHECK(std::vector<std::string>(t.begin(), t.end()) == std::vector<std::string>{"a", "global_id", "y", "endif"});
  t.Set(0, "");
  CHECK(std::vector<std::string>(t.begin(), t.end()) == std::vector<std::string>{"", "global_id", "y", "endif"});
  ir::NameTable u;
  for (std::string_view name : {"", "global_id", "y", "endif"}) u.push_back(name);
  CHECK(t == u);
  u.Set(3, "endiF");
  CHECK_FALSE(t == u);
  // The same texts split differently are not the same table.
  ir::NameTable v, w;
  v.push_back("ab");
  v.push_back("c");
  w.push_back("a");
  w.push_back("bc");
  CHECK_FALSE(v == w);
  // InternName looks past an empty name.
  ir::Kernel k;
  k.names.push_back("");
  CHECK(k.InternName("a") == 2);
  CHECK(k.InternName("a") == 2);
  CHECK(k.hint_text(1).empty());
}

// InternName compares a name's length and first letter before the rest,
// over the last 16 names (ir/kernel.cc).
TEST_CASE("Kernel::InternName shares a name among the last 16 and only there", "[layout]") {
  ir::Kernel k;
  CHECK(k.InternName("") == 0);
  const uint32_t acc = k.InternName("acc");
  CHECK(acc == 1);
  CHECK(k.InternName("acc") == acc);
  CHECK(k.InternName("acd") == 2);  // the same length and first letter
  CHECK(k.InternName("bcc") == 3);  // the same length, another first letter
  CHECK(k.InternName("ac") == 4);   // a prefix
  CHECK(k.InternName("accu") == 5);
  CHECK(k.InternName("acc") == acc);
  for (int i = 0; i < 11; ++i) k.InternName(std::string(1, static_cast<char>('A' + i)));
  REQUIRE(k.names.size() == 16);
  CHECK(k.InternName("acc") == acc);  // the 16th last
  CHECK(k.InternName("acd") == 2);
  k.InternName("L");
  CHECK(k.InternName("acd") == 2);  // still the 16th last
  CHECK(k.InternName("acc") == 18);  // the 17th last: not looked for, added again
  CHECK(k.names.size() == 18);
}

TEST_CASE("InstructionList copies, moves, inserts, erases and takes vectors", "[layout]") {
  const uint32_t n = InstructionList::kChunkSize + 3;
  InstructionList a;
  for (uint32_t i = 0; i < n; ++i) a.push_back(Numbered(i));
  InstructionList b = a;
  CHECK(Ids(b) == Iota(0, n));
  InstructionList c = std::move(b);
  CHECK(Ids(c) == Iota(0, n));
  CHECK(b.empty());  // NOLINT: moved-from is empty by contract
  b = c;
  CHECK(Ids(b) == Iota(0, n));

  // A small list keeps its one chunk pointer inline: moving it must too.
  InstructionList small;
  small.push_back(Numbered(7));
  InstructionList moved = std::move(small);
  moved.push_back(Numbered(8));
  CHECK(Ids(moved) == std::vector<uint32_t>{7, 8});

  c.insert(c.begin(), Numbered(100));
  c.insert(c.begin() + 2, Numbered(101));
  std::vector<uint32_t> expected = Iota(0, n);
  expected.insert(expected.begin(), 100);
  expected.insert(expected.begin() + 2, 101);
  CHECK(Ids(c) == expected);
  c.erase(c.begin(), c.begin() + 3);
  expected.erase(expected.begin(), expected.begin() + 3);
  CHECK(Ids(c) == expected);

  InstructionList part;
  part.assign(a.begin() + 2, a.begin() + 5);
  part.insert(part.end(), a.begin() + 10, a.begin() + 12);
  CHECK(Ids(part) == std::vector<uint32_t>{2, 3, 4, 10, 11});

  std::vector<ir::Instruction> v;
  for (uint32_t i = 0; i < 3; ++i) v.push_back(Numbered(50 + i));
  part = std::move(v);
  CHECK(Ids(part) == std::vector<uint32_t>{50, 51, 52});
  part.clear();
  CHECK(part.empty());
}

TEST_CASE("RegList holds two registers inline and more on the heap", "[layout]") {
  ir::RegList regs;
  CHECK(regs.empty());
  regs.push_back(ir::Reg{1});
  regs.push_back(ir::Reg{2});
  const ir::Reg* inline_data = regs.data();
  CHECK(inline_data == regs.data());
  for (uint32_t i = 3; i <= 9; ++i) regs.push_back(ir::Reg{i});
  REQUIRE(regs.size() == 9);
  for (uint32_t i = 0; i < 9; ++i) CHECK(regs[i].id == i + 1);
  ir::RegList copy = regs;
  CHECK(copy == regs);
  ir::RegList moved = std::move(copy);
  CHECK(moved == regs);
  moved.pop_back();
  CHECK(!(moved == regs));
  moved = {ir::Reg{4}};
  CHECK(moved.size() == 1);
  CHECK(moved.back().id == 4);
  STATIC_REQUIRE(sizeof(ir::RegList) == 16);
  STATIC_REQUIRE(sizeof(ir::CompactLoc) == 8);
  STATIC_REQUIRE(sizeof(ir::RegInfo) == 8);
}

TEST_CASE("CompactLoc gives back the file and line it was made from", "[layout]") {
  const ir::SourceLoc here = ir::SourceLoc::current();
  ir::CompactLoc loc = here;
  CHECK(std::string(loc.file_name()) == here.file_name());
  CHECK(loc.line() == here.line());
  CHECK(ir::FormatLoc(loc) == ir::FormatLoc(here));
  const ir::SourceLoc other = ir::SourceLoc::current("elsewhere.cc", 12);
  ir::CompactLoc loc2 = other;
  CHECK(std::string(loc2.file_name()) == "elsewhere.cc");
  CHECK(std::string(loc.file_name()) == here.file_name());  // the first is unchanged
  CHECK(std::string(ir::CompactLoc().file_name()).empty());
}

TEST_CASE("CompactLoc keeps hundreds of files apart", "[layout]") {
  // Past the first 128 names of a process the table grows: every name keeps
  // its id, whichever order they come in.
  static char names[300][16];
  std::vector<ir::CompactLoc> locs;
  for (int i = 0; i < 300; ++i) {
    std::snprintf(names[i], sizeof names[i], "file%d.cc", i);
    locs.push_back(ir::SourceLoc::current(names[i], i + 1));
  }
  for (int i = 299; i >= 0; --i) {
    INFO("file " << i);
    CHECK(std::string(locs[i].file_name()) == names[i]);
    CHECK(locs[i].line() == static_cast<uint32_t>(i + 1));
    ir::CompactLoc again = ir::SourceLoc::current(names[i], 7);  // interned before: the same name
    CHECK(std::string(again.file_name()) == names[i]);
  }
}

TEST_CASE("hints are interned per kernel and printed as given", "[layout]") {
  KernelBuilder b("hints");
  Value<U32> tid = b.TidX();
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  Var<U32> acc2 = b.Mutable<U32>(1u, "acc");
  b.Name(tid, "lane");
  b.Assign(acc, b.Add(Value<U32>(acc), Value<U32>(acc2)));
  ir::Kernel k = b.Finish().value();
  // "acc" is stored once for both registers.
  REQUIRE(k.names.size() == 2);
  CHECK(k.names[0] == "acc");
  CHECK(k.names[1] == "lane");
  std::string ir_text = emit::PrintIr(k);
  CHECK(ir_text ==
        "kernel hints target sm_80\n"
        "{\n"
        "  %0:u32 = mov.u32 %tid.x  // lane\n"
        "  %1:u32 = mov.u32 0  // acc mutable\n"
        "  %2:u32 = mov.u32 1  // acc mutable\n"
        "  %3:u32 = add.u32 %1, %2\n"
        "  %1:u32 = mov.u32 %3  // acc mutable\n"
        "  ret\n"
        "}\n");

  ir::Kernel h;
  ir::Reg r = h.AddReg(ir::ScalarType::kU32, false, "x");
  ir::Reg s = h.AddReg(ir::ScalarType::kU32);
  ir::Label l = h.AddLabel("loop");
  CHECK(h.hint(r) == "x");
  CHECK(h.hint(s).empty());
  CHECK(h.hint(l) == "loop");
  h.SetHint(s, "x");
  CHECK(h.regs[s.id].hint_id == h.regs[r.id].hint_id);
  CHECK(h.names.size() == 2);
}

}  // namespace
}  // namespace ptxforge
