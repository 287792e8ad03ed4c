// InstructionList: the body of a kernel, a sequence of instructions stored in
// fixed-size chunks.
#ifndef PTXFORGE_IR_INSTRUCTION_LIST_H_
#define PTXFORGE_IR_INSTRUCTION_LIST_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <utility>
#include <vector>

#include "ir/instruction.h"

namespace ptxforge::ir {

// A random-access sequence of instructions with the part of std::vector's
// interface the passes use (size, [], back, push_back, emplace_back,
// pop_back, resize, insert, assign, shrink_to_fit, iterators). Unlike a
// vector it never moves the whole body to grow: instructions live in chunks
// of kChunkSize, and a new chunk is added when the last is full. A vector
// that doubles needs its old and its new array at once, 1.5 to 3 times the
// body, which at a million instructions was the peak of the whole codegen;
// here the peak is the body plus one chunk. Only the last chunk may be
// shorter than kChunkSize, and a short last chunk grows like a vector (32,
// 64, ... kChunkSize instructions): the first chunk starts so, so a small
// kernel costs one small allocation, and shrink_to_fit cuts the last chunk
// to about the instructions it holds (a part-filled chunk of 256 is up to 30 KB,
// up to 30 bytes per instruction of a 1k-instruction kernel). References to
// elements stay valid while the list grows, except those into a short last
// chunk, which its growth (push_back, reserve) moves, as a vector's does
// (and not across insert, resize, shrink_to_fit or assignment).
//
// Indexing is chunks[i >> kChunkShift][i & (kChunkSize - 1)]: one more load
// than a vector. Measured against std::vector in bench/scale_bench (see
// README "Design notes").
class InstructionList {
 public:
  static constexpr uint32_t kChunkShift = 8;
  static constexpr size_t kChunkSize = size_t{1} << kChunkShift;  // instructions per chunk
  static constexpr size_t kFirstCapacity = 32;                    // the first chunk's first size

  template <bool kConst>
  class Iter {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Instruction;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<kConst, const Instruction*, Instruction*>;
    using reference = std::conditional_t<kConst, const Instruction&, Instruction&>;

    Iter() = default;
    Iter(Instruction* const* chunks, size_t i) : chunks_(chunks), i_(i) {}
    operator Iter<true>() const { return Iter<true>(chunks_, i_); }  // NOLINT: iterator to const_iterator

    reference operator*() const { return chunks_[i_ >> kChunkShift][i_ & (kChunkSize - 1)]; }
    pointer operator->() const { return &**this; }
    reference operator[](difference_type d) const { return *(*this + d); }
    Iter& operator++() { ++i_; return *this; }
    Iter operator++(int) { Iter t = *this; ++i_; return t; }
    Iter& operator--() { --i_; return *this; }
    Iter operator--(int) { Iter t = *this; --i_; return t; }
    Iter& operator+=(difference_type d) { i_ += d; return *this; }
    Iter& operator-=(difference_type d) { i_ -= d; return *this; }
    friend Iter operator+(Iter it, difference_type d) { return it += d; }
    friend Iter operator+(difference_type d, Iter it) { return it += d; }
    friend Iter operator-(Iter it, difference_type d) { return it -= d; }
    friend difference_type operator-(const Iter& a, const Iter& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const Iter& a, const Iter& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const Iter& a, const Iter& b) { return a.i_ <=> b.i_; }
    size_t index() const { return i_; }

   private:
    Instruction* const* chunks_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;
  using value_type = Instruction;
  using size_type = size_t;
  using reference = Instruction&;
  using const_reference = const Instruction&;

