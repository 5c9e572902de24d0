// Internal to `shapeflow._core`: the Python type Dim (a dim that is not a number) with its
// arithmetic and comparisons in the library's algebra.
#pragma once

#include "common.h"
#include "shapeflow/dim/expr.h"

#include <pybind11/pybind11.h>

#include <vector>

namespace sf::python {

/// A dim of a fact: a number, a symbol, an expression of symbols, or an interval.
struct Dim {
  StatePtr state;
  Dimension d;

  nlohmann::json json() const {
    ExprScope scope = state->graph.enter();
    return dimJson(d);
  }
  bool isStatic() const { return d.isStatic(); }
  std::string expr() const {
    auto j = json();
    return j.is_number() ? j.dump() : j["expr"].get<std::string>();
  }
  /// The bounds as the JSON gives them (None: unbounded; a float expression may be below 0).
  py::object min() const { return bound("min"); }
  py::object max() const { return bound("max"); }
  py::object bound(const char *which) const {
    auto j = json();
    if (j.is_number()) return py::int_(j.get<int64_t>());
    return j[which].is_null() ? py::object(py::none()) : py::object(py::int_(j[which].get<int64_t>()));
  }
  int64_t toInt() const {
    if (!d.isStatic()) throw Error("the dim " + expr() + " is not static");
    return d.length();
  }
  int64_t evaluate(const py::kwargs &binding) const {
    if (d.isStatic()) return d.length();
    ExprScope scope = state->graph.enter();
    if (!d.expr()) throw Error("the dim " + expr() + " is an interval, not an expression of symbols");
    std::map<SymbolId, int64_t> values;
    for (const auto &[k, v] : binding) {
      std::string name = py::cast<std::string>(k);
      auto s = state->graph.symbols.find(name);
      if (!s) throw Error("the model has no symbol '" + name + "'");
      values[*s] = py::cast<int64_t>(v);
    }
    auto lookup = [&](SymbolId s) -> std::optional<int64_t> {
      auto it = values.find(s);
      return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
    auto r = sf::evaluate(d.expr(), lookup);
    if (!r.ok()) throw Error(expr() + ": " + r.error().message);
    return *r;
  }
  std::string repr() const {
    return "Dim('" + expr() + "', min=" + py::cast<std::string>(py::str(min())) +
           ", max=" + py::cast<std::string>(py::str(max())) + ")";
  }
  bool equals(const py::object &o) const {
    if (py::isinstance<py::int_>(o)) return d.isStatic() && d.length() == py::cast<int64_t>(o);
    if (py::isinstance<Dim>(o)) return json() == py::cast<const Dim &>(o).json();
    return false;
  }
};

/// A dim as Python reads it: an int when it is a number, else a Dim of the inference.
py::object dimObject(const StatePtr &s, const Dimension &d);
py::object dimList(const StatePtr &s, const std::vector<Dimension> &dims);

/// Adds the type Dim to the module.
void bindDim(py::module_ &m);

} // namespace sf::python
