// The simplifier run over a model, and its report (simplify_report.h).
#include "shapeflow/report/simplify_report.h"

#include "shapeflow/eval/eval.h"
#include "shapeflow/eval/evaluator.h"
#include "shapeflow/onnx/writer.h"
#include "shapeflow/report/names.h"

#include <fmt/format.h>

#include <limits>
#include <ostream>

namespace sf {

GraphCensus censusOf(const Graph &g) {
  GraphCensus c;
  const OpRegistry &registry = defaultRegistry();
  auto order = g.topologicalOrder();
  std::vector<bool> shapeDerived(g.nodes.size(), false);
  for (uint32_t id : order.ok() ? *order : std::vector<uint32_t>()) {
    const Node &n = g.nodes[id];
    if (n.isConstant()) {
      bool read = !n.outputs[0].successors.empty();
      for (OutletId o : g.outputs) read = read || o == OutletId{id, 0};
      if (read && n.outputs[0].fact.constant) {
        auto bytes = n.outputs[0].fact.constant->byteSize();
        c.weightBytes += bytes.ok() ? *bytes : 0;
      }
      continue;
    }
    if (n.kind != NodeKind::Op) continue;
    ++c.nodes;
    ++c.byOp[n.domain.empty() ? n.opType : n.domain + "." + n.opType];
    // A node computing shapes: fed by a Shape or Size (directly or not), making small integer
    // tensors (a shape, a dim, an index), not the model's data.
    const OpDef *def = registry.find(n.domain, n.opType);
    bool derived = def && def->traits.metadataOnly;
    for (OutletId in : n.inputs) derived = derived || (in.valid() && shapeDerived[in.node]);
    bool small = true;
    for (const Outlet &o : n.outputs)
      small = small && o.fact.shape.rankIsStatic() && o.fact.shape.size() <= 1 &&
              (o.fact.type == ElementType::I64 || o.fact.type == ElementType::I32 || o.fact.type == ElementType::Bool);
    shapeDerived[id] = derived && small;
    if (shapeDerived[id]) ++c.shapeNodes;
  }
  return c;
}

namespace {

/// The input dims that are symbols, by input and axis.
std::vector<std::string> symbolicInputDims(const Graph &g) {
  std::vector<std::string> out;
  for (OutletId in : g.inputs) {
    const Outlet &o = g.outlet(in);
    if (!o.fact.shape.rankIsStatic()) continue;
    for (size_t i = 0; i < o.fact.shape.size(); ++i)
      if (!o.fact.shape[i].isStatic()) out.push_back(fmt::format("{}[{}]", o.name, i));
  }
  return out;
}

std::string bytesText(int64_t b) {
  if (b >= 10'000'000) return fmt::format("{:.1f} MB", double(b) / 1e6);
  if (b >= 10'000) return fmt::format("{:.1f} kB", double(b) / 1e3);
  return fmt::format("{} B", b);
}

/// Nodes of each op type the simplifier removed (before minus after).
std::map<std::string, size_t> removedByOp(const SimplifyReport &r) {
  std::map<std::string, size_t> removed;
  for (const auto &[op, n] : r.before.byOp) {
    auto it = r.after.byOp.find(op);
    size_t left = it == r.after.byOp.end() ? 0 : it->second;
    if (left < n) removed[op] = n - left;
  }
  return removed;
}

} // namespace

Result<SimplifyReport> simplifyGraph(Graph &g, const SimplifyOptions &options) {
  SimplifyReport r;
  r.before = censusOf(g);
  const auto inputsBefore = symbolicInputDims(g);
  eval::KernelEvaluator evaluator;
  rewrite::PassContext ctx{g, eval::evalRegistry(), &evaluator, options.foldLimit};
  auto passes = rewrite::simplifyPasses();
  SF_ASSIGN(r.passes, rewrite::runPasses(ctx, passes, 16));
  SF_TRY(g.verify());
  r.after = censusOf(g);
  r.inputsKept = symbolicInputDims(g) == inputsBefore;
  return r;
}

Result<void> writeSimplified(const Graph &g, std::string_view original, std::ostream &os, SimplifyReport &r,
                             std::ostream *external, const std::string &location) {
  ExprScope scope = g.enter();
  NamingOptions whole; // no derived size named: every dim written in full
  whole.minLength = whole.maxLength = std::numeric_limits<size_t>::max();
  ReportNames names = nameDerivedSizes(g, whole);
  onnx::WriteOptions o;
  o.externalData = external;
  o.externalLocation = location;
  o.names = &names.print;
  o.holdsTensor = [](const Graph &graph, OutletId out) { return holdsTensor(graph, out, defaultRegistry()); };
  auto start = os.tellp();
  SF_ASSIGN(onnx::WriteStats w, onnx::writeModel(g, original, os, o));
  r.fileBytes = int64_t(os.tellp() - start);
  r.externalBytes = w.externalBytes;
  return success();
}

nlohmann::json simplifyJson(const SimplifyReport &r) {
  auto census = [](const GraphCensus &c) {
    return nlohmann::json{{"nodes", c.nodes}, {"shape_nodes", c.shapeNodes}, {"by_op", c.byOp},
                          {"weight_bytes", c.weightBytes}};
  };
  nlohmann::json passes = nlohmann::json::object();
  for (const auto &p : r.passes) passes[p.name] = p.rewrites;
  nlohmann::json removed = removedByOp(r);
  return {{"model", r.model},         {"output", r.output},       {"before", census(r.before)},
          {"after", census(r.after)}, {"passes", passes},         {"removed_by_op", removed},
          {"file_bytes", r.fileBytes}, {"external_bytes", r.externalBytes}, {"inputs_kept", r.inputsKept},
          {"numerics_changed", false}};
}

void printSimplify(const SimplifyReport &r, std::ostream &os) {
  auto pct = [](size_t a, size_t b) { return a == 0 ? 0.0 : 100.0 * (double(a) - double(b)) / double(a); };
  os << fmt::format("model: {}\noutput: {}\n", r.model, r.output);
  os << fmt::format("nodes: {} -> {} ({:.1f}% fewer)\n", r.before.nodes, r.after.nodes, pct(r.before.nodes, r.after.nodes));
  os << fmt::format("nodes computing shapes: {} -> {}\n", r.before.shapeNodes, r.after.shapeNodes);
  os << fmt::format("weights: {} -> {}\n", bytesText(r.before.weightBytes), bytesText(r.after.weightBytes));
  os << "passes:";
  for (const auto &p : r.passes) os << fmt::format(" {} {},", p.name, p.rewrites);
  os << "\n";
  std::string removed;
  for (const auto &[op, n] : removedByOp(r)) removed += fmt::format("{}{} {}", removed.empty() ? "" : ", ", op, n);
  os << "removed: " << (removed.empty() ? std::string("nothing") : removed) << "\n";
  if (!r.inputsKept) os << "note: an input dim that was symbolic is not any more\n";
}

} // namespace sf