  InstructionList() = default;
  InstructionList(const InstructionList& o) {
    try {
      Append(o.begin(), o.end());
    } catch (...) {  // an instruction's copy ran out of memory: free what was built
      Free();
      throw;
    }
  }
  InstructionList(InstructionList&& o) noexcept { Steal(o); }
  // From a vector (passes that rebuild the body: `kernel.body = std::move(v)`).
  InstructionList(std::vector<Instruction>&& v) { MoveFrom(v); }  // NOLINT: implicit by design
  InstructionList& operator=(const InstructionList& o) {
    if (this != &o) {
      clear();
      Append(o.begin(), o.end());
    }
    return *this;
  }
  InstructionList& operator=(InstructionList&& o) noexcept {
    if (this != &o) {
      Free();
      Steal(o);
    }
    return *this;
  }
  InstructionList& operator=(std::vector<Instruction>&& v) {
    clear();
    MoveFrom(v);
    return *this;
  }
  ~InstructionList() { Free(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Instructions it can hold without allocating.
  size_t capacity() const { return capacity_; }

  Instruction& operator[](size_t i) {
    assert(i < size_);
    return chunks_[i >> kChunkShift][i & (kChunkSize - 1)];
  }
  const Instruction& operator[](size_t i) const {
    assert(i < size_);
    return chunks_[i >> kChunkShift][i & (kChunkSize - 1)];
  }
  Instruction& front() { return (*this)[0]; }
  const Instruction& front() const { return (*this)[0]; }
  Instruction& back() { return (*this)[size_ - 1]; }
  const Instruction& back() const { return (*this)[size_ - 1]; }

  iterator begin() { return iterator(chunks_, 0); }
  iterator end() { return iterator(chunks_, size_); }
  const_iterator begin() const { return const_iterator(chunks_, 0); }
  const_iterator end() const { return const_iterator(chunks_, size_); }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }

  void push_back(const Instruction& inst) { emplace_back(inst); }
  void push_back(Instruction&& inst) { emplace_back(std::move(inst)); }
  template <typename... Args>
  Instruction& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      if (LastIsShort()) {
        // Growing a short last chunk moves its instructions: construct the
        // new one first, since args may refer to one of them (push_back(back())).
        Instruction inst(std::forward<Args>(args)...);
        Grow();
        Instruction* slot = &chunks_[size_ >> kChunkShift][size_ & (kChunkSize - 1)];
        new (slot) Instruction(std::move(inst));
        ++size_;
        return *slot;
      }
      Grow();
    }
    Instruction* slot = &chunks_[size_ >> kChunkShift][size_ & (kChunkSize - 1)];
    new (slot) Instruction(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }
  void pop_back() {
    assert(size_ > 0);
    --size_;
    chunks_[size_ >> kChunkShift][size_ & (kChunkSize - 1)].~Instruction();
  }
  // Shrinking frees the chunks past the new end; growing appends
  // default-constructed instructions, a short last chunk sized to n (as
  // reserve(n) does).
  void resize(size_t n);
  void clear() { resize(0); }
  // Makes room for n instructions: a short last chunk is enlarged to hold
  // them, up to kChunkSize (so below kChunkSize the first chunk is sized to
  // n, for a caller that knows a small kernel's size); beyond that only the
  // chunk table grows (chunks are allocated as they fill).
  void reserve(size_t n);
  // Reads one byte of each cache line that instructions [first, last)
  // span (no effect on the contents), so that a pass that then reads them
  // in another order finds them in the caches: independent loads in
  // address order, which the processor's stream prefetcher follows. For a
  // pass that jumps between blocks: at a million instructions the body is
  // far larger than the caches, and each jump missed them. (Prefetch hints,
  // __builtin_prefetch of the same lines, changed nothing measurable here:
  // strength reduction on a million instructions of loop nests took as
  // long with them as without, and 14% less with these reads.)
  void Touch(size_t first, size_t last) const {
    last = std::min(last, size_);
    for (size_t i = first; i < last;) {
      const Instruction* chunk = chunks_[i >> kChunkShift];
      const size_t end = std::min(last, (i | (kChunkSize - 1)) + 1);  // this chunk's part
      // The first byte, then the first byte of each further cache line of
      // 64 bytes (never a byte outside the instructions).
      const uintptr_t from = reinterpret_cast<uintptr_t>(chunk + (i & (kChunkSize - 1)));
      const uintptr_t to = reinterpret_cast<uintptr_t>(chunk + ((end - 1) & (kChunkSize - 1)) + 1);
      // Volatile reads, which the compiler must make (and which may read
      // padding: unsigned char reads of indeterminate bytes are defined).
      (void)*reinterpret_cast<const volatile unsigned char*>(from);
      for (uintptr_t p = (from | 63) + 1; p < to; p += 64) (void)*reinterpret_cast<const volatile unsigned char*>(p);
      i = end;
    }
  }
  // Frees the chunks past the last instruction and cuts the last chunk to
  // the instructions it holds (moving them) when it has room for
  // kFirstCapacity or more unused, so that a finished body holds less than
  // that; a later push_back grows that chunk again like a vector.
  void shrink_to_fit();
  // Whether this thread keeps a freed first chunk (kFirstCapacity
  // instructions) for its next body: one is kept when a body holding one is
  // freed and none is kept yet, taken by the next list that asks for that
  // size, and freed when the thread exits. At most one per thread (3,840
  // bytes); for tests.
  static bool ThreadHoldsSpareChunk();

  iterator insert(const_iterator pos, Instruction inst);
  template <typename It>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = pos.index();
    const size_t old = size_;
    for (; first != last; ++first) emplace_back(*first);
    Rotate(at, old);
    return begin() + static_cast<std::ptrdiff_t>(at);
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last);
  template <typename It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) emplace_back(*first);
  }

 private:
  void Grow();
  void Free();
  void Steal(InstructionList& o);
  void MoveFrom(std::vector<Instruction>& v);
  template <typename It>
  void Append(It first, It last) {
    reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) emplace_back(*first);
    shrink_to_fit();
  }
  // Whether the last chunk holds fewer than kChunkSize (every other chunk is
  // full size), or there is none.
  bool LastIsShort() const { return (capacity_ & (kChunkSize - 1)) != 0 || capacity_ == 0; }
  // The instructions chunk c holds room for: kChunkSize, but the last
  // chunk's may be fewer.
  size_t ChunkCapacity(size_t c) const { return c + 1 < num_chunks_ ? kChunkSize : capacity_ - (c << kChunkShift); }
  // Frees the chunks past the one that holds the last instruction.
  void FreePastEnd();
  // Reallocates the last chunk (the first when there is none) to hold n
  // instructions, moving those it holds; n >= those.
  void ResizeLast(size_t n);
  // Moves [from, size) to start at `at` (elements [at, from) follow them).
  void Rotate(size_t at, size_t from);
  // A chunk of n instructions, and its release (n: the size it was
  // allocated with). A chunk of kFirstCapacity is kept for the thread's
  // next one (ir/instruction_list.cc).
  static Instruction* AllocateChunk(size_t n);
  static void FreeChunk(Instruction* chunk, size_t n);

  // The chunk table: inline_chunk_ while there is at most one chunk.
  Instruction** chunks_ = &inline_chunk_;
  Instruction* inline_chunk_ = nullptr;
  size_t num_chunks_ = 0;
  size_t table_capacity_ = 1;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_INSTRUCTION_LIST_H_
