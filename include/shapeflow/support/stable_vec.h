// A vector whose elements never move while it grows: they live in chunks that are allocated as
// the vector grows and never reallocated. For a graph's nodes, so that
//  - a reference to a node (or to an outlet kept inline in it) survives adding nodes;
//  - a large graph is many chunks of about 50 KB instead of one block of tens of MB, which the
//    system allocator would map afresh (and fault in page by page) every time a graph is loaded.
// The first chunks grow geometrically (8, 8, 16, 32, 64 elements) so that a small graph (an If
// branch) costs a small block; every later chunk holds kChunk elements.
// Only what the graph's users need: indexing, push_back/emplace_back, back, iteration (random
// access), clear, copy and move. Erasing from the middle is not offered (Graph::compact builds a
// new one).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace sf {

template <class T> class StableVec {
  static constexpr size_t kFirstShift = 3; // the first chunk holds 8 elements
  static constexpr size_t kChunkShift = 7; // chunks from the sixth on hold 128
  static constexpr size_t kChunk = size_t(1) << kChunkShift;
  static constexpr size_t kSmallChunks = kChunkShift - kFirstShift + 1; // cover [0, kChunk)

  /// The chunk holding element i and i's place in it.
  static std::pair<size_t, size_t> locate(size_t i) {
    if (i >= kChunk) return {(i >> kChunkShift) + (kSmallChunks - 1), i & (kChunk - 1)};
    if (i < (size_t(1) << kFirstShift)) return {0, i};
    size_t b = size_t(std::bit_width(i)); // i in [2^(b-1), 2^b)
    return {b - kFirstShift, i - (size_t(1) << (b - 1))};
  }
  static size_t chunkCapacity(size_t k) {
    if (k == 0) return size_t(1) << kFirstShift;
    return k < kSmallChunks ? size_t(1) << (k + kFirstShift - 1) : kChunk;
  }

  template <bool Const> class Iter {
    using Owner = std::conditional_t<Const, const StableVec, StableVec>;

  public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T *, T *>;
    using reference = std::conditional_t<Const, const T &, T &>;

    Iter() = default;
    Iter(Owner *v, size_t i) : v_(v), i_(i) {}
    operator Iter<true>() const
      requires(!Const)
    {
      return {v_, i_};
    }

    reference operator*() const { return (*v_)[i_]; }
    pointer operator->() const { return &(*v_)[i_]; }
    reference operator[](difference_type n) const { return (*v_)[size_t(difference_type(i_) + n)]; }
    Iter &operator++() { ++i_; return *this; }
    Iter operator++(int) { Iter t = *this; ++i_; return t; }
    Iter &operator--() { --i_; return *this; }
    Iter operator--(int) { Iter t = *this; --i_; return t; }
    Iter &operator+=(difference_type n) { i_ = size_t(difference_type(i_) + n); return *this; }
    Iter &operator-=(difference_type n) { i_ = size_t(difference_type(i_) - n); return *this; }
    friend Iter operator+(Iter a, difference_type n) { return a += n; }
    friend Iter operator+(difference_type n, Iter a) { return a += n; }
    friend Iter operator-(Iter a, difference_type n) { return a -= n; }
    friend difference_type operator-(const Iter &a, const Iter &b) {
      return difference_type(a.i_) - difference_type(b.i_);
    }
    friend bool operator==(const Iter &a, const Iter &b) { return a.i_ == b.i_; }
    friend auto operator<=>(const Iter &a, const Iter &b) { return a.i_ <=> b.i_; }

  private:
    Owner *v_ = nullptr;
    size_t i_ = 0;
  };

public:
  using value_type = T;
  using size_type = size_t;
  using reference = T &;
  using const_reference = const T &;
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;

  StableVec() = default;
  StableVec(const StableVec &o) {
    reserve(o.size_);
    try {
      for (const T &x : o) push_back(x);
    } catch (...) {
      destroy(); // no destructor runs for a constructor that throws
      throw;
    }
  }
  StableVec(StableVec &&o) noexcept
      : chunks_(std::move(o.chunks_)), size_(std::exchange(o.size_, 0)) {
    o.chunks_.clear();
  }
  StableVec &operator=(const StableVec &o) {
    if (this != &o) {
      StableVec copy(o);
      swap(copy);
    }
    return *this;
  }
  StableVec &operator=(StableVec &&o) noexcept {
    if (this != &o) {
      destroy();
      chunks_ = std::move(o.chunks_);
      o.chunks_.clear();
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~StableVec() { destroy(); }
  void swap(StableVec &o) noexcept {
    chunks_.swap(o.chunks_);
    std::swap(size_, o.size_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &operator[](size_t i) {
    auto [k, j] = locate(i);
    return chunks_[k][j];
  }
  const T &operator[](size_t i) const {
    auto [k, j] = locate(i);
    return chunks_[k][j];
  }
  T &back() { return (*this)[size_ - 1]; }
  const T &back() const { return (*this)[size_ - 1]; }
  T &front() { return (*this)[0]; }
  const T &front() const { return (*this)[0]; }

  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }

  /// Room in the chunk table for `n` elements (chunks themselves are allocated as they fill).
  void reserve(size_t n) {
    if (n == 0) return;
    chunks_.reserve(locate(n - 1).first + 1);
  }

  template <class... Args> T &emplace_back(Args &&...args) {
    auto [k, j] = locate(size_);
    if (k == chunks_.size()) {
      chunks_.reserve(k + 1); // before allocating, so a failure leaks nothing
      chunks_.push_back(static_cast<T *>(
          ::operator new(chunkCapacity(k) * sizeof(T), std::align_val_t(alignof(T)))));
    }
    T *p = ::new (static_cast<void *>(chunks_[k] + j)) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(const T &x) { emplace_back(x); }
  void push_back(T &&x) { emplace_back(std::move(x)); }

  void clear() { destroy(); }

private:
  void destroy() noexcept {
    size_t left = size_;
    for (size_t k = 0; k < chunks_.size(); ++k) {
      size_t n = std::min(left, chunkCapacity(k));
      for (size_t j = 0; j < n; ++j) chunks_[k][j].~T();
      left -= n;
      ::operator delete(static_cast<void *>(chunks_[k]), std::align_val_t(alignof(T)));
    }
    chunks_.clear();
    size_ = 0;
  }

  std::vector<T *> chunks_;
  size_t size_ = 0;
};

} // namespace sf
