// Internal to `shapeflow._core` (src/python): what its parts share: errors raised as
// shapeflow.Error, where a model comes from, one inference's state, JSON as Python objects.
#pragma once

#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/report/json_writer.h"
#include "shapeflow/report/report.h"

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace sf::python {

namespace py = pybind11;

/// What a library error becomes in Python (shapeflow.Error).
struct Error : std::runtime_error {
  explicit Error(const std::string &message) : std::runtime_error(validUtf8(message)) {}
};

// Names and messages come from model files and may hold bytes that are not UTF-8: everything
// that becomes a Python str goes through validUtf8 (U+FFFD for such bytes), as the JSON does.
template <class T> T take(Result<T> r) {
  if (!r.ok()) throw Error(r.error().message);
  return std::move(*r);
}
inline void take(Result<void> r) {
  if (!r.ok()) throw Error(r.error().message);
}
inline py::str text(std::string_view s) { return py::str(validUtf8(s)); }

/// Where a model comes from: a file (mapped again for each inference) or bytes held here.
struct Source {
  std::string path;                        // empty for bytes
  std::shared_ptr<const std::string> bytes; // null for a path
  std::string label() const { return path.empty() ? "<bytes>" : path; }
};

inline Graph loadGraph(const Source &s, Diagnostics &diags, const onnx::ImportOptions &options = {}) {
  if (s.bytes) return take(onnx::loadGraphBuffer(*s.bytes, diags, s.label(), options));
  return take(onnx::loadGraphFile(s.path, diags, options));
}

/// One inference: the graph with its facts, kept alive by every object that refers to it.
struct State {
  Source source;
  Graph graph;
  Diagnostics diags;
  InferStats stats;
};
using StatePtr = std::shared_ptr<State>;

/// A JSON value as the Python object it reads as (strings made valid UTF-8).
py::object toPython(const nlohmann::json &j);
/// JSON text from the report code, as Python objects (names that are not UTF-8 already replaced).
py::object fromJsonText(const std::string &text);

} // namespace sf::python
