#include "ir/instruction_list.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace ptxforge::ir {

// Plain operator new: Instruction needs no more than its alignment.
static_assert(alignof(Instruction) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

namespace {

// One chunk of kFirstCapacity instructions that the thread keeps when a
// body holding one is freed, for the next body's first chunk (a builder
// reserves that size): a thread that makes small kernels one after another
// asks malloc for their bodies once. A request of 3,840 bytes is above
// glibc's per-thread caches (tcache: up to 1,032), so malloc serves it from
// its shared bins, and the first such request after other work sorts every
// block that work freed: 3-10 us inside vector_add's codegen after
// cold_bench's disturbance (4,000 blocks freed), the most expensive call of
// the codegen.
//
// The pointer is a trivially destructible thread_local, which g++ reads
// without a guard; the owner that frees it when the thread exits is touched
// only when a chunk is kept, so a thread that never frees a body registers
// nothing (the registration, __cxa_thread_atexit, is not on the first
// codegen's path). Once the owner has run, bodies freed by later thread
// exit handlers are freed, not kept.
thread_local Instruction* t_spare_chunk = nullptr;
thread_local bool t_spare_owner_gone = false;
struct SpareChunkOwner {
  ~SpareChunkOwner() {
    ::operator delete(t_spare_chunk);
    t_spare_chunk = nullptr;
    t_spare_owner_gone = true;
  }
};
thread_local SpareChunkOwner t_spare_owner;

}  // namespace

Instruction* InstructionList::AllocateChunk(size_t n) {
  if (n == kFirstCapacity && t_spare_chunk != nullptr) {
    Instruction* chunk = t_spare_chunk;
    t_spare_chunk = nullptr;
    return chunk;
  }
  return static_cast<Instruction*>(::operator new(n * sizeof(Instruction)));
}

void InstructionList::FreeChunk(Instruction* chunk, size_t n) {
  if (n == kFirstCapacity && t_spare_chunk == nullptr && !t_spare_owner_gone) {
    (void)&t_spare_owner;  // registers the owner's destructor on the thread's first keep
    t_spare_chunk = chunk;
    return;
  }
  ::operator delete(chunk);
}

bool InstructionList::ThreadHoldsSpareChunk() { return t_spare_chunk != nullptr; }


void InstructionList::ResizeLast(size_t n) {
  const size_t last = num_chunks_ == 0 ? 0 : num_chunks_ - 1;
  const size_t start = last << kChunkShift;  // the last chunk's first index
  // pop_back leaves chunks past the end: the last may hold none.
  const size_t held = size_ > start ? size_ - start : 0;
  assert(n >= held && n <= kChunkSize);
  Instruction* chunk = AllocateChunk(n);
  Instruction* old = num_chunks_ ? chunks_[last] : nullptr;
  for (size_t i = 0; i < held; ++i) {
    new (&chunk[i]) Instruction(std::move(old[i]));
    old[i].~Instruction();
  }
  if (old != nullptr) FreeChunk(old, ChunkCapacity(last));
  chunks_[last] = chunk;
  num_chunks_ = last + 1;
  capacity_ = start + n;
}

void InstructionList::Grow() {
  if (LastIsShort()) {
    // A short last chunk grows like a vector up to kChunkSize.
    const size_t held = capacity_ & (kChunkSize - 1);
    ResizeLast(held == 0 ? kFirstCapacity : std::min(2 * held, kChunkSize));
    return;
  }
  if (num_chunks_ == table_capacity_) {
    const size_t cap = std::max<size_t>(8, 2 * table_capacity_);
    Instruction** table = new Instruction*[cap];
    std::memcpy(table, chunks_, num_chunks_ * sizeof(Instruction*));
    if (chunks_ != &inline_chunk_) delete[] chunks_;
    chunks_ = table;
    table_capacity_ = cap;
  }
  chunks_[num_chunks_++] = AllocateChunk(kChunkSize);
  capacity_ += kChunkSize;
}

void InstructionList::reserve(size_t n) {
  if (n <= capacity_) return;
  if (LastIsShort()) {
    // Enlarge the short last chunk to what n needs of it, up to kChunkSize.
    const size_t start = num_chunks_ == 0 ? 0 : (num_chunks_ - 1) << kChunkShift;
    ResizeLast(std::min(n - start, kChunkSize));
    if (n <= capacity_) return;
  }
  // Then only the chunk table: chunks are allocated as they fill.
  const size_t tables = (n + kChunkSize - 1) >> kChunkShift;
  if (tables > table_capacity_) {
    Instruction** table = new Instruction*[tables];
    std::memcpy(table, chunks_, num_chunks_ * sizeof(Instruction*));
    if (chunks_ != &inline_chunk_) delete[] chunks_;
    chunks_ = table;
    table_capacity_ = tables;
  }
}

void InstructionList::shrink_to_fit() {
  if (size_ == capacity_) return;
  if (size_ == 0) {
    Free();
    return;
  }
  FreePastEnd();
  // Less room than a first chunk's first size (under 4 KB) is left: cutting
  // it would cost a small kernel an allocation and a copy of its body in
  // every pass that deletes an instruction.
  if (capacity_ - size_ >= kFirstCapacity) ResizeLast(size_ - ((num_chunks_ - 1) << kChunkShift));
}

void InstructionList::resize(size_t n) {
  if (n > size_) {
    // A short last chunk is sized to what n needs, not doubled: a body
    // edit grows the body once, and doubling there raised the peak heap of
    // strength reduction (scale_bench's nests of loops at 1k: 195.5 -> 204.4
    // bytes per instruction). Growing by one at a time is push_back's job.
    reserve(n);
    while (size_ < n) emplace_back();
    return;
  }
  for (size_t i = n; i < size_; ++i) (*this)[i].~Instruction();
  size_ = n;
  FreePastEnd();
}

void InstructionList::FreePastEnd() {
  // The chunks past the one holding the last instruction (the first chunk
  // stays); those kept are full size, since only the last may be short.
  const size_t keep = std::max<size_t>(1, (size_ + kChunkSize - 1) >> kChunkShift);
  if (num_chunks_ > keep) {
    for (size_t c = keep; c < num_chunks_; ++c) {
      FreeChunk(chunks_[c], ChunkCapacity(c));
    }
    num_chunks_ = keep;
    capacity_ = keep << kChunkShift;
  }
}

void InstructionList::Rotate(size_t at, size_t from) {
  if (at == from || from == size_) return;
  // Small ranges only in practice (tests, one inserted instruction): rotate
  // through the iterators.
  std::rotate(begin() + static_cast<std::ptrdiff_t>(at), begin() + static_cast<std::ptrdiff_t>(from), end());
}

InstructionList::iterator InstructionList::insert(const_iterator pos, Instruction inst) {
  const size_t at = pos.index();
  const size_t old = size_;
  emplace_back(std::move(inst));
  Rotate(at, old);
  return begin() + static_cast<std::ptrdiff_t>(at);
}

InstructionList::iterator InstructionList::erase(const_iterator first, const_iterator last) {
  const size_t a = first.index();
  const size_t b = last.index();
  if (a != b) {
    std::move(begin() + static_cast<std::ptrdiff_t>(b), end(), begin() + static_cast<std::ptrdiff_t>(a));
    resize(size_ - (b - a));
  }
  return begin() + static_cast<std::ptrdiff_t>(a);
}

void InstructionList::Free() {
  for (size_t i = 0; i < size_; ++i) (*this)[i].~Instruction();
  for (size_t c = 0; c < num_chunks_; ++c) FreeChunk(chunks_[c], ChunkCapacity(c));
  if (chunks_ != &inline_chunk_) delete[] chunks_;
  chunks_ = &inline_chunk_;
  inline_chunk_ = nullptr;
  num_chunks_ = 0;
  table_capacity_ = 1;
  size_ = 0;
  capacity_ = 0;
}

void InstructionList::Steal(InstructionList& o) {
  if (o.chunks_ == &o.inline_chunk_) {
    inline_chunk_ = o.inline_chunk_;
    chunks_ = &inline_chunk_;
  } else {
    chunks_ = o.chunks_;
  }
  num_chunks_ = o.num_chunks_;
  table_capacity_ = o.table_capacity_;
  size_ = o.size_;
  capacity_ = o.capacity_;
  o.chunks_ = &o.inline_chunk_;
  o.inline_chunk_ = nullptr;
  o.num_chunks_ = 0;
  o.table_capacity_ = 1;
  o.size_ = 0;
  o.capacity_ = 0;
}

void InstructionList::MoveFrom(std::vector<Instruction>& v) {
  reserve(v.size());
  for (Instruction& inst : v) emplace_back(std::move(inst));
  v.clear();
  v.shrink_to_fit();
}

}  // namespace ptxforge::ir
