// What every front end (the CLI, the golden tests, the Python module) shows of an inference:
// the readable per-tensor listing and the JSON contract that other tools parse (README "JSON
// output"). One implementation, so that the golden tests test what users see.
#pragma once

#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/graph.h"
#include "shapeflow/support/diagnostic.h"
#include "shapeflow/support/hash.h"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace sf {

struct Report {
  std::string model;
  const Graph *graph = nullptr;
  const Diagnostics *diags = nullptr;
  InferStats stats;
  /// Derived sizes and anonymous input dims printed by name (report/names.h); false: every dim
  /// expanded (`--no-names`).
  bool names = true;
};

/// The JSON object of `shapeflow infer --json`.
nlohmann::json toJson(const Report &r);
/// The same object written to `os` as it is made (report/json_writer.h), with no document in
/// memory: what the CLI prints (`indent` as JsonWriter's). Tensors come in node order; parsed,
/// the two are equal.
void writeJson(const Report &r, std::ostream &os, int indent = 1);
/// The listing of `shapeflow infer`.
void printText(const Report &r, std::ostream &os);
/// JSON text (`indent` < 0: one line). Names and messages come from model files, which may hold
/// bytes that are not UTF-8: those are replaced (U+FFFD), never an exception.
std::string jsonText(const nlohmann::json &j, int indent = -1);
/// A dim as JSON: an integer, or {"expr", "min", "max"}.
nlohmann::json dimJson(const Dimension &d);
/// Dims printed so far (a report prints the same dims many times): each expression's text, and
/// the streaming writer's whole object of a dim ({"expr", "min", "max"}) at a depth.
struct DimTexts {
  struct Object {
    Expr expr;
    int64_t lo, hi;
    size_t depth;
    int indent;
    bool operator==(const Object &) const = default;
  };
  struct ObjectHash {
    size_t operator()(const Object &o) const {
      size_t h = std::hash<const void *>()(o.expr);
      for (size_t v : {size_t(o.lo), size_t(o.hi), o.depth, size_t(o.indent)}) h = hashMix(h, v);
      return h;
    }
  };
  std::unordered_map<Expr, std::string> exprs;
  std::unordered_map<Object, std::string, ObjectHash> objects;
};
/// The same, printing each expression once per `texts` (with `names`, by the report's names).
nlohmann::json dimJson(const Dimension &d, DimTexts &texts, const PrintNames *names = nullptr);
class JsonWriter;
/// The same, written by a streaming writer (report/json_writer.h).
void writeDimJson(JsonWriter &w, const Dimension &d, DimTexts &texts, const PrintNames *names = nullptr);
/// `"symbols": {name: {"min": lo, "max": hi|null}}` of the graph's named symbols, streamed.
void writeSymbolsJson(JsonWriter &w, const Graph &g);
/// The same for a list of symbols and ranges.
void writeSymbolsJson(JsonWriter &w, const std::vector<std::pair<std::string, Interval>> &symbols);

/// Graph inputs and initializers are not node outputs; Constant nodes of the model are.
bool isNodeOutput(const Node &n);
/// `name: fact` for every named node output, in node order (the listing's tensor lines without
/// the padding and the `# Op` comment).
std::vector<std::string> tensorLines(const Graph &g);
/// `error: node 'y' (Concat): message` / `warning: ...` for every error and warning, in the order
/// reported (notes are left out).
std::vector<std::string> diagnosticLines(const Diagnostics &d);

} // namespace sf
