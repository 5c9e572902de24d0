// Property: the symbolic counts of a model, evaluated at a binding of its input
// symbols, equal the counts of the concrete run at that binding, node by node and in total.
// Checked on every case of the golden files that infers without errors, and on the models of
// the dev corpus when SF_DEV_MODELS names its folder (.ci/run does, after exporting it).
//
// The concrete run loads the model again and gives every input its dims evaluated at the binding
// (`--input x=2,3,224,192`). Symbols a run makes for data-dependent sizes exist in both runs
// under the same names and take, in both, their lowest value in the concrete run. A count that cannot be evaluated
// (its expression has anonymous parts, or it is unknown) must at least contain the concrete
// value within its bounds.
#include "shapeflow/cost/stats.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/onnx/import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>

namespace fs = std::filesystem;

namespace sf {
namespace {

using Binding = std::map<std::string, int64_t>;
using Loader = std::function<Result<Graph>()>;

struct Run {
  std::unique_ptr<Graph> graph;
  Diagnostics diags;
  ModelStats stats;
};

/// The value of `d` with the binding's symbols set and every other symbol at its lowest value.
std::optional<int64_t> valueAt(const Dimension &d, const Binding &b) {
  if (d.isStatic()) return d.length();
  if (!d.expr() || d.expr()->hasAnonymous) return std::nullopt;
  auto v = evaluate(d.expr(), [&](SymbolId s) -> std::optional<int64_t> {
    const SymbolInfo &info = symbolInfo(s);
    if (auto it = b.find(info.name); it != b.end()) return it->second;
    if (info.range.lo >= 0) return info.range.lo;
    return std::nullopt;
  });
  if (!v.ok()) return std::nullopt;
  return *v;
}

/// Loads, applies `inputs`, infers and counts.
std::unique_ptr<Run> runWith(const Loader &load, const std::vector<InputShape> &inputs,
                             std::string &err) {
  auto run = std::make_unique<Run>();
  auto g = load();
  if (!g.ok()) {
    err = "load: " + g.error().message;
    return nullptr;
  }
  run->graph = std::make_unique<Graph>(std::move(*g));
  InferOptions options;
  options.inputs = inputs;
  if (auto applied = applyInputs(*run->graph, options); !applied.ok()) {
    err = "inputs: " + applied.error().message;
    return nullptr;
  }
  inferGraph(*run->graph, run->diags, options);
  auto stats = computeStats(*run->graph);
  if (!stats.ok()) {
    err = "stats: " + stats.error().message;
    return nullptr;
  }
  run->stats = std::move(*stats);
  return run;
}

/// The input symbols of a run (in the order the inputs name them) and a binding of them: 224,
/// 192, 160, ... (distinct, so that a count swapping two sizes shows), each clamped into its
/// range. A symbol that inference found equal to an
/// expression of the others (a mask as long as the past and the new tokens: L = P + S) takes
/// that expression's value.
Binding bindingFor(const Graph &g) {
  ExprScope scope = g.enter();
  std::vector<std::pair<SymbolId, std::string>> symbols;
  for (OutletId in : g.inputs) {
    const Fact &f = g.fact(in);
    if (!f.shape.rankIsStatic()) continue;
    for (const Dimension &d : f.shape.dims())
      if (d.expr() && !d.expr()->hasAnonymous)
        for (SymbolId s : symbolsOf(d.expr()))
          if (std::find_if(symbols.begin(), symbols.end(),
                           [s](const auto &p) { return p.first == s; }) == symbols.end())
            symbols.push_back({s, symbolInfo(s).name});
  }
  Binding b;
  int64_t next = 224;
  std::vector<std::pair<std::string, Expr>> derived;
  for (const auto &[id, name] : symbols) {
    Expr to = g.symbols.resolveSymbol(id);
    if (to != symbol(id)) {
      derived.push_back({name, to});
      continue;
    }
    int64_t v = next;
    next = next > 64 ? next - 32 : 224;
    const Interval &r = symbolInfo(id).range;
    v = std::max(v, r.lo);
    if (r.hi != kInf) v = std::min(v, r.hi);
    b[name] = v;
  }
  for (const auto &[name, e] : derived) {
    auto v = evaluate(e, [&](SymbolId s) -> std::optional<int64_t> {
      auto it = b.find(symbolInfo(s).name);
      return it == b.end() ? std::nullopt : std::optional<int64_t>(it->second);
    });
    if (v.ok()) b[name] = *v;
  }
  return b;
}

/// `--input` shapes of every graph input evaluated at `b`; false when a dim cannot be.
bool concreteInputs(const Graph &g, const Binding &b, std::vector<InputShape> &out) {
  ExprScope scope = g.enter();
  for (OutletId in : g.inputs) {
    const Outlet &o = g.outlet(in);
    if (!o.fact.shape.rankIsStatic() || o.name.empty()) continue;
    std::string dims;
    for (size_t i = 0; i < o.fact.shape.size(); ++i) {
      auto v = valueAt(o.fact.shape[i], b);
      if (!v) return false;
      dims += (i ? "," : "") + std::to_string(*v);
    }
    out.push_back({o.name, o.fact.shape.size() == 0 ? "[]" : dims});
  }
  return true;
}

struct Checker {
  const Run &sym, &con;
  const Binding &binding;
  std::string where;
  int mismatches = 0;
  size_t compared = 0, bounded = 0;

