// Node attributes: a tagged value (ONNX's AttributeProto without the sparse and type kinds) and
// a small ordered map from names to values with typed getters whose errors say what is wrong:
// `attribute 'axis' is missing`, `attribute 'axis' is a string, expected an int`.
//
// Tensors and graphs are held by shared_ptr: copying a node (or a Graph) shares its constant
// tensors (immutable) and its subgraphs (use Graph::clone() for a deep copy).
#pragma once

#include "shapeflow/ir/fact.h"
#include "shapeflow/ir/tensor.h"
#include "shapeflow/support/result.h"

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace sf {

class Graph;

enum class AttributeKind : uint8_t {
  Int,
  Float,
  String,
  Ints,
  Floats,
  Strings,
  Tensor,
  Tensors,
  Graph,
  Graphs,
  Type, // ONNX's TYPE_PROTO: the fact of the tensor a type declares (Optional's `type`)
  Types
};

/// `int`, `float`, `string`, `ints`, `floats`, `strings`, `tensor`, `tensors`, `graph`, `graphs`,
/// `type`, `types`.
const char *toString(AttributeKind k);

using TensorPtr = std::shared_ptr<const Tensor>;
using GraphPtr = std::shared_ptr<Graph>;
/// A declared type: the fact of the tensor (for a sequence or an optional, of its element).
using TypePtr = std::shared_ptr<const Fact>;

class Attribute {
public:
  using Value =
      std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                   std::vector<std::string>, TensorPtr, std::vector<TensorPtr>, GraphPtr,
                   std::vector<GraphPtr>, TypePtr, std::vector<Fact>>;

  Attribute() : v_(int64_t(0)) {}
  template <std::integral T> Attribute(T v) : v_(int64_t(v)) {}
  Attribute(double v) : v_(v) {}
  Attribute(std::string v) : v_(std::move(v)) {}
  Attribute(const char *v) : v_(std::string(v)) {}
  Attribute(std::vector<int64_t> v) : v_(std::move(v)) {}
  Attribute(std::initializer_list<int64_t> v) : v_(std::vector<int64_t>(v)) {}
  Attribute(std::vector<double> v) : v_(std::move(v)) {}
  Attribute(std::vector<std::string> v) : v_(std::move(v)) {}
  Attribute(TensorPtr v) : v_(std::move(v)) {}
  Attribute(Tensor v) : v_(TensorPtr(std::make_shared<const Tensor>(std::move(v)))) {}
  Attribute(std::vector<TensorPtr> v) : v_(std::move(v)) {}
  Attribute(GraphPtr v) : v_(std::move(v)) {}
  Attribute(std::vector<GraphPtr> v) : v_(std::move(v)) {}
  Attribute(TypePtr v) : v_(std::move(v)) {}
  Attribute(std::vector<Fact> v) : v_(std::move(v)) {}

  AttributeKind kind() const { return AttributeKind(v_.index()); }
  const Value &value() const { return v_; }
  Value &value() { return v_; }
  template <class T> const T *get() const { return std::get_if<T>(&v_); }
  template <class T> T *get() { return std::get_if<T>(&v_); }

private:
  Value v_;
};

/// An ordered map name -> Attribute (insertion order is kept: it is the printed order).
class Attributes {
public:
  using Item = std::pair<std::string, Attribute>;

  Attributes() = default;
  Attributes(std::initializer_list<Item> items);

  /// Sets (replacing a value of the same name in place, else appending).
  void set(std::string name, Attribute value);
  bool erase(std::string_view name);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const Attribute *find(std::string_view name) const;
  Attribute *find(std::string_view name);
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }

  // Typed getters: an error when missing (unless a default is given) or of another kind.
  // getFloat/getFloats also accept an int / ints attribute (`alpha = 1` in the text form);
  // an empty ints list reads as an empty list of any kind (the text form's `[]`).
  Result<int64_t> getInt(std::string_view name) const;
  Result<int64_t> getInt(std::string_view name, int64_t otherwise) const;
  Result<std::vector<int64_t>> getInts(std::string_view name) const;
  /// The ints in place (no copy); valid while these attributes live and are not changed.
  Result<std::span<const int64_t>> intsView(std::string_view name) const;
  Result<std::vector<int64_t>> getInts(std::string_view name,
                                       std::vector<int64_t> otherwise) const;
  Result<double> getFloat(std::string_view name) const;
  Result<double> getFloat(std::string_view name, double otherwise) const;
  Result<std::vector<double>> getFloats(std::string_view name) const;
  Result<std::string> getString(std::string_view name) const;
  Result<std::string> getString(std::string_view name, std::string otherwise) const;
  Result<std::vector<std::string>> getStrings(std::string_view name) const;
  Result<TensorPtr> getTensor(std::string_view name) const;
  Result<std::vector<TensorPtr>> getTensors(std::string_view name) const;
  Result<GraphPtr> getGraph(std::string_view name) const;
  Result<std::vector<GraphPtr>> getGraphs(std::string_view name) const;
  Result<TypePtr> getType(std::string_view name) const;
  Result<std::vector<Fact>> getTypes(std::string_view name) const;

private:
  template <class T> Result<T> getAs(std::string_view name, AttributeKind want) const;
  std::vector<Item> items_;
};

} // namespace sf
