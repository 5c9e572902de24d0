// What the subcommands of `shapeflow` share: how a model is given and loaded (MODEL, --input,
// --dim, --value, --strict, --backward), one grammar for sizes at a binding (--at), how errors
// end the command (exit status 2: a usage or I/O error; 1: the model has errors or a check
// failed; 0: clean), and one registration function per subcommand, each in its own file.
#pragma once

#include "shapeflow/report/model_queries.h"

#include "shapeflow/infer/domain.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/support/diagnostic.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sf::cli {

/// Prints `shapeflow: MESSAGE` and returns 2 (a usage or I/O error).
int fail(const std::string &message);
/// Prints the errors among `diags` (`error: ...`) to stderr.
void printErrors(const Diagnostics &diags);
/// A later stage (lowering, planning) could not run on a model whose inference found errors:
/// the errors are what the user must see, the stage's own complaint only after them. Returns 1.
int failAfterErrors(const Diagnostics &diags, const std::string &stage, const std::string &message);

/// What every subcommand is given about the model.
struct ModelArgs {
  std::string path;
  std::vector<std::string> inputs, dims, values;
  bool strict = false;
  std::string backward = "auto";
  /// MODEL and the options that shape the inference (`withShapes`: --input and --value too;
  /// `run` and `check` take sizes only from the data and --dim).
  void add(CLI::App *cmd, bool withShapes = true);
  Result<InferOptions> options() const;
};

/// A loaded and inferred model.
struct Inferred {
  Graph graph;
  Diagnostics diags;
  InferStats stats;
};

/// Loads, applies the inputs and infers; an error (exit status 2) when the model cannot be read
/// or the options do not fit it. `import` decides what the importer decodes (every constant's
/// elements, to run it); `beforeInference` sees the graph with the options applied.
Result<std::unique_ptr<Inferred>> loadAndInfer(const ModelArgs &a, const onnx::ImportOptions &import = {},
                                               const std::function<void(Graph &)> &beforeInference = {});

/// The model of MODEL loaded afresh for each inference (model_queries.h).
/// Time spent in a command's phases (`infer --timings`), summed over the model's loads.
struct PhaseTimes {
  double loadMs = 0, inferMs = 0;
  int loads = 0;
};
InferModel fileModel(const std::string &path, const onnx::ImportOptions &import = {}, PhaseTimes *times = nullptr);
/// Milliseconds on a monotonic clock.
double nowMs();

/// `model` with `--dim SYM=0..` for each size some binding sets to 0 and no --dim ranges: the
/// model inferred with that size from 0 (an empty KV cache).
ModelArgs withEmptySizes(ModelArgs model, const std::vector<Binding> &bindings);

/// Loads and infers with `bindings` in mind: a size some binding sets to 0 is inferred from 0
/// (withEmptySizes), and a binding that breaks the model's contract (a size outside its range,
/// a requirement it fails: `L == S + P` given 1 and 1000) is an error naming the requirement
/// (`flag` says which option gave it), never silently evaluated.
Result<std::unique_ptr<Inferred>> loadForBindings(const ModelArgs &a, const std::vector<Binding> &bindings,
                                                  const char *flag, Contract *contract = nullptr);

/// `--at SYM=V[,SYM=V...]`: one binding of sizes per flag.
Result<Binding> parseBinding(const std::string &spec);
/// Every `--at` given, merged into one binding (a later flag's value for a symbol wins).
Result<Binding> mergedBindings(const std::vector<std::string> &specs);

/// A subcommand: registered on the app by its add function, run when the command line named it.
struct Command {
  CLI::App *app = nullptr;
  std::function<int()> run;
};
Command addInfer(CLI::App &app);
Command addContract(CLI::App &app);
Command addWhy(CLI::App &app);
Command addStats(CLI::App &app);
Command addLower(CLI::App &app);
Command addPlan(CLI::App &app);
Command addCheckPlan(CLI::App &app);
Command addRun(CLI::App &app);
Command addCheck(CLI::App &app);
Command addOps(CLI::App &app);
Command addMemory(CLI::App &app);
Command addSimplify(CLI::App &app);

} // namespace sf::cli