  void check(const std::string &what, const Dimension &s, const Dimension &c) {
    std::optional<int64_t> cv, sv;
    {
      ExprScope scope = con.graph->enter();
      cv = valueAt(c, binding);
    }
    ExprScope scope = sym.graph->enter();
    sv = valueAt(s, binding);
    if (!cv) return; // the concrete run does not know it either
    if (sv) {
      ++compared;
      if (*sv != *cv && mismatches++ < 10)
        ADD_FAILURE() << where << ": " << what << ": symbolic " << s.toString() << " is " << *sv
                      << " at the binding, the concrete run counts " << *cv;
      return;
    }
    ++bounded;
    bool inside = *cv >= s.minLength() && (!s.hasUpperBound() || *cv <= s.maxLength());
    if (!inside && mismatches++ < 10)
      ADD_FAILURE() << where << ": " << what << ": the concrete count " << *cv
                    << " is outside the symbolic bounds " << s.toString();
  }

  void counts(const std::string &what, const Counts &s, const Counts &c) {
    check(what + " macs", s.macs, c.macs);
    check(what + " flops", s.flops, c.flops);
    for (size_t k = 0; k < kFlopKinds; ++k)
      check(what + " flops." + toString(FlopKind(k)), s.flopsByKind[k], c.flopsByKind[k]);
    check(what + " read_bytes", s.readBytes, c.readBytes);
    check(what + " write_bytes", s.writeBytes, c.writeBytes);
  }

  void all() {
    const ModelStats &a = sym.stats, &b = con.stats;
    ASSERT_EQ(a.nodes.size(), b.nodes.size()) << where;
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      const NodeStats &x = a.nodes[i], &y = b.nodes[i];
      ASSERT_EQ(x.name, y.name) << where;
      ASSERT_EQ(x.op, y.op) << where;
      std::string w = "node '" + x.name + "' (" + x.op + ")";
      counts(w, x.counts, y.counts);
      check(w + " in_elems", x.inElems, y.inElems);
      check(w + " out_elems", x.outElems, y.outElems);
      check(w + " in_bytes", x.inBytes, y.inBytes);
      check(w + " out_bytes", x.outBytes, y.outBytes);
      check(w + " runs", x.runs, y.runs);
      EXPECT_EQ(x.paramElems, y.paramElems) << where << ": " << w;
    }
    counts("total", a.total, b.total);
    EXPECT_EQ(a.params, b.params) << where;
    EXPECT_EQ(a.paramBytes, b.paramBytes) << where;
    ASSERT_EQ(a.byOpType.size(), b.byOpType.size()) << where;
    for (const auto &[op, t] : a.byOpType) {
      auto it = b.byOpType.find(op);
      ASSERT_NE(it, b.byOpType.end()) << where << ": " << op;
      EXPECT_EQ(t.count, it->second.count) << where << ": " << op;
      counts("op " + op, t.counts, it->second.counts);
    }
  }
};

enum class Outcome { Checked, SkippedErrors, SkippedNoBinding, SkippedConcreteErrors };

/// Bindings to try after `first`, for models whose sizes are related (a mask as long as the
/// past and the new tokens together) so that most bindings are refused: small values from a
/// fixed pseudo-random sequence, each clamped into its symbol's range.
std::vector<Binding> otherBindings(const Graph &g, const Binding &first, size_t count) {
  ExprScope scope = g.enter();
  static const int64_t kValues[] = {1, 2, 3, 4, 5, 8, 16, 32};
  std::vector<Binding> out;
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < count; ++i) {
    Binding b;
    for (const auto &[name, v] : first) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      int64_t x = kValues[(state >> 33) % 8];
      if (auto id = g.symbols.find(name)) {
        const Interval &range = symbolInfo(*id).range;
        x = std::max(x, range.lo);
        if (range.hi != kInf) x = std::min(x, range.hi);
      }
      b[name] = x;
    }
    out.push_back(std::move(b));
  }
  return out;
}

