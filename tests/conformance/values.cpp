// Value conformance of the executor: every ONNX backend node test (Debian's
// libonnx-testdata: model.onnx with test_data_set_N/{input,output}_K.pb) run by `eval::run` on
// its inputs and its outputs compared with the expected ones: same element type and shape, and
// |actual - expected| <= atol + rtol * |expected| element-wise for floats (rtol 1e-3, atol 1e-7,
// ONNX's backend defaults, atol widened by a millionth of the output's largest magnitude: float32
// rounding in sums of large terms, a DFT's, leaves small elements off by more than their size;
// NaN matches NaN), exact for integers and bools.
//
// usage: value_conformance [--data DIR]... [--list] [--max-wrong N] [--min-pass N]
//   (default: the node, simple, pytorch-converted and pytorch-operator suites)
//   Prints the counts (pass, wrong values, errors by kind, skipped) and every test that ran and
//   did not pass; exit 1 when more than --max-wrong tests computed wrong values or shapes, or
//   fewer than --min-pass passed; 77 when no test data is installed.
#include "shapeflow/eval/eval.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "test_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

namespace fs = std::filesystem;
using namespace sf;

namespace {

enum class Verdict { Pass, Wrong, NoKernel, Error, Skipped };

struct Outcome {
  Verdict verdict;
  std::string why;
};

bool close(double a, double e, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (std::isinf(e)) return a == e;
  return std::abs(a - e) <= atol + rtol * std::abs(e);
}

/// A test data value as a run-time value: a tensor, a sequence, or an empty optional.
Result<Value> toValue(const conformance::DataValue &v, const onnx::TypeView *declared) {
  using Kind = conformance::DataValue::Kind;
  auto elem = conformance::elementTypeOf(conformance::declaredElemType(declared));
  if (v.kind == Kind::EmptyOptional) return Value::none(elem);
  std::vector<std::shared_ptr<const Tensor>> tensors;
  for (const auto &t : v.tensors) {
    SF_ASSIGN(Tensor x, conformance::toTensor(t, size_t(1) << 28));
    tensors.push_back(std::make_shared<const Tensor>(std::move(x)));
  }
  if (v.kind == Kind::Sequence) return Value::sequence(tensors.empty() ? elem : tensors[0]->type(), std::move(tensors));
  if (tensors.size() != 1) return errorf("{} tensors where one was expected", tensors.size());
  return Value(tensors[0]);
}

/// Why `a` differs from the expected `e` (type, shape, or the first element out of tolerance).
std::optional<std::string> compare(const Tensor &a, const Tensor &e) {
  if (a.type() != e.type()) return fmt::format(" is {}, expected {}", shortName(a.type()), shortName(e.type()));
  if (a.shape() != e.shape())
    return fmt::format(" has shape [{}], expected [{}]", fmt::join(a.shape(), ","), fmt::join(e.shape(), ","));
  if (a.isString() || isComplex(a.type())) {
    if (!(a == e)) return std::string(" differs");
    return std::nullopt;
  }
  auto x = a.toDoubles(size_t(a.elementCount())), y = e.toDoubles(size_t(e.elementCount()));
  if (!x.ok() || !y.ok()) return std::string(": cannot read elements");
  bool exact = !isFloat(a.type()) && !isNarrowFloat(a.type());
  double largest = 0;
  for (double v : *y)
    if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
  for (size_t i = 0; i < x->size(); ++i)
    if (exact ? (*x)[i] != (*y)[i] : !close((*x)[i], (*y)[i], 1e-3, 1e-7 + 1e-6 * largest))
      return fmt::format(" element {} is {}, expected {}", i, (*x)[i], (*y)[i]);
  return std::nullopt;
}

Outcome runTest(const fs::path &dir) {
  Diagnostics diags;
  auto g = onnx::loadModelFile((dir / "model.onnx").string(), diags, onnx::ImportOptions{.decodeLarge = true});
  if (!g.ok()) return {Verdict::Error, "load: " + g.error().message};
  ExprScope scope = g->enter();
  fs::path data = dir / "test_data_set_0";
  // The declared types say which data files hold sequences and optionals.
  auto model = onnx::readModelFile((dir / "model.onnx").string());
  if (!model.ok()) return {Verdict::Error, "read: " + model.error().message};
  auto declaredInputs = conformance::formalInputs(model->graph);
  std::vector<OutletId> feedable;
  for (OutletId o : g->inputs)
    if (!(g->fact(o).constant && g->fact(o).constant->hasData())) feedable.push_back(o);
  std::map<std::string, Value> inputs;
  auto inFiles = conformance::dataFiles(data, "input");
  std::vector<std::string> notes;
  for (size_t k = 0; k < inFiles.size(); ++k) {
    const onnx::TypeView *declared = k < declaredInputs.size() ? &declaredInputs[k]->type : nullptr;
    auto v = conformance::readDataValue(inFiles[k], declared);
    if (!v.ok()) return {Verdict::Skipped, "input " + std::to_string(k) + ": " + v.error().message};
    conformance::fixBfloat16(*v, declared, "input", notes);
    auto value = toValue(*v, declared);
    if (!value.ok()) return {Verdict::Skipped, "input " + std::to_string(k) + ": " + value.error().message};
    std::string name = v->name;
    auto named = std::find_if(feedable.begin(), feedable.end(), [&](OutletId o) { return g->outlet(o).name == name; });
    if (name.empty() || named == feedable.end()) {
      if (k >= feedable.size()) return {Verdict::Skipped, "more input files than inputs"};
      named = feedable.begin() + long(k);
      name = g->outlet(*named).name;
    }
    // What the test runs with is its data: a declared shape it contradicts gives way (as in the
    // inference conformance), and a named dim it sets to 0 admits 0.
    conformance::admitZeroDims(*g, name, declared, *v, notes);
    g->outlet(*named).fact.shape = g->symbols.resolve(g->outlet(*named).fact.shape);
    if (conformance::contradictsDeclared(declared, *v) && value->isTensor())
      g->outlet(*named).fact.shape = PartialShape((*value)->shape());
    inputs[name] = std::move(*value);
  }
  InferOptions io;
  inferGraph(*g, diags, io);
  eval::RunOptions ro;
  ro.maxMemory = int64_t(2) << 30;
  auto r = eval::run(*g, inputs, ro);
  if (!r.ok()) {
    bool noKernel = r.error().message.find("no kernel for op") != std::string::npos;
    return {noKernel ? Verdict::NoKernel : Verdict::Error, r.error().message};
  }
  auto outFiles = conformance::dataFiles(data, "output");
  if (outFiles.size() != r->outputs.size())
    return {Verdict::Wrong, std::to_string(outFiles.size()) + " expected outputs, " +
                                std::to_string(r->outputs.size()) + " computed"};
  for (size_t k = 0; k < outFiles.size(); ++k) {
    const onnx::TypeView *declared = k < model->graph.outputs.size() ? &model->graph.outputs[k].type : nullptr;
    auto v = conformance::readDataValue(outFiles[k], declared);
    if (!v.ok()) return {Verdict::Skipped, "expected output " + std::to_string(k) + ": " + v.error().message};
    conformance::fixBfloat16(*v, declared, "output", notes);
    auto e = toValue(*v, declared);
    if (!e.ok()) return {Verdict::Skipped, "expected output " + std::to_string(k) + ": " + e.error().message};
    const Value &a = r->outputs[k];
    std::string what = "output " + std::to_string(k) + " (" + r->outputNames[k] + ")";
    if (!a) return {Verdict::Wrong, what + " not computed"};
    if (a.isNone() || e->isNone()) {
      if (a.isNone() != e->isNone()) return {Verdict::Wrong, what + " is " + a.describe() + ", expected " + e->describe()};
      continue;
    }
    if (a.isSequence() != e->isSequence())
      return {Verdict::Wrong, what + " is " + a.describe() + ", expected " + e->describe()};
    if (a.isTensor()) {
      if (auto why = compare(*a, **e)) return {Verdict::Wrong, what + *why};
      continue;
    }
    if (a.elements().size() != e->elements().size())
      return {Verdict::Wrong, what + " is " + a.describe() + ", expected " + e->describe()};
    for (size_t i = 0; i < a.elements().size(); ++i)
      if (auto why = compare(*a.elements()[i], *e->elements()[i]))
        return {Verdict::Wrong, what + fmt::format(" element {}", i) + *why};
  }
  return {Verdict::Pass, ""};
}

} // namespace

