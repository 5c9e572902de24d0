// Internal to `shapeflow._core`: Dim's arithmetic and comparisons (dim.h).
#include "dim.h"

#include <fmt/format.h>

namespace sf::python {
namespace {


/// An int or a Dim of the same inference as a Dimension (arithmetic and comparison operands).
std::optional<Dimension> operand(const Dim &self, const py::object &o) {
  if (py::isinstance<py::bool_>(o)) return std::nullopt;
  if (py::isinstance<py::int_>(o)) {
    auto v = py::cast<int64_t>(o);
    if (v < 0) throw Error("a dim is a size of at least 0, not " + std::to_string(v));
    return Dimension(v);
  }
  if (py::isinstance<Dim>(o)) {
    const Dim &other = py::cast<const Dim &>(o);
    if (other.state != self.state) throw Error("dims of different inferences cannot be combined");
    return other.d;
  }
  return std::nullopt;
}

/// `a op b` in the library's algebra (the canonical expression a rule would make), as a Python
/// int when it is a number; NotImplemented for an operand that is not an int or a Dim.
template <class Op> py::object combine(const Dim &self, const py::object &o, bool reflected, Op op) {
  auto other = operand(self, o);
  if (!other) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  ExprScope scope = self.state->graph.enter();
  const Dimension &a = reflected ? *other : self.d, &b = reflected ? self.d : *other;
  return dimObject(self.state, take(op(a, b)));
}

/// a < b as far as the facts decide it: True or False when every binding agrees, an error when
/// it depends on the sizes (Python's comparisons must answer).
bool less(const Dim &self, const py::object &o, bool orEqual, bool reflected) {
  auto other = operand(self, o);
  if (!other) throw py::type_error("a Dim compares with an int or a Dim");
  ExprScope scope = self.state->graph.enter();
  const Dimension &a = reflected ? *other : self.d, &b = reflected ? self.d : *other;
  Dimension diff = take(b - a); // b - a >= 1 (a < b) or >= 0 (a <= b)
  int64_t need = orEqual ? 0 : 1;
  if (diff.minLength() >= need) return true;
  if (diff.isStatic() || diff.maxLength() < need) return false;
  throw Error(fmt::format("{} {} {} depends on the sizes (the difference is {})", a.toString(),
                          orEqual ? "<=" : "<", b.toString(), diff.toString()));
}

} // namespace

py::object dimObject(const StatePtr &s, const Dimension &d) {
  if (d.isStatic()) return py::int_(d.length());
  return py::cast(Dim{s, d});
}

py::object dimList(const StatePtr &s, const std::vector<Dimension> &dims) {
  py::list l;
  for (const Dimension &d : dims) l.append(dimObject(s, d));
  return l;
}


void bindDim(py::module_ &m) {
  py::class_<Dim>(m, "Dim", "A dim that is not a number: a symbol, an expression of symbols, or an interval.")
      .def_property_readonly("expr", [](const Dim &d) { return text(d.expr()); },
                             "The dim as a Python integer expression of symbol names, or '?'.")
      .def_property_readonly("min", &Dim::min)
      .def_property_readonly("max", &Dim::max, "The upper bound, None when unbounded.")
      .def_property_readonly("is_static", &Dim::isStatic)
      .def("evaluate", &Dim::evaluate, "The dim's value with its symbols bound: d.evaluate(N=2, H=224).")
      .def("__int__", &Dim::toInt)
      .def("__index__", &Dim::toInt)
      .def("__eq__", &Dim::equals)
      .def("__ne__", [](const Dim &d, const py::object &o) { return !d.equals(o); })
      .def("__add__", [](const Dim &d, const py::object &o) { return combine(d, o, false, [](auto &a, auto &b) { return a + b; }); })
      .def("__radd__", [](const Dim &d, const py::object &o) { return combine(d, o, true, [](auto &a, auto &b) { return a + b; }); })
      .def("__sub__", [](const Dim &d, const py::object &o) { return combine(d, o, false, [](auto &a, auto &b) { return a - b; }); })
      .def("__rsub__", [](const Dim &d, const py::object &o) { return combine(d, o, true, [](auto &a, auto &b) { return a - b; }); })
      .def("__mul__", [](const Dim &d, const py::object &o) { return combine(d, o, false, [](auto &a, auto &b) { return a * b; }); })
      .def("__rmul__", [](const Dim &d, const py::object &o) { return combine(d, o, true, [](auto &a, auto &b) { return a * b; }); })
      .def("__floordiv__", [](const Dim &d, const py::object &o) { return combine(d, o, false, [](auto &a, auto &b) { return a.floorDiv(b); }); })
      .def("__rfloordiv__", [](const Dim &d, const py::object &o) { return combine(d, o, true, [](auto &a, auto &b) { return a.floorDiv(b); }); })
      .def("__lt__", [](const Dim &d, const py::object &o) { return less(d, o, false, false); })
      .def("__le__", [](const Dim &d, const py::object &o) { return less(d, o, true, false); })
      .def("__gt__", [](const Dim &d, const py::object &o) { return less(d, o, false, true); })
      .def("__ge__", [](const Dim &d, const py::object &o) { return less(d, o, true, true); })
      .def("minimum", [](const Dim &d, const py::object &o) { return combine(d, o, false, [](auto &a, auto &b) { return sf::Dimension::min(a, b); }); },
           "min(self, other) as an expression")
      .def("maximum", [](const Dim &d, const py::object &o) { return combine(d, o, false, [](auto &a, auto &b) { return sf::Dimension::max(a, b); }); },
           "max(self, other) as an expression")
      .def("__hash__", [](const Dim &d) { return py::hash(py::str(d.json().dump())); })
      .def("__str__", [](const Dim &d) { return text(d.expr()); })
      .def("__repr__", [](const Dim &d) { return text(d.repr()); });
}

} // namespace sf::python