/// Runs the model symbolically and at a binding it accepts, and compares; what happened.
Outcome checkModel(const Loader &load, const std::string &where, size_t *compared = nullptr,
                   std::string *boundAt = nullptr) {
  std::string err;
  auto sym = runWith(load, {}, err);
  if (!sym) {
    ADD_FAILURE() << where << ": " << err;
    return Outcome::SkippedErrors;
  }
  if (sym->diags.hasErrors()) return Outcome::SkippedErrors;
  Binding first = bindingFor(*sym->graph);
  std::vector<Binding> bindings{first};
  for (Binding &b : otherBindings(*sym->graph, first, first.empty() ? 0 : 200))
    bindings.push_back(std::move(b));
  for (const Binding &b : bindings) {
    std::vector<InputShape> inputs;
    if (!concreteInputs(*sym->graph, b, inputs)) return Outcome::SkippedNoBinding;
    auto con = runWith(load, inputs, err);
    if (!con) {
      ADD_FAILURE() << where << ": " << err;
      return Outcome::SkippedErrors;
    }
    if (con->diags.hasErrors()) continue; // sizes the model refuses
    // Symbols the runs made for data-dependent sizes: their lowest value in the concrete run
    // (whose ranges are the tighter ones) in both.
    Binding full = b;
    {
      ExprScope scope = con->graph->enter();
      for (const auto &[name, range] : con->graph->symbols.namedSymbols())
        if (!full.count(name) && range.lo >= 0) full[name] = range.lo;
    }
    std::string at;
    for (const auto &[name, v] : b)
      at += (at.empty() ? "" : ", ") + name + "=" + std::to_string(v);
    Checker c{*sym, *con, full, where + " at {" + at + "}"};
    c.all();
    if (compared) *compared = c.compared + c.bounded;
    if (boundAt) *boundAt = at;
    return Outcome::Checked;
  }
  return Outcome::SkippedConcreteErrors;
}

fs::path sourceDir() {
  if (const char *src = std::getenv("SF_SOURCE_DIR"); src && *src) return src;
  return SF_SOURCE_DIR_DEFAULT;
}

/// The cases of a golden file (the golden runner's format: cases split by `// -----`, comment
/// lines blanked).
std::vector<std::string> goldenCases(const fs::path &file) {
  std::ifstream in(file);
  std::vector<std::string> cases(1);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("// -----", 0) == 0) {
      cases.emplace_back();
      continue;
    }
    cases.back() += (line.rfind("//", 0) == 0 ? std::string() : line) + "\n";
  }
  return cases;
}

TEST(StatsProperty, GoldenGraphsAtABindingMatchTheConcreteRun) {
  fs::path dir = sourceDir() / "tests" / "golden";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  size_t checked = 0, skipped = 0;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".txt" || entry.path().filename() == "CMakeLists.txt")
      continue;
    auto cases = goldenCases(entry.path());
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::string &text = cases[i];
      if (text.find("graph ") == std::string::npos) continue;
      Loader load = [&text]() { return parseGraph(text); };
      if (!parseGraph(text).ok()) continue; // the runner reports graphs that do not parse
      std::string where = fs::relative(entry.path(), dir).string() + " case " + std::to_string(i);
      Outcome o = checkModel(load, where);
      ++(o == Outcome::Checked ? checked : skipped);
      if (HasFatalFailure()) return;
    }
  }
  std::cout << "[ STATS  ] " << checked << " golden cases checked, " << skipped
            << " skipped (errors, or inputs not evaluable at a binding)\n";
  EXPECT_GE(checked, 150u) << "most golden cases infer without errors and bind";
}

TEST(StatsProperty, DevCorpusAtABindingMatchesTheConcreteRun) {
  const char *dir = std::getenv("SF_DEV_MODELS");
  if (!dir || !*dir) GTEST_SKIP() << "SF_DEV_MODELS is not set (the dev corpus folder)";
  size_t models = 0;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    std::string path = entry.path().string();
    Loader load = [path]() {
      Diagnostics d;
      return onnx::loadModelFile(path, d);
    };
    size_t compared = 0;
    std::string at;
    Outcome o = checkModel(load, entry.path().filename().string(), &compared, &at);
    const char *what = o == Outcome::Checked                 ? "checked"
                       : o == Outcome::SkippedNoBinding      ? "skipped (no binding)"
                       : o == Outcome::SkippedConcreteErrors ? "skipped (errors at the binding)"
                                                             : "skipped (errors)";
    std::cout << "[ STATS  ] " << entry.path().filename().string() << ": " << what << ", "
              << compared << " counts compared at {" << at << "}\n";
    if (o == Outcome::Checked) ++models;
    EXPECT_EQ(o, Outcome::Checked) << path;
  }
  EXPECT_GT(models, 0u);
}

} // namespace
} // namespace sf
