// Tensor: an element type, a static shape and the elements. Tensors are immutable once made, so
// copies share their data. The data is either owned (held by the tensor itself), a view of bytes
// that someone else owns (a memory-mapped model file) kept alive by a shared_ptr, or absent: a
// tensor "without data" stands for a constant whose type and shape are known but whose elements
// were not loaded (shape inference rarely needs weights); reading its elements is an error.
// A String tensor holds std::strings instead of bytes.
//
// Numeric data is little-endian, row-major, packed, and may be unaligned (a view into a
// protobuf payload); elements are read with memcpy.
#pragma once

#include "shapeflow/dim/partial_shape.h"
#include "shapeflow/ir/element_type.h"
#include "shapeflow/support/float16.h"
#include "shapeflow/support/result.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sf {

class Tensor {
public:
  /// Undefined type, rank 0, no data.
  Tensor() = default;

  /// Owned bytes; their size must be elementCount * elementSize.
  static Result<Tensor> fromBytes(ElementType t, Shape shape, std::vector<std::byte> bytes);
  /// A view of bytes owned elsewhere; `keepAlive` keeps them mapped for the tensor's lifetime.
  static Result<Tensor> view(ElementType t, Shape shape, std::span<const std::byte> bytes,
                             std::shared_ptr<const void> keepAlive);
  static Result<Tensor> fromStrings(Shape shape, std::vector<std::string> values);
  /// Type and shape only; the elements are unknown.
  static Result<Tensor> withoutData(ElementType t, Shape shape);
  /// Integer (any integer type or bool) tensor; each value must fit the type.
  static Result<Tensor> fromInt64s(Shape shape, const std::vector<int64_t> &values,
                                   ElementType t = ElementType::I64);
  /// A 1-D i64 tensor of the values (never fails).
  static Tensor fromInt64s(const std::vector<int64_t> &values);
  /// Float (f16, bf16, f32, f64: rounded to the type), integer or bool (values must be integral
  /// and fit), or complex (two values, real and imaginary, per element) tensor.
  static Result<Tensor> fromDoubles(ElementType t, Shape shape, const std::vector<double> &values);
  /// A rank-0 tensor of one value (see fromDoubles).
  static Result<Tensor> scalar(ElementType t, double value);
  /// Elements from their printed spellings (the inverse of elementText): integers, floats
  /// (`0.5`, `1e-05`, `inf`, `-inf`, `nan`), `true`/`false` for bool, the (unquoted) contents
  /// for strings, two numbers per element for complex.
  static Result<Tensor> fromText(ElementType t, Shape shape,
                                 const std::vector<std::string> &elements);

  ElementType type() const { return type_; }
  const Shape &shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  /// Product of the shape (checked when the tensor was made).
  int64_t elementCount() const { return count_; }
  /// elementCount * elementSize, checked; for a String tensor the total length of the strings.
  Result<int64_t> byteSize() const;
  bool hasData() const { return hasData_; }
  bool isString() const { return type_ == ElementType::String; }
  /// The packed elements (empty for String tensors and tensors without data).
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  /// The elements of a String tensor (empty otherwise).
  const std::vector<std::string> &strings() const;

  /// The elements of an integer or bool tensor, when there are at most `maxElements`.
  Result<std::vector<int64_t>> toInt64s(size_t maxElements) const;
  /// The elements of a float, integer or bool tensor, when there are at most `maxElements`.
  Result<std::vector<double>> toDoubles(size_t maxElements) const;
  /// The printed spelling of element i (see fromText); complex prints `re, im`. Requires data.
  std::string elementText(int64_t i) const;

  /// Same type, shape and elements (bitwise for numbers); tensors without data are equal when
  /// type and shape are.
  bool operator==(const Tensor &o) const;

private:
  static Result<Tensor> make(ElementType t, Shape shape);

  ElementType type_ = ElementType::Undefined;
  Shape shape_;
  int64_t count_ = 1;
  bool hasData_ = false;
  std::shared_ptr<const void> keep_; // owner of data_ (an owned vector or a mapping)
  const std::byte *data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<const std::vector<std::string>> strings_;
};

/// `i64[2] [1, -1]`, `f32[] 0.5`, `str[2] ["a", "b"]`; with more than `maxElements` elements
/// (or without data): `f32[64,3,7,7] <37632 elements>`.
std::string toString(const Tensor &t, size_t maxElements = 16);

} // namespace sf
