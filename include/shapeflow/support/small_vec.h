// A vector of trivially copyable elements that keeps its first N elements inline, for the short
// lists of hot paths (an expression's terms, a node's input facts, an outlet's readers) that would
// otherwise cost a heap allocation each. Only what those paths use: push_back, append, erase,
// clear, indexing, iteration.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>

namespace sf {

template <class T, size_t N> class SmallVec {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "SmallVec holds trivially copyable elements only");
  static_assert(N > 0);

public:
  using value_type = T;
  SmallVec() = default;
  SmallVec(const SmallVec &o) { assign(o.data(), o.size()); }
  SmallVec(SmallVec &&o) noexcept { take(o); }
  SmallVec &operator=(const SmallVec &o) {
    if (this != &o) {
      size_ = 0;
      assign(o.data(), o.size());
    }
    return *this;
  }
  SmallVec &operator=(SmallVec &&o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallVec() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T *data() { return heap_ ? heap_ : inline_; }
  const T *data() const { return heap_ ? heap_ : inline_; }
  T &operator[](size_t i) { return data()[i]; }
  const T &operator[](size_t i) const { return data()[i]; }
  T *begin() { return data(); }
  T *end() { return data() + size_; }
  const T *begin() const { return data(); }
  const T *end() const { return data() + size_; }
  T &back() { return data()[size_ - 1]; }
  operator std::span<const T>() const { return {data(), size_}; }

  void clear() { size_ = 0; }
  /// Removes the element at `pos` (a pointer into this vector), keeping the order of the rest.
  void erase(const T *pos) {
    size_t i = size_t(pos - data());
    if (i >= size_) return;
    std::memmove(data() + i, data() + i + 1, (size_ - i - 1) * sizeof(T));
    --size_;
  }
  /// Appends [first, last), which must not point into this vector.
  void append(const T *first, const T *last) {
    size_t n = size_t(last - first);
    if (size_ + n > capacity()) grow(std::max(size_ + n, capacity() * 2));
    if (n) std::memcpy(data() + size_, first, n * sizeof(T));
    size_ += n;
  }
  bool operator==(const SmallVec &o) const {
    return size_ == o.size_ && (size_ == 0 || std::memcmp(data(), o.data(), size_ * sizeof(T)) == 0);
  }
  void reserve(size_t n) {
    if (n > capacity()) grow(n);
  }
  /// Appends a value-initialised element and returns it.
  T &emplace_back() {
    push_back(T{});
    return back();
  }
  size_t capacity() const { return heap_ ? cap_ : N; }
  void push_back(const T &v) {
    if (size_ == capacity()) {
      T copy = v; // v may live in this vector
      grow(capacity() * 2);
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }

private:
  void grow(size_t n) {
    T *p = static_cast<T *>(std::malloc(n * sizeof(T)));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data(), size_ * sizeof(T));
    if (heap_) std::free(heap_);
    heap_ = p;
    cap_ = n;
  }
  void assign(const T *p, size_t n) {
    reserve(n);
    if (n) std::memcpy(data(), p, n * sizeof(T));
    size_ = n;
  }
  void take(SmallVec &o) {
    if (o.heap_) {
      heap_ = o.heap_, cap_ = o.cap_, size_ = o.size_;
      o.heap_ = nullptr, o.cap_ = 0, o.size_ = 0;
    } else {
      heap_ = nullptr, cap_ = 0;
      size_ = o.size_;
      if (size_) std::memcpy(inline_, o.inline_, size_ * sizeof(T));
      o.size_ = 0;
    }
  }
  void release() {
    if (heap_) std::free(heap_);
    heap_ = nullptr, cap_ = 0, size_ = 0;
  }

  T *heap_ = nullptr;
  size_t size_ = 0, cap_ = 0;
  T inline_[N];
};

} // namespace sf