int main(int argc, char **argv) {
  // The four suites of the backend tests (1072 tests on Debian bookworm); --data replaces them.
  std::vector<fs::path> roots;
  bool list = false;
  long maxWrong = -1, minPass = -1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--data") && i + 1 < argc) roots.push_back(argv[++i]);
    else if (!std::strcmp(argv[i], "--list")) list = true;
    else if (!std::strcmp(argv[i], "--max-wrong") && i + 1 < argc) maxWrong = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--min-pass") && i + 1 < argc) minPass = std::atol(argv[++i]);
  }
  if (roots.empty())
    for (const char *suite : {"node", "simple", "pytorch-converted", "pytorch-operator"})
      roots.push_back(fs::path("/usr/share/libonnx-testdata/data") / suite);
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const fs::path &root : roots) {
    if (!fs::is_directory(root, ec)) continue;
    for (const auto &e : fs::directory_iterator(root))
      if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
  }
  if (dirs.empty()) {
    std::printf("no test data\n");
    return 77;
  }
  std::sort(dirs.begin(), dirs.end());
  std::map<Verdict, size_t> counts;
  std::map<std::string, size_t> missing; // op -> tests
  std::vector<std::string> lines;
  for (const fs::path &d : dirs) {
    Outcome o = runTest(d);
    counts[o.verdict]++;
    std::string name = d.parent_path().filename().string() + "/" + d.filename().string();
    if (o.verdict == Verdict::NoKernel) {
      size_t at = o.why.find("no kernel for op '");
      std::string op = o.why.substr(at + 18, o.why.find('\'', at + 18) - at - 18);
      missing[op]++;
    }
    if (o.verdict == Verdict::Wrong || o.verdict == Verdict::Error ||
        (list && o.verdict != Verdict::Pass))
      lines.push_back(fmt::format("{:6} {}: {}", o.verdict == Verdict::Wrong ? "WRONG" :
                                                 o.verdict == Verdict::Error ? "error" :
                                                 o.verdict == Verdict::NoKernel ? "nokern" : "skip",
                                  name, o.why.substr(0, 240)));
  }
  for (const std::string &l : lines) std::printf("%s\n", l.c_str());
  std::string ops;
  std::vector<std::pair<size_t, std::string>> byCount;
  for (const auto &[op, n] : missing) byCount.push_back({n, op});
  std::sort(byCount.rbegin(), byCount.rend());
  for (const auto &[n, op] : byCount) ops += fmt::format("{}{} ({})", ops.empty() ? "" : ", ", op, n);
  std::printf("ops without a kernel, by tests: %s\n", ops.c_str());
  std::printf("value conformance: %zu tests: %zu pass, %zu wrong, %zu error, %zu no kernel, %zu skipped\n",
              dirs.size(), counts[Verdict::Pass], counts[Verdict::Wrong], counts[Verdict::Error],
              counts[Verdict::NoKernel], counts[Verdict::Skipped]);
  if (maxWrong >= 0 && long(counts[Verdict::Wrong]) > maxWrong) return 1;
  if (minPass >= 0 && long(counts[Verdict::Pass]) < minPass) return 1;
  return 0;
}
