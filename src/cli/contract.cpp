// `shapeflow contract` (the input sizes a model accepts) and `shapeflow why` (how a dim was
// derived).
#include "common.h"

#include "shapeflow/report/contract.h"
#include "shapeflow/report/why.h"

#include <iostream>

namespace sf::cli {

Command addContract(CLI::App &app) {
  struct Args {
    ModelArgs model;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App *cmd = app.add_subcommand(
      "contract", "the input sizes the model accepts (ranges, equalities, declared dims) and the "
                  "node behind each requirement");
  args->model.add(cmd);
  cmd->add_flag("--json", args->json, "print one JSON object");
  // Exit 1 when no sizes are accepted (inference fails at the sizes given or declared).
  return {cmd, [args]() -> int {
            // --strict does not apply: the contract is about sizes, and an assumption promoted
            // to an error would read as "no size is accepted". Its assumptions are listed with
            // it instead.
            auto options = args->model.options();
            if (!options.ok()) return fail(options.error().message);
            auto m = inferWithContract(fileModel(args->model.path), *options);
            if (!m.ok()) return fail(m.error().message);
            const Contract &c = m->contract;
            if (args->json) std::cout << contractJson(c, args->model.path).dump(1) << "\n";
            else printContract(c, args->model.path, std::cout);
            return c.errors.empty() ? 0 : 1;
          }};
}

Command addWhy(CLI::App &app) {
  struct Args {
    ModelArgs model;
    std::string spec;
  };
  auto args = std::make_shared<Args>();
  CLI::App *cmd = app.add_subcommand(
      "why", "how a tensor's dim was derived, op by op, back to the inputs (TENSOR or TENSOR[AXIS])");
  args->model.add(cmd);
  cmd->add_option("TENSOR", args->spec, "a tensor name, with [AXIS] for one dim")->required();
  // Exit 2 for a tensor or axis that does not exist.
  return {cmd, [args]() -> int {
            auto m = loadAndInfer(args->model);
            if (!m.ok()) return fail(m.error().message);
            auto r = explainDim((*m)->graph, (*m)->diags, args->spec, std::cout);
            if (!r.ok()) return fail(r.error().message);
            return 0;
          }};
}

} // namespace sf::cli
